// The CUDA plugin's optional collectives group (oar_collectives_api, see
// docs/abi.md) on NCCL. CUDA-only: the HIP build would need RCCL instead.
//
// Conventions this implementation fixes where the ABI leaves them open:
//  - count is in elements of dtype; for all_gather and reduce_scatter it is
//    the per-rank block (NCCL's sendcount / recvcount): all_gather's dst and
//    reduce_scatter's src hold count * world_size elements, rank r's block
//    starting at element r * count.
//  - broadcast reads src on the root only (it may be NULL elsewhere).
//  - bool moves as one byte per element; reductions on bool are refused.
//  - every call with a stream is ordered on that stream (NULL: the device's
//    default stream) and returns once the work is enqueued.
//  - comm_init, comm_init_ranks (1.3) and comm_destroy wait for peers at most
//    OAR_CUDA_NCCL_TIMEOUT_MS (comm_init_ranks: its timeout_ms when > 0), then
//    abort, release and return OAR_STATUS_TIMEOUT; an operation that cannot
//    be enqueued within it returns OAR_STATUS_TIMEOUT and leaves the
//    communicator for comm_abort.
//  - comm_init_ranks and p2p_batch (1.3) are each one NCCL group: the ranks
//    one thread hosts join together; the sends and receives of an exchange
//    progress together.
//  - comm_destroy waits for the communicator's outstanding work (and for every
//    peer to reach it); comm_abort(timeout_ms) waits at most timeout_ms
//    (<= 0: not at all), then aborts. Both release the handle whatever they
//    return; comm_abort returns OAR_STATUS_TIMEOUT when it gave up on
//    outstanding work, and the NCCL error when the communicator had failed.
//  - a communicator is used from one thread at a time (as in NCCL).
#pragma once

#include "oar/abi/oar_plugin.h"

namespace oar_gpu {

// The static table for oar_plugin_api.collectives; the plugin also sets
// OAR_CAPABILITY_COLLECTIVES on its devices.
const oar_collectives_api* nccl_collectives();

}  // namespace oar_gpu
