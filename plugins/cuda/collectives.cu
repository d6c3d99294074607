// The collectives group on NCCL (see collectives.h for the conventions).
//
// Communicators are created non-blocking (ncclConfig_t.blocking = 0) so that
// comm_abort can give up on a peer that never answers: with a blocking
// communicator a rank stuck inside NCCL could not be bounded by a timeout.
// The price is that any NCCL call may return ncclInProgress, after which the
// communicator must be polled (ncclCommGetAsyncError) until it settles before
// the next NCCL call or any other work on the stream; every entry here waits
// for that, so callers see the ordinary stream-ordered semantics.
//
// To know whether work is still outstanding when comm_abort is called, each
// enqueued operation is followed by an event on its stream.
#include "vendor_loader.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "collectives.h"
#include "gpu_device.h"
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

namespace sdk = oar::sdk;

static_assert(sizeof(ncclUniqueId) == OAR_COMM_UNIQUE_ID_BYTES,
              "oar_comm_unique_id must hold exactly one ncclUniqueId");
static_assert(sizeof(oar_comm_unique_id) == sizeof(ncclUniqueId), "unique id sizes differ");

// ---- errors ----

const char* dtype_name(oar_dtype_t dt) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  return dt >= 0 && dt < OAR_DTYPE_COUNT ? names[dt] : "invalid";
}

oar_status_t status_for(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return OAR_STATUS_OK;
    case ncclInvalidArgument:
    case ncclInvalidUsage: return OAR_STATUS_INVALID_ARGUMENT;
    case ncclInternalError: return OAR_STATUS_INTERNAL;
    case ncclInProgress: return OAR_STATUS_NOT_READY;
    default: return OAR_STATUS_DEVICE_ERROR;  // CUDA, system/network and remote-peer failures
  }
}

// "<what> failed: <NCCL's name for r> (<NCCL's last error message>)". The last
// message is read before anything can free the communicator.
std::string nccl_message(ncclResult_t r, ncclComm_t comm, const std::string& what) {
  std::string msg = what + " failed: " + nccl().GetErrorString(r);
  const char* last = nccl().GetLastError(comm);
  if (last != nullptr && last[0] != '\0') msg += std::string(" (") + last + ")";
  return msg;
}

[[noreturn]] void fail_nccl(ncclResult_t r, ncclComm_t comm, const std::string& what) {
  sdk::fail(status_for(r), nccl_message(r, comm, what));
}

void report(oar_status_t code, const char* message) {
  if (host() != nullptr && host()->set_error != nullptr) host()->set_error(code, message);
}

// Runs an entry body, turning anything thrown into status + message: nothing
// may cross the C ABI.
template <class Body>
oar_status_t guarded(Body&& body) {
  try {
    body();
    return OAR_STATUS_OK;
  } catch (const sdk::KernelError& e) {
    report(e.code, e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    report(OAR_STATUS_OUT_OF_MEMORY, "host memory exhausted in a collectives call");
    return OAR_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    report(OAR_STATUS_INTERNAL, e.what());
    return OAR_STATUS_INTERNAL;
  }
}

// ---- polling a non-blocking communicator ----

// Sleeps a little longer each round: short waits stay cheap, long ones idle.
class Backoff {
 public:
  void wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = std::min(us_ * 2, 1000);
  }

 private:
  int us_ = 1;
};

using Clock = std::chrono::steady_clock;

// When a wait of `timeout_ms` (<= 0: the plugin's OAR_CUDA_NCCL_TIMEOUT_MS)
// starting now gives up. Capped at ten years so "forever" cannot overflow.
Clock::time_point deadline_after(int64_t timeout_ms) {
  if (timeout_ms <= 0) timeout_ms = nccl_timeout_ms();
  timeout_ms = std::clamp<int64_t>(timeout_ms, 1, int64_t(10) * 365 * 24 * 3600 * 1000);
  return Clock::now() + std::chrono::milliseconds(timeout_ms);
}

int64_t ms_until(Clock::time_point deadline, Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start).count();
}

// The communicator's state once `r` (a call's result) has settled:
// ncclSuccess or the error; still ncclInProgress when `deadline` passed first.
ncclResult_t settle(ncclComm_t comm, ncclResult_t r, Clock::time_point deadline) {
  Backoff backoff;
  while (r == ncclInProgress) {
    if (Clock::now() >= deadline) return ncclInProgress;
    backoff.wait();
    ncclResult_t q = nccl().CommGetAsyncError(comm, &r);
    if (q != ncclSuccess) return q;
  }
  return r;
}

// ---- the handle ----

constexpr uint32_t kCommMagic = 0x6f617263;  // "oarc"

struct Comm {
  uint32_t magic = kCommMagic;
  ncclComm_t nccl = nullptr;
  int32_t device = 0, rank = 0, world = 0;
  int32_t* scratch = nullptr;  // barrier's one element on `device`

  std::mutex mutex;  // guards the event lists
  std::vector<cudaEvent_t> pending;  // recorded after enqueued work, maybe not complete
  std::vector<cudaEvent_t> idle;     // complete, reusable

  std::string where() const {
    return "rank " + std::to_string(rank) + " of " + std::to_string(world) + " on cuda:" +
           std::to_string(device);
  }

  // Moves completed events to the idle list. An event that reports an error
  // (a failed context) can never complete, so it counts as done too.
  void prune() {
    auto still = std::remove_if(pending.begin(), pending.end(), [this](cudaEvent_t e) {
      if (cudaEventQuery(e) == cudaErrorNotReady) return false;
      idle.push_back(e);
      return true;
    });
    pending.erase(still, pending.end());
  }

  // Marks the work enqueued so far on `stream` (device current).
  void track(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex);
    prune();
    cudaEvent_t e = nullptr;
    if (idle.empty()) {
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    } else {
      e = idle.back();
      idle.pop_back();
    }
    cudaError_t err = cudaEventRecord(e, stream);
    if (err != cudaSuccess) {
      idle.push_back(e);
      fail_gpu(err, "cudaEventRecord (after a collective on " + where() + ")");
    }
    pending.push_back(e);
  }

  bool work_pending() {
    std::lock_guard<std::mutex> lock(mutex);
    prune();
    return !pending.empty();
  }

  // Frees the plugin's own resources (the NCCL communicator is gone already);
  // returns the first CUDA error, if any, so the caller can report it.
  cudaError_t release() {
    cudaError_t first = cudaSuccess;
    auto keep = [&first](cudaError_t e) {
      if (first == cudaSuccess) first = e;
    };
    std::lock_guard<std::mutex> lock(mutex);
    for (cudaEvent_t e : pending) keep(cudaEventDestroy(e));
    for (cudaEvent_t e : idle) keep(cudaEventDestroy(e));
    pending.clear();
    idle.clear();
    if (scratch != nullptr) keep(cudaFree(scratch));
    scratch = nullptr;
    magic = 0;
    return first;
  }
};

Comm* comm_of(oar_comm_t handle, const char* what) {
  auto* c = reinterpret_cast<Comm*>(handle);
  if (c == nullptr) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": null communicator");
  if (c->magic != kCommMagic)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT,
              std::string(what) + ": not a live communicator from comm_init (destroyed or aborted?)");
  return c;
}

// Releases `c` (NCCL communicator already destroyed or aborted) and reports a
// CUDA error from that only when nothing more important is being reported.
void free_comm(Comm* c, bool report_errors) {
  cudaError_t err = c->release();
  std::string where = c->where();
  delete c;
  if (err != cudaSuccess && report_errors) fail_gpu(err, "releasing the communicator of " + where);
}

// ---- argument checks ----

ncclDataType_t nccl_dtype(oar_dtype_t dt, const char* what, bool reduction) {
  switch (dt) {
    case OAR_DTYPE_F32: return ncclFloat32;
    case OAR_DTYPE_F64: return ncclFloat64;
    case OAR_DTYPE_F16: return ncclFloat16;
    case OAR_DTYPE_BF16: return ncclBfloat16;
    case OAR_DTYPE_I8: return ncclInt8;
    case OAR_DTYPE_U8: return ncclUint8;
    case OAR_DTYPE_I32: return ncclInt32;
    case OAR_DTYPE_I64: return ncclInt64;
    case OAR_DTYPE_BOOL:
      // One byte per element (0 or 1) moves as u8; a sum or product of bools
      // would leave values NCCL cannot keep in {0, 1}.
      if (reduction)
        sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": reductions on dtype " +
                                                   dtype_name(dt) + " are not supported (cast to u8 or i32 first)");
      return ncclUint8;
  }
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": invalid dtype " + std::to_string(dt));
}

ncclRedOp_t nccl_op(oar_reduce_op_t op, const char* what) {
  switch (op) {
    case OAR_REDUCE_SUM: return ncclSum;
    case OAR_REDUCE_PROD: return ncclProd;
    case OAR_REDUCE_MAX: return ncclMax;
    case OAR_REDUCE_MIN: return ncclMin;
    case OAR_REDUCE_AVG: return ncclAvg;
  }
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": invalid reduce op " + std::to_string(op) +
                                             " (OAR_REDUCE_SUM, PROD, MAX, MIN or AVG)");
}

void require_buffer(const void* p, uint64_t count, const char* what, const char* name) {
  if (p == nullptr && count > 0)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + name + " is null with count " +
                                               std::to_string(count));
}

void require_rank(const Comm* c, int32_t r, const char* what, const char* name) {
  if (r < 0 || r >= c->world)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(what) + ": " + name + " " + std::to_string(r) +
                                           " out of range [0, " + std::to_string(c->world) + ") on " +
                                           c->where());
}

// ---- enqueueing ----

// Runs one NCCL enqueue on `c` (device current), waits until the
// communicator has settled, and marks the work for comm_abort.
template <class Call>
void enqueue(Comm* c, oar_stream_t stream, const char* what, const char* nccl_call, Call&& call) {
  DeviceGuard guard(c->device);
  // An earlier operation's asynchronous failure (a peer gone, a network
  // error) leaves the communicator unusable: say so instead of enqueueing.
  const auto start = Clock::now();
  const auto deadline = deadline_after(0);
  auto timed_out = [&](const std::string& waiting_for) {
    sdk::fail(OAR_STATUS_TIMEOUT, std::string(what) + " on " + c->where() + ": " + waiting_for + " for " +
                                      std::to_string(ms_until(deadline, start)) +
                                      " ms (OAR_CUDA_NCCL_TIMEOUT_MS); release the communicator with comm_abort");
  };
  ncclResult_t state = ncclSuccess;
  ncclResult_t q = nccl().CommGetAsyncError(c->nccl, &state);
  if (q != ncclSuccess) fail_nccl(q, c->nccl, std::string(what) + ": ncclCommGetAsyncError on " + c->where());
  state = settle(c->nccl, state, deadline);
  if (state == ncclInProgress) timed_out("an earlier operation did not settle");
  if (state != ncclSuccess)
    fail_nccl(state, c->nccl,
              std::string(what) + " on " + c->where() +
                  ": the communicator failed in an earlier operation (release it with comm_abort)");
  gpu::Stream s = to_stream(stream);
  ncclResult_t r = settle(c->nccl, call(s), deadline);
  if (r == ncclInProgress) timed_out(std::string(nccl_call) + " did not settle");
  if (r != ncclSuccess) fail_nccl(r, c->nccl, std::string(what) + ": " + nccl_call + " on " + c->where());
  c->track(s);
}

// ---- the entries ----

oar_status_t get_unique_id(oar_comm_unique_id* out_id) {
  return guarded([&] {
    if (out_id == nullptr) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "get_unique_id: null output");
    ncclUniqueId id;
    ncclResult_t r = nccl().GetUniqueId(&id);
    if (r != ncclSuccess) fail_nccl(r, nullptr, "get_unique_id: ncclGetUniqueId");
    std::memcpy(out_id->bytes, &id, sizeof(id));
  });
}

// Creates the communicators of ranks[i] on devices[i] (i < count) inside one
// NCCL group, so the ranks one thread hosts join together, and waits until
// all have joined or `timeout_ms` passed. On failure everything is aborted
// and released, out_comms stay NULL, and the error names the ranks.
void init_ranks(const char* what, const oar_comm_unique_id* id, int32_t world_size, int32_t count,
                const int32_t* devices, const int32_t* ranks, int64_t timeout_ms, oar_comm_t* out_comms) {
  if (out_comms == nullptr) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": null output");
  if (count < 1) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": count must be at least 1, got " +
                                                            std::to_string(count));
  for (int32_t i = 0; i < count; ++i) out_comms[i] = nullptr;
  if (id == nullptr) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": null unique id");
  if (devices == nullptr || ranks == nullptr)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": null devices or ranks");
  if (world_size < 1)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT,
              std::string(what) + ": world_size must be at least 1, got " + std::to_string(world_size));
  if (count > world_size)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(count) +
                                               " ranks asked for in a world of " + std::to_string(world_size));
  for (int32_t i = 0; i < count; ++i) {
    if (ranks[i] < 0 || ranks[i] >= world_size)
      sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(what) + ": rank " + std::to_string(ranks[i]) +
                                             " out of range [0, " + std::to_string(world_size) + ")");
    for (int32_t j = 0; j < i; ++j)
      if (ranks[j] == ranks[i])
        sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": rank " + std::to_string(ranks[i]) + " given twice");
    require_device(devices[i]);
  }

  std::vector<std::unique_ptr<Comm>> comms;
  // Aborts what NCCL created and frees the rest (before any failure is reported).
  auto release_all = [&] {
    for (auto& c : comms) {
      if (c->nccl != nullptr) {
        DeviceGuard guard(c->device);
        (void)nccl().CommAbort(c->nccl);
      }
      free_comm(c.release(), false);
    }
  };
  auto give_up = [&](oar_status_t code, const std::string& msg) {
    release_all();
    sdk::fail(code, msg);
  };
  for (int32_t i = 0; i < count; ++i) {
    DeviceGuard guard(devices[i]);
    auto c = std::make_unique<Comm>();
    c->device = devices[i];
    c->rank = ranks[i];
    c->world = world_size;
    cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&c->scratch), sizeof(int32_t));
    if (err != cudaSuccess) c->scratch = nullptr;
    else err = cudaMemset(c->scratch, 0, sizeof(int32_t));
    const std::string where = c->where();
    comms.push_back(std::move(c));
    if (err != cudaSuccess) {
      release_all();
      fail_gpu(err, std::string(what) + ": the barrier scratch on " + where);
    }
  }

  ncclUniqueId nid;
  std::memcpy(&nid, id->bytes, sizeof(nid));
  const auto start = Clock::now();
  const auto deadline = deadline_after(timeout_ms);
  // One group: NCCL then joins the ranks together instead of waiting inside
  // the first for peers this thread has not created yet. Non-blocking, so a
  // peer that never joins costs a bounded wait, not a hung rank.
  ncclResult_t r = nccl().GroupStart();
  if (r != ncclSuccess) give_up(status_for(r), nccl_message(r, nullptr, std::string(what) + ": ncclGroupStart"));
  ncclResult_t first_error = ncclSuccess;
  std::string first_where;
  for (auto& c : comms) {
    DeviceGuard guard(c->device);  // NCCL binds each communicator to the current device
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    r = nccl().CommInitRankConfig(&c->nccl, world_size, nid, c->rank, &config);
    if (r != ncclSuccess && r != ncclInProgress && first_error == ncclSuccess) {
      first_error = r;
      first_where = c->where();
    }
  }
  r = nccl().GroupEnd();
  if (first_error != ncclSuccess)
    give_up(status_for(first_error), nccl_message(first_error, nullptr, std::string(what) +
                                                                            ": ncclCommInitRankConfig for " + first_where));
  if (r != ncclSuccess && r != ncclInProgress)
    give_up(status_for(r), nccl_message(r, nullptr, std::string(what) + ": ncclGroupEnd"));

  std::string waiting;
  for (auto& c : comms) {
    DeviceGuard guard(c->device);
    ncclResult_t state = ncclInProgress;
    if (c->nccl != nullptr) {
      ncclResult_t q = nccl().CommGetAsyncError(c->nccl, &state);
      if (q != ncclSuccess) state = q;
    }
    state = settle(c->nccl, state, deadline);
    if (state == ncclInProgress) {
      waiting += (waiting.empty() ? "" : ", ") + std::to_string(c->rank);
    } else if (state != ncclSuccess) {
      give_up(status_for(state), nccl_message(state, c->nccl, std::string(what) + ": joining " + c->where()));
    }
  }
  if (!waiting.empty())
    give_up(OAR_STATUS_TIMEOUT, std::string(what) + ": rank(s) " + waiting + " of a world of " +
                                    std::to_string(world_size) + " still waiting for their peers after " +
                                    std::to_string(ms_until(deadline, start)) +
                                    " ms (did every rank call comm_init with the same unique id?); "
                                    "the communicators were aborted");
  for (int32_t i = 0; i < count; ++i) out_comms[i] = reinterpret_cast<oar_comm_t>(comms[size_t(i)].release());
}

oar_status_t comm_init(int32_t device, const oar_comm_unique_id* id, int32_t world_size, int32_t rank,
                       oar_comm_t* out_comm) {
  return guarded([&] { init_ranks("comm_init", id, world_size, 1, &device, &rank, 0, out_comm); });
}

oar_status_t comm_init_ranks(const oar_comm_unique_id* id, int32_t world_size, int32_t count, const int32_t* devices,
                             const int32_t* ranks, int64_t timeout_ms, oar_comm_t* out_comms) {
  return guarded([&] { init_ranks("comm_init_ranks", id, world_size, count, devices, ranks, timeout_ms, out_comms); });
}

oar_status_t comm_destroy(oar_comm_t comm) {
  return guarded([&] {
    Comm* c = comm_of(comm, "comm_destroy");
    DeviceGuard guard(c->device);
    // Finalize flushes outstanding work (waiting for every peer), then
    // destroy frees; a failure on the way aborts instead, so the handle is
    // always released.
    const auto start = Clock::now();
    const auto deadline = deadline_after(0);
    ncclResult_t r = settle(c->nccl, nccl().CommFinalize(c->nccl), deadline);
    if (r == ncclInProgress) {
      const std::string where = c->where();
      (void)nccl().CommAbort(c->nccl);
      free_comm(c, false);
      sdk::fail(OAR_STATUS_TIMEOUT, "comm_destroy: " + where + " still flushing its operations after " +
                                        std::to_string(ms_until(deadline, start)) +
                                        " ms (OAR_CUDA_NCCL_TIMEOUT_MS; a peer that never reached comm_destroy?); "
                                        "the communicator was aborted");
    }
    if (r != ncclSuccess) {
      std::string msg = nccl_message(r, c->nccl, "comm_destroy: ncclCommFinalize on " + c->where());
      (void)nccl().CommAbort(c->nccl);
      free_comm(c, false);
      sdk::fail(status_for(r), msg + "; the communicator was aborted");
    }
    r = nccl().CommDestroy(c->nccl);
    if (r != ncclSuccess) {
      std::string msg = nccl_message(r, c->nccl, "comm_destroy: ncclCommDestroy on " + c->where());
      free_comm(c, false);
      sdk::fail(status_for(r), msg);
    }
    free_comm(c, true);
  });
}

oar_status_t comm_abort(oar_comm_t comm, int64_t timeout_ms) {
  return guarded([&] {
    Comm* c = comm_of(comm, "comm_abort");
    DeviceGuard guard(c->device);
    // Capped (at ten years) so that "forever" (INT64_MAX) cannot overflow the clock.
    const int64_t wait_ms = std::clamp<int64_t>(timeout_ms, 0, int64_t(10) * 365 * 24 * 3600 * 1000);
    const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    // Wait for outstanding work (a settling NCCL call, or enqueued kernels)
    // until it finishes, the communicator reports a failure, or time is up.
    ncclResult_t state = ncclSuccess;
    bool outstanding = false;
    Backoff backoff;
    for (;;) {
      ncclResult_t q = nccl().CommGetAsyncError(c->nccl, &state);
      if (q != ncclSuccess) state = q;
      if (state != ncclSuccess && state != ncclInProgress) break;
      outstanding = state == ncclInProgress || c->work_pending();
      if (!outstanding || Clock::now() >= deadline) break;
      backoff.wait();
    }
    const bool failed = state != ncclSuccess && state != ncclInProgress;
    std::string failure = failed ? nccl_message(state, c->nccl, "an operation on " + c->where()) : "";
    const std::string where = c->where();
    ncclResult_t r = nccl().CommAbort(c->nccl);
    std::string abort_error = r != ncclSuccess ? "; " + nccl_message(r, nullptr, "ncclCommAbort") : "";
    free_comm(c, !failed && !outstanding && r == ncclSuccess);
    if (failed) sdk::fail(status_for(state), "comm_abort: " + failure + "; the communicator was aborted" + abort_error);
    if (outstanding)
      sdk::fail(OAR_STATUS_TIMEOUT, "comm_abort: operations on " + where + " still pending after " +
                                        std::to_string(wait_ms) + " ms; the communicator was aborted" +
                                        abort_error);
    if (r != ncclSuccess) sdk::fail(status_for(r), "comm_abort on " + where + abort_error);
  });
}

oar_status_t all_reduce(oar_comm_t comm, const void* src, void* dst, uint64_t count, oar_dtype_t dtype,
                        oar_reduce_op_t op, oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "all_reduce");
    ncclDataType_t dt = nccl_dtype(dtype, "all_reduce", true);
    ncclRedOp_t o = nccl_op(op, "all_reduce");
    require_buffer(src, count, "all_reduce", "src");
    require_buffer(dst, count, "all_reduce", "dst");
    enqueue(c, stream, "all_reduce", "ncclAllReduce", [&](gpu::Stream s) {
      return nccl().AllReduce(src, dst, size_t(count), dt, o, c->nccl, s);
    });
  });
}

oar_status_t broadcast(oar_comm_t comm, const void* src, void* dst, uint64_t count, oar_dtype_t dtype,
                       int32_t root, oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "broadcast");
    ncclDataType_t dt = nccl_dtype(dtype, "broadcast", false);
    require_rank(c, root, "broadcast", "root");
    if (c->rank == root) require_buffer(src, count, "broadcast", "src (on the root)");
    require_buffer(dst, count, "broadcast", "dst");
    enqueue(c, stream, "broadcast", "ncclBroadcast", [&](gpu::Stream s) {
      return nccl().Broadcast(src, dst, size_t(count), dt, root, c->nccl, s);
    });
  });
}

oar_status_t all_gather(oar_comm_t comm, const void* src, void* dst, uint64_t count, oar_dtype_t dtype,
                        oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "all_gather");
    ncclDataType_t dt = nccl_dtype(dtype, "all_gather", false);
    require_buffer(src, count, "all_gather", "src");
    require_buffer(dst, count, "all_gather", "dst");
    enqueue(c, stream, "all_gather", "ncclAllGather", [&](gpu::Stream s) {
      return nccl().AllGather(src, dst, size_t(count), dt, c->nccl, s);
    });
  });
}

oar_status_t reduce_scatter(oar_comm_t comm, const void* src, void* dst, uint64_t count, oar_dtype_t dtype,
                            oar_reduce_op_t op, oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "reduce_scatter");
    ncclDataType_t dt = nccl_dtype(dtype, "reduce_scatter", true);
    ncclRedOp_t o = nccl_op(op, "reduce_scatter");
    require_buffer(src, count, "reduce_scatter", "src");
    require_buffer(dst, count, "reduce_scatter", "dst");
    enqueue(c, stream, "reduce_scatter", "ncclReduceScatter", [&](gpu::Stream s) {
      return nccl().ReduceScatter(src, dst, size_t(count), dt, o, c->nccl, s);
    });
  });
}

// A lone send or recv to this rank itself would wait forever for its partner
// (NCCL pairs a self-exchange only inside one group; p2p_batch refuses it too).
void require_peer(const Comm* c, int32_t peer, const char* what) {
  require_rank(c, peer, what, "peer");
  if (peer == c->rank)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + ": peer " + std::to_string(peer) +
                                               " is this rank (" + c->where() + "); a self-" + what +
                                               " would never complete");
}

oar_status_t send(oar_comm_t comm, const void* src, uint64_t count, oar_dtype_t dtype, int32_t peer,
                  oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "send");
    ncclDataType_t dt = nccl_dtype(dtype, "send", false);
    require_peer(c, peer, "send");
    require_buffer(src, count, "send", "src");
    enqueue(c, stream, "send", "ncclSend",
            [&](gpu::Stream s) { return nccl().Send(src, size_t(count), dt, peer, c->nccl, s); });
  });
}

oar_status_t recv(oar_comm_t comm, void* dst, uint64_t count, oar_dtype_t dtype, int32_t peer,
                  oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "recv");
    ncclDataType_t dt = nccl_dtype(dtype, "recv", false);
    require_peer(c, peer, "recv");
    require_buffer(dst, count, "recv", "dst");
    enqueue(c, stream, "recv", "ncclRecv",
            [&](gpu::Stream s) { return nccl().Recv(dst, size_t(count), dt, peer, c->nccl, s); });
  });
}

const char* p2p_kind_name(oar_p2p_kind_t kind) { return kind == OAR_P2P_SEND ? "send" : "recv"; }

// The ops as one NCCL group (see oar_plugin.h): NCCL matches and progresses
// them together, so exchanges between ranks cannot deadlock on buffer space.
oar_status_t p2p_batch(oar_comm_t comm, const oar_p2p_op* ops, uint32_t count, oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "p2p_batch");
    if (count == 0) return;
    if (ops == nullptr) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "p2p_batch: null ops with count " + std::to_string(count));
    std::vector<ncclDataType_t> types(count);
    for (uint32_t i = 0; i < count; ++i) {
      const oar_p2p_op& op = ops[i];
      const std::string what = "p2p_batch: op " + std::to_string(i);
      if (op.kind != OAR_P2P_SEND && op.kind != OAR_P2P_RECV)
        sdk::fail(OAR_STATUS_INVALID_ARGUMENT, what + ": kind " + std::to_string(op.kind) +
                                                   " is neither OAR_P2P_SEND nor OAR_P2P_RECV");
      if (op.reserved != 0) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, what + ": reserved must be 0");
      types[i] = nccl_dtype(op.dtype, what.c_str(), false);
      require_peer(c, op.peer, p2p_kind_name(op.kind));
      require_buffer(op.buffer, op.count, what.c_str(), "buffer");
    }
    enqueue(c, stream, "p2p_batch", "ncclGroupStart/ncclSend/ncclRecv/ncclGroupEnd", [&](gpu::Stream s) {
      ncclResult_t r = nccl().GroupStart();
      if (r != ncclSuccess) return r;
      for (uint32_t i = 0; i < count; ++i) {
        const oar_p2p_op& op = ops[i];
        r = op.kind == OAR_P2P_SEND ? nccl().Send(op.buffer, size_t(op.count), types[i], op.peer, c->nccl, s)
                                    : nccl().Recv(op.buffer, size_t(op.count), types[i], op.peer, c->nccl, s);
        if (r != ncclSuccess && r != ncclInProgress) {
          (void)nccl().GroupEnd();
          return r;
        }
      }
      return nccl().GroupEnd();
    });
  });
}

// Later work on `stream` starts only once every rank has reached the barrier:
// an in-place all-reduce of one element whose value nobody reads.
oar_status_t barrier(oar_comm_t comm, oar_stream_t stream) {
  return guarded([&] {
    Comm* c = comm_of(comm, "barrier");
    enqueue(c, stream, "barrier", "ncclAllReduce (one element)", [&](gpu::Stream s) {
      return nccl().AllReduce(c->scratch, c->scratch, 1, ncclInt32, ncclSum, c->nccl, s);
    });
  });
}

}  // namespace

const oar_collectives_api* nccl_collectives() {
  static const oar_collectives_api api = [] {
    oar_collectives_api a{};
    a.struct_size = sizeof(a);
    a.get_unique_id = get_unique_id;
    a.comm_init = comm_init;
    a.comm_destroy = comm_destroy;
    a.comm_abort = comm_abort;
    a.all_reduce = all_reduce;
    a.broadcast = broadcast;
    a.all_gather = all_gather;
    a.reduce_scatter = reduce_scatter;
    a.send = send;
    a.recv = recv;
    a.barrier = barrier;
    a.p2p_batch = p2p_batch;
    a.comm_init_ranks = comm_init_ranks;
    return a;
  }();
  return &api;
}

}  // namespace oar_gpu
