// Lazy loading of cuBLAS (see cublas_loader.h for why).
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "cublas_loader.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_gpu {

namespace {

#define OAR_STRINGIFY_(x) #x
#define OAR_STRINGIFY(x) OAR_STRINGIFY_(x)  // expands cublas_v2.h's macros first (cublasCreate -> cublasCreate_v2)

template <class Fn>
void resolve(void* lib, const char* library, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!out) oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, std::string(library) + " has no entry point " + symbol);
}

CublasApi load() {
  const std::string library = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, "cannot load " + library + " (cuBLAS, for matmul on cuda): " +
                                                (why ? why : "unknown error"));
  }
  CublasApi api{};
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasCreate), api.create);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasDestroy), api.destroy);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasSetStream), api.set_stream);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasSetWorkspace), api.set_workspace);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasSetMathMode), api.set_math_mode);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasGetStatusName), api.status_name);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasGetStatusString), api.status_string);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasGemmStridedBatchedEx_64), api.gemm_strided_batched_ex);
  resolve(lib, library.c_str(), OAR_STRINGIFY(cublasDgemmStridedBatched_64), api.dgemm_strided_batched);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CublasApi& cublas() {
  // A failed load is retried on the next call (call_once rethrows and stays unset).
  static std::once_flag once;
  static CublasApi api;
  std::call_once(once, [] { api = load(); });
  return api;
}

}  // namespace oar_gpu
