// Per-(device, thread) cuBLAS / cuDNN / cuSOLVER handles, typed errors from
// the libraries' status codes, and flag reading for the vendor-library
// kernels (see vendor_handles.h). Handles live in thread-local storage and
// are destroyed when their thread exits; creating one costs far more than a
// kernel call, so each thread keeps its own for the life of the thread.
// A handle is destroyed with its own device current; once the process is
// exiting, not at all (the driver reclaims it with the process).
#include "vendor_handles.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace oar_gpu {

namespace {

using oar::sdk::fail;

std::atomic<bool> g_keep_handles{false};  // set by stop_destroying_handles()

void register_exit_handler() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(stop_destroying_handles); });
}

// Runs destroy(h) with h's device current, as the libraries require, and
// puts the thread's current device back. Statuses are ignored: nothing can be
// reported from a thread's exit.
template <class H, class Destroy>
void destroy_on_devices(std::vector<H>& handles, Destroy destroy) {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  for (size_t d = 0; d < handles.size(); ++d) {
    if (handles[d] == nullptr) continue;
    if (cudaSetDevice(int(d)) == cudaSuccess) destroy(handles[d]);
    handles[d] = nullptr;
  }
  if (previous >= 0) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
}

// One slot per device index, filled on first use by this thread.
struct ThreadHandles {
  std::vector<cublasHandle_t> blas;
  std::vector<cudnnHandle_t> dnn;
  std::vector<cusolverDnHandle_t> solver;

  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    if (g_keep_handles.load()) return;  // the process is exiting: the runtime may be gone
    destroy_on_devices(blas, [](cublasHandle_t h) { cublas().Destroy(h); });
    destroy_on_devices(dnn, [](cudnnHandle_t h) { cudnn().Destroy(h); });
    destroy_on_devices(solver, [](cusolverDnHandle_t h) { cusolver().Destroy(h); });
  }
};

ThreadHandles& thread_handles() {
  thread_local ThreadHandles handles;
  return handles;
}

template <class H>
H& slot(std::vector<H>& v, int32_t device) {
  if (device < 0) fail(OAR_STATUS_INVALID_ARGUMENT, "vendor handle for negative device " + std::to_string(device));
  if (v.size() <= size_t(device)) v.resize(size_t(device) + 1, nullptr);
  return v[size_t(device)];
}

std::string read_flag(const char* name, bool* known) {
  *known = false;
  const oar_host_api* h = host();
  if (h == nullptr || h->get_flag == nullptr) return "";
  char buf[128] = {0};
  *known = h->get_flag(name, buf, sizeof(buf)) != 0;
  return buf;
}

}  // namespace

void stop_destroying_handles() { g_keep_handles.store(true); }

cublasHandle_t cublas_handle(int32_t device, gpu::Stream stream) {
  cublasHandle_t& h = slot(thread_handles().blas, device);
  if (h == nullptr) {
    register_exit_handler();
    cublasHandle_t created = nullptr;
    check_cublas(cublas().Create(&created), "cublasCreate");
    // The kernels name their compute type per call; this only keeps fp16/bf16
    // split-K reductions in the f32 accumulator rather than the output type.
    cublasStatus_t st = cublas().SetMathMode(
        created, cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    if (st != CUBLAS_STATUS_SUCCESS) {
      cublas().Destroy(created);
      fail_cublas(st, "cublasSetMathMode");
    }
    h = created;
  }
  check_cublas(cublas().SetStream(h, stream), "cublasSetStream");
  return h;
}

cudnnHandle_t cudnn_handle(int32_t device, gpu::Stream stream) {
  cudnnHandle_t& h = slot(thread_handles().dnn, device);
  if (h == nullptr) {
    register_exit_handler();
    check_cudnn(cudnn().Create(&h), "cudnnCreate");
  }
  check_cudnn(cudnn().SetStream(h, stream), "cudnnSetStream");
  return h;
}

cusolverDnHandle_t cusolver_handle(int32_t device, gpu::Stream stream) {
  cusolverDnHandle_t& h = slot(thread_handles().solver, device);
  if (h == nullptr) {
    register_exit_handler();
    check_cusolver(cusolver().Create(&h), "cusolverDnCreate");
  }
  check_cusolver(cusolver().SetStream(h, stream), "cusolverDnSetStream");
  return h;
}

void fail_cusolver(cusolverStatus_t status, const char* what) {
  oar_status_t code = OAR_STATUS_DEVICE_ERROR;
  const char* name = "an unknown status";
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: name = "CUSOLVER_STATUS_NOT_INITIALIZED"; break;
    case CUSOLVER_STATUS_ALLOC_FAILED: name = "CUSOLVER_STATUS_ALLOC_FAILED"; code = OAR_STATUS_OUT_OF_MEMORY; break;
    case CUSOLVER_STATUS_INVALID_VALUE: name = "CUSOLVER_STATUS_INVALID_VALUE"; break;
    case CUSOLVER_STATUS_ARCH_MISMATCH: name = "CUSOLVER_STATUS_ARCH_MISMATCH"; code = OAR_STATUS_UNSUPPORTED; break;
    case CUSOLVER_STATUS_EXECUTION_FAILED: name = "CUSOLVER_STATUS_EXECUTION_FAILED"; break;
    case CUSOLVER_STATUS_INTERNAL_ERROR: name = "CUSOLVER_STATUS_INTERNAL_ERROR"; break;
    case CUSOLVER_STATUS_NOT_SUPPORTED: name = "CUSOLVER_STATUS_NOT_SUPPORTED"; code = OAR_STATUS_UNSUPPORTED; break;
    default: break;
  }
  // cuSOLVER has no status-to-string call: the name and the number.
  fail(code, std::string(what) + ": cuSOLVER " + name + " (" + std::to_string(int(status)) + ")");
}

void fail_cublas(cublasStatus_t status, const char* what) {
  oar_status_t code = OAR_STATUS_DEVICE_ERROR;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) code = OAR_STATUS_OUT_OF_MEMORY;
  else if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_ARCH_MISMATCH)
    code = OAR_STATUS_UNSUPPORTED;
  fail(code, std::string(what) + ": cuBLAS " + cublas().GetStatusName(status) + " (" + cublas().GetStatusString(status) +
                 ")");
}

void fail_cudnn(cudnnStatus_t status, const char* what) {
  oar_status_t code = OAR_STATUS_DEVICE_ERROR;
  if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED) code = OAR_STATUS_UNSUPPORTED;
  else if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
           status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    code = OAR_STATUS_OUT_OF_MEMORY;
  std::string message = std::string(what) + ": cuDNN " + cudnn().GetErrorString(status);
  // cuDNN 9 keeps a per-thread explanation of its last failure.
  char detail[512] = {0};
  cudnn().GetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') message += std::string(" (") + detail + ")";
  fail(code, message);
}

bool flag_bool(const char* name, bool fallback) {
  bool known = false;
  std::string v = read_flag(name, &known);
  if (!known) return fallback;
  // The core stores bools normalised to "1" / "0" (empty means 0).
  return v == "1";
}

int64_t flag_int(const char* name, int64_t fallback) {
  bool known = false;
  std::string v = read_flag(name, &known);
  if (!known || v.empty()) return fallback;
  char* end = nullptr;
  long long parsed = std::strtoll(v.c_str(), &end, 10);
  return end && *end == '\0' ? int64_t(parsed) : fallback;
}

void log_message(oar_log_level_t level, const char* message) {
  const oar_host_api* h = host();
  if (h != nullptr && h->log != nullptr) h->log(level, message);
}

}  // namespace oar_gpu
