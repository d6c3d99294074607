// What an op file of the CUDA (and HIP) plugin needs around a kernel launch:
// the kernel call's device (made current) and stream, typed pointers into
// tensor views, launch-error checks, and stream-ordered workspace from the
// core. Ops built on the primitives include only this and kp/gpu/*.cuh;
// vendor-library ops (cuBLAS, cuDNN) add their own handle headers.
#pragma once

#include <cstdint>
#include <string>

#include "gpu_device.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_gpu {

struct OpContext {
  explicit OpContext(const oar::sdk::KernelArgs& a)
      : args(a), device(a.context().device_index), guard(device), stream(to_stream(a.context().stream)) {}
  const oar::sdk::KernelArgs& args;
  int32_t device;
  DeviceGuard guard;
  gpu::Stream stream;

  // Stream-ordered scratch from the core's caching allocator, freed after the kernel returns.
  void* workspace(uint64_t bytes) const { return bytes ? args.workspace(bytes) : nullptr; }
  // Throws DEVICE_ERROR naming `op` if the last launch failed.
  void check_launch(const char* op) const { check(OAR_GPU(GetLastError)(), op); }
};

// A typed pointer to a view's first element (device memory is a plain pointer).
template <class T>
T* ptr(const oar_tensor_view& v) {
  return static_cast<T*>(v.data) + v.offset;
}

}  // namespace oar_gpu
