// Handles of the vendor libraries (cuBLAS, cuDNN, cuSOLVER) for the CUDA
// plugin's kernels, typed errors from their status codes, and the plugin
// flags those kernels read. A handle is created lazily per (device, thread)
// and bound to the call's stream on every use: binding a stream to a handle
// another thread is using would move that thread's work, so handles are
// never shared between threads. CUDA only (the HIP build has no such files).
#pragma once

#include "vendor_loader.h"

#include <cstdint>

#include "gpu_device.h"

namespace oar_gpu {

// This thread's cuBLAS handle for `device` (which must be current), bound to
// `stream`, in the default math mode with reduced-precision reductions off.
// Its workspace is the library's default until the caller sets its own.
cublasHandle_t cublas_handle(int32_t device, gpu::Stream stream);
// This thread's cuDNN handle for `device` (which must be current), bound to `stream`.
cudnnHandle_t cudnn_handle(int32_t device, gpu::Stream stream);
// This thread's cuSOLVER (dense) handle for `device` (which must be current), bound to `stream`.
cusolverDnHandle_t cusolver_handle(int32_t device, gpu::Stream stream);

// From here on a thread's exit leaves its handles to the process's end
// instead of destroying them: at exit the CUDA runtime may already be torn
// down, and destroying a handle then can crash. Registered with atexit when
// the first handle is created (after the runtime's own exit handler, so it
// runs first).
void stop_destroying_handles();

// Throws sdk::KernelError naming `what` and the library's status:
// OUT_OF_MEMORY for an allocation failure, UNSUPPORTED for a configuration
// the library does not implement, DEVICE_ERROR otherwise.
[[noreturn]] void fail_cublas(cublasStatus_t status, const char* what);
[[noreturn]] void fail_cudnn(cudnnStatus_t status, const char* what);
[[noreturn]] void fail_cusolver(cusolverStatus_t status, const char* what);
inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail_cublas(status, what);
}
inline void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) fail_cudnn(status, what);
}
inline void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS) fail_cusolver(status, what);
}

// Current value of an OAR_* flag through the host table, read at each call
// so oar.set_flag takes effect on the next kernel; `fallback` when there is
// no host or the core does not know the flag.
bool flag_bool(const char* name, bool fallback);
int64_t flag_int(const char* name, int64_t fallback);

// The plugin's flags, declared to the core in plugin.cu (ABI 1.2): a
// plugin's flags carry its name, OAR_CUDA_*.
inline constexpr const char* kAllowTf32Flag = "OAR_CUDA_ALLOW_TF32";
inline constexpr const char* kCudnnExhaustiveSearchFlag = "OAR_CUDA_CUDNN_EXHAUSTIVE_SEARCH";
inline constexpr const char* kCudnnWorkspaceLimitFlag = "OAR_CUDA_CUDNN_WORKSPACE_LIMIT_MB";
inline constexpr const char* kNcclTimeoutFlag = "OAR_CUDA_NCCL_TIMEOUT_MS";
inline constexpr const char* kVendorSolversFlag = "OAR_CUDA_VENDOR_SOLVERS";

// May f32 matmul / convolution round inputs to TF32?
inline bool allow_tf32() { return flag_bool(kAllowTf32Flag, false); }
// Time every cuDNN convolution algorithm instead of trusting the heuristics?
inline bool cudnn_exhaustive_search() { return flag_bool(kCudnnExhaustiveSearchFlag, false); }
// Largest cuDNN workspace in MiB.
inline int64_t cudnn_workspace_limit_mb() { return flag_int(kCudnnWorkspaceLimitFlag, 1024); }

// Run the linalg factorizations on cuSOLVER and rnn_layer on cuDNN (ops/linalg.cu,
// ops/rnn.cu) instead of the kernel families? Off until they have passed the
// conformance suite on a GPU (docs/gpu_check.md).
inline bool vendor_solvers() { return flag_bool(kVendorSolversFlag, false); }

// Longest wait of a collectives call for its peers (communicator set-up,
// teardown, an operation that cannot be enqueued), in ms.
inline int64_t nccl_timeout_ms() { return flag_int(kNcclTimeoutFlag, 600000); }

// Sends `message` to the core's log at `level` (nothing before the host is set).
void log_message(oar_log_level_t level, const char* message);

}  // namespace oar_gpu
