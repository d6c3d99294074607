// The device layer of the CUDA plugin, written against OAR_GPU(...) so the
// HIP build compiles the same file: device discovery (a machine with no GPU
// or no driver has zero devices and keeps the runtime's reason), typed errors
// from runtime error codes, the current-device guard every entry point takes,
// and the allocation table behind the memory statistics.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "oar/abi/oar_plugin.h"
#include "oar/kp/gpu/runtime.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_gpu {

namespace gpu = oar::kp::gpu;

// The host table given at entry (for logging); null before entry.
const oar_host_api* host();
void set_host(const oar_host_api* host);

// Throws sdk::KernelError: OUT_OF_MEMORY for an allocation failure,
// DEVICE_ERROR otherwise, naming the call and the runtime's error.
[[noreturn]] void fail_gpu(gpu::Error error, const std::string& what);
inline void check(gpu::Error error, const char* what) {
  if (error != OAR_GPU(Success)) fail_gpu(error, what);
}

// Devices visible to the runtime; 0 when there is no driver or no GPU, with
// the runtime's explanation in no_device_reason().
int32_t device_count();
const std::string& no_device_reason();
// Throws INVALID_ARGUMENT for an index outside [0, device_count()).
void require_device(int32_t device);

// Makes `device` current for the scope (kernels may be called from any thread).
class DeviceGuard {
 public:
  explicit DeviceGuard(int32_t device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

// The plugin's streams are runtime streams; NULL is the device's legacy default stream.
inline gpu::Stream to_stream(oar_stream_t s) { return reinterpret_cast<gpu::Stream>(s); }

// Sizes of live allocations per device, for in_use/peak statistics.
class AllocationTable {
 public:
  void add(void* ptr, uint64_t size);
  // The size of `ptr`, removed from the table; throws INVALID_ARGUMENT for a
  // pointer this device never returned.
  uint64_t remove(void* ptr);
  uint64_t in_use() const;
  uint64_t peak() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<void*, uint64_t> sizes_;
  uint64_t in_use_ = 0, peak_ = 0;
};
AllocationTable& allocations(int32_t device);

}  // namespace oar_gpu
