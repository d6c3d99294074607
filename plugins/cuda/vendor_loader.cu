// Lazy loading of cuBLAS, cuDNN, cuSOLVER and NCCL (see vendor_loader.h for why).
#include "vendor_loader.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_gpu {

namespace {

#define OAR_STRINGIFY_(x) #x
#define OAR_STRINGIFY(x) OAR_STRINGIFY_(x)  // expands header macros first (cublasCreate -> cublasCreate_v2)

void* open_library(const std::string& soname, const char* purpose) {
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, "cannot load " + soname + " (" + purpose + "): " +
                                                (why != nullptr ? why : "unknown error"));
  }
  return lib;  // stays loaded for the life of the process
}

template <class Fn>
void resolve(void* lib, const std::string& soname, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (out == nullptr) oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, soname + " has no entry point " + symbol);
}

#define OAR_VENDOR_RESOLVE(prefix, name) resolve(lib, soname, OAR_STRINGIFY(prefix##name), api.name);

// call_once rethrows a failed load and stays unset, so the next call retries.
#define OAR_DEFINE_VENDOR_LOADER(Api, getter, library, major, purpose, entry_points) \
  const Api& getter() {                                                              \
    static std::once_flag once;                                                      \
    static Api api;                                                                  \
    std::call_once(once, [] {                                                        \
      const std::string soname = std::string(library) + ".so." + std::to_string(major); \
      void* lib = open_library(soname, purpose);                                     \
      entry_points(OAR_VENDOR_RESOLVE)                                               \
    });                                                                              \
    return api;                                                                      \
  }

}  // namespace

OAR_DEFINE_VENDOR_LOADER(CublasApi, cublas, "libcublas", CUBLAS_VER_MAJOR, "cuBLAS, for matmul on cuda",
                         OAR_CUBLAS_ENTRY_POINTS)
OAR_DEFINE_VENDOR_LOADER(CudnnApi, cudnn, "libcudnn", CUDNN_MAJOR, "cuDNN, for convolution, softmax and recurrent layers on cuda",
                         OAR_CUDNN_ENTRY_POINTS)
OAR_DEFINE_VENDOR_LOADER(CusolverApi, cusolver, "libcusolver", CUSOLVER_VER_MAJOR,
                         "cuSOLVER, for linalg factorizations on cuda", OAR_CUSOLVER_ENTRY_POINTS)
OAR_DEFINE_VENDOR_LOADER(NcclApi, nccl, "libnccl", NCCL_MAJOR, "NCCL, for collectives on cuda",
                         OAR_NCCL_ENTRY_POINTS)

}  // namespace oar_gpu
