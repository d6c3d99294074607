// Fake cuBLAS (built as libcublas.so.<major>) or cuDNN (libcudnn.so.<major>,
// with OAR_FAKE_CUDNN): handles remember the device current at creation, and
// destroying one logs the device current then. Destroying a handle after the
// CUDA runtime has run its exit handler ends the process with code 3, as a
// crash at exit would.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "fake_vendor.h"

#if defined(OAR_FAKE_CUDNN)
#include <cudnn.h>
#define FAKE_LIB "cudnn"
#define FAKE_LOG fake_dnn_log
#else
#include <cublas_v2.h>
#define FAKE_LIB "cublas"
#define FAKE_LOG fake_blas_log
#endif

namespace {
std::mutex g_mutex;
std::string g_log;
struct Handle {
  int device = -1;
};
void log(const std::string& entry) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += entry + ";";
}
int current_device() {
  int d = -1;
  cudaGetDevice(&d);
  return d;
}
void* create() {
  auto* h = new Handle;
  h->device = current_device();
  log(std::string("create(" FAKE_LIB ",dev=") + std::to_string(h->device) + ")");
  return h;
}
void destroy(void* p) {
  if (fake_cudart_torn_down()) _exit(3);
  auto* h = static_cast<Handle*>(p);
  log(std::string("destroy(" FAKE_LIB ",created_on=") + std::to_string(h->device) +
      ",current=" + std::to_string(current_device()) + ")");
  delete h;
}
}  // namespace

extern "C" const char* FAKE_LOG() {
  static std::string copy;
  std::lock_guard<std::mutex> lock(g_mutex);
  copy = g_log;
  return copy.c_str();
}
#if !defined(OAR_FAKE_CUDNN)
extern "C" void fake_handles_reset() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log.clear();
}
#endif

#if defined(OAR_FAKE_CUDNN)
cudnnStatus_t cudnnCreate(cudnnHandle_t* h) {
  *h = reinterpret_cast<cudnnHandle_t>(create());
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  destroy(h);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }
const char* cudnnGetErrorString(cudnnStatus_t) { return "fake cuDNN status"; }
void cudnnGetLastErrorString(char* message, size_t max) {
  if (max > 0) message[0] = '\0';
}
#else
cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  *h = reinterpret_cast<cublasHandle_t>(create());
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  destroy(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }
const char* cublasGetStatusName(cublasStatus_t) { return "CUBLAS_STATUS_FAKE"; }
const char* cublasGetStatusString(cublasStatus_t) { return "fake cuBLAS status"; }
#endif
