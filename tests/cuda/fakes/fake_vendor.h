// Control and inspection of the fake NVIDIA libraries (fake_nccl.cpp,
// fake_cublas_cudnn.cpp) and the fake CUDA runtime (fake_cudart.cpp) that
// test_cuda_vendor_safety runs the CUDA plugin's host code against, on any
// machine. The fakes keep a log of the calls the tests assert on.
#pragma once

#include <string>

extern "C" {
// ---- fake CUDA runtime (in the test executable) ----
void fake_cudart_reset(int device_count);
int fake_cudart_live_allocations();
// Has the runtime's exit handler run (as the real one does at process exit)?
int fake_cudart_torn_down();

// ---- fake NCCL (libnccl.so.<major>) ----
void fake_nccl_reset();
void fake_nccl_clear_log();
// Communicators' finalize never completes (a peer that never reaches comm_destroy).
void fake_nccl_finalize_hangs(int hangs);
// Every operation stays in progress (a peer that never joins the collective).
void fake_nccl_operations_hang(int hangs);
// Joins every pending communicator, as if all peers arrived.
void fake_nccl_release_all();
int fake_nccl_live_comms();
const char* fake_nccl_log();  // "call(args);call(args);..."

// ---- fake cuBLAS / cuDNN (libcublas.so.<major>, libcudnn.so.<major>) ----
// "create(lib,dev=D);destroy(lib,created_on=D,current=C);..."
const char* fake_blas_log();
const char* fake_dnn_log();
void fake_handles_reset();
}
