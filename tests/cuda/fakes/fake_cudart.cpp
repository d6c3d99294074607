// A CUDA runtime for host code without a GPU: devices are numbers, memory is
// malloc, events complete at once. Only the calls the plugin's collectives,
// vendor handles and device layer make. Like the real runtime it registers an
// exit handler at its first call (the tests reproduce exit-order bugs with it).
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "fake_vendor.h"

namespace {
std::mutex g_mutex;
int g_device_count = 2;
thread_local int t_current = 0;
std::set<void*> g_allocations;
std::atomic<int> g_torn_down{0};

void initialise() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { g_torn_down = 1; }); });
}
}  // namespace

extern "C" {
void fake_cudart_reset(int device_count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_device_count = device_count;
  t_current = 0;
}
int fake_cudart_live_allocations() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return int(g_allocations.size());
}
int fake_cudart_torn_down() { return g_torn_down.load(); }

cudaError_t cudaGetDeviceCount(int* n) {
  initialise();
  *n = g_device_count;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  initialise();
  *d = t_current;
  return g_torn_down ? cudaErrorCudartUnloading : cudaSuccess;
}
cudaError_t cudaSetDevice(int d) {
  initialise();
  if (d < 0 || d >= g_device_count) return cudaErrorInvalidDevice;
  t_current = d;
  return cudaSuccess;
}
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorFake"; }
const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "fake runtime error"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
cudaError_t cudaMalloc(void** p, size_t size) {
  initialise();
  *p = std::malloc(size == 0 ? 1 : size);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_allocations.insert(*p);
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  if (p == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_allocations.erase(p) == 0) return cudaErrorInvalidValue;
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, size_t size) {
  std::memset(p, value, size);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) {
  *e = reinterpret_cast<cudaEvent_t>(new int(0));
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete reinterpret_cast<int*>(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }

// What nvcc's generated host code registers at load (no kernels run here).
void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*) {}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
}
