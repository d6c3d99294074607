// The OpenCL devices this plugin serves: every device of every platform the
// ICD loader lists, flattened into indices opencl:0, opencl:1, ... Each has
// its own context and an in-order, profiling-enabled default queue (the ABI's
// NULL stream). Also the error vocabulary: OpenCL codes become typed
// sdk::KernelError exceptions with the call and the code's name.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/abi/oar_plugin.h"

namespace oar_ocl {

struct Device {
  int32_t index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // the default stream
  std::string name, vendor, driver_version, device_version, platform_name, platform_version;
  bool fp64 = false;
  uint64_t global_memory = 0;
  int32_t compute_units = 0;
  size_t max_work_group = 1;
  size_t max_parameter_size = 1024;
  uint64_t base_address_align = 64;
  // Memory accounting for memory_get_stats.
  std::mutex mutex;
  std::unordered_map<cl_mem, uint64_t> sizes;
  std::unordered_map<void*, cl_mem> pinned;
  std::atomic<uint64_t> in_use{0}, peak{0};
};

const char* cl_error_name(cl_int err);

// Throws sdk::KernelError(DEVICE_ERROR or OUT_OF_MEMORY) when err != CL_SUCCESS.
void check(cl_int err, const char* what);

// Enumerates platforms and devices once; returns the reason when OpenCL
// itself is unusable (no ICD, no platform), which is not an error: 0 devices.
const std::vector<std::unique_ptr<Device>>& devices();
Device& device(int32_t index);  // throws INVALID_ARGUMENT naming the valid range
void release_devices();

// The queue behind an ABI stream (NULL is the device's default queue).
inline cl_command_queue queue_of(Device& d, oar_stream_t stream) {
  return stream ? reinterpret_cast<cl_command_queue>(stream) : d.queue;
}

}  // namespace oar_ocl
