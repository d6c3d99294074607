// What an OpenCL op file needs to run a kernel: the device and queue of a
// kernel call, a cached kernel, argument setting in signature order, an
// NDRange launch. Arguments are set and the kernel enqueued under one lock because a
// cl_kernel's arguments are shared state; OpenCL copies them at enqueue time.
#pragma once

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "cl_device.h"
#include "oar/kp/opencl/elementwise.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "program_cache.h"

namespace oar_ocl {

struct OpContext {
  Device& dev;
  cl_command_queue queue;
  const oar::sdk::KernelArgs& args;
};

inline OpContext op_context(const oar::sdk::KernelArgs& a) {
  Device& d = device(a.context().device_index);
  return {d, queue_of(d, a.context().stream), a};
}

inline cl_mem mem_of(const oar_tensor_view& v) { return static_cast<cl_mem>(v.data); }

std::mutex& launch_mutex();

class Launch {
 public:
  explicit Launch(cl_kernel k) : kernel_(k), lock_(launch_mutex()) {}

  Launch& mem(cl_mem m) { return raw(&m, sizeof(m)); }
  // A tensor view as (buffer, element offset): the two parameters every
  // emitted kernel declares per operand.
  Launch& view(const oar_tensor_view& v) {
    mem(mem_of(v));
    return scalar<cl_long>(v.offset);
  }
  template <class T> Launch& scalar(const T& v) { return raw(&v, sizeof(T)); }
  Launch& raw(const void* p, size_t n) {
    check(clSetKernelArg(kernel_, arg_++, n, p), "clSetKernelArg");
    return *this;
  }
  Launch& layout(const std::vector<int64_t>& packed) { return raw(packed.data(), packed.size() * sizeof(int64_t)); }
  Launch& local(size_t bytes) {
    check(clSetKernelArg(kernel_, arg_++, bytes, nullptr), "clSetKernelArg(__local)");
    return *this;
  }
  // 1-D launch over n work-items, rounded up to the work-group size (kernels
  // bound-check). A fixed group size matters: drivers like PoCL compile one
  // variant per group size, so letting the driver pick per n multiplies compiles.
  void run(cl_command_queue q, size_t n, size_t local = kDefaultGroup) {
    if (n == 0) return;
    size_t global = (n + local - 1) / local * local;
    check(clEnqueueNDRangeKernel(q, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
  }
  static constexpr size_t kDefaultGroup = 64;
  void run3d(cl_command_queue q, const size_t n[3], const size_t l[3]) {
    if (n[0] == 0 || n[1] == 0 || n[2] == 0) return;
    size_t global[3];
    for (int d = 0; d < 3; ++d) global[d] = (n[d] + l[d] - 1) / l[d] * l[d];
    check(clEnqueueNDRangeKernel(q, kernel_, 3, nullptr, global, l, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
  }

 private:
  cl_kernel kernel_;
  std::lock_guard<std::mutex> lock_;
  cl_uint arg_ = 0;
};

// A scalar kernel argument in the compute type of `dtype` (kp::compute_t:
// float for f16/bf16), converted like the CPU converts an op's float
// attribute: integers clamp to their range and truncate toward zero.
struct Scalar {
  alignas(8) unsigned char bytes[8] = {};
  size_t size = 0;
};
inline Scalar compute_scalar(oar_dtype_t dtype, double v) {
  Scalar s;
  auto put = [&](auto x) {
    std::memcpy(s.bytes, &x, sizeof(x));
    s.size = sizeof(x);
  };
  auto in_range = [&](double lo, double hi) { return v != v ? 0.0 : std::min(std::max(v, lo), hi); };
  switch (dtype) {
    case OAR_DTYPE_F64: put(v); break;
    case OAR_DTYPE_I8: put(cl_char(in_range(-128, 127))); break;
    case OAR_DTYPE_U8: put(cl_uchar(in_range(0, 255))); break;
    case OAR_DTYPE_I32: put(cl_int(in_range(-2147483648.0, 2147483647.0))); break;
    case OAR_DTYPE_I64: put(cl_long(in_range(-9.2e18, 9.2e18))); break;
    case OAR_DTYPE_BOOL: put(cl_uchar(v != 0)); break;
    default: put(float(v)); break;
  }
  return s;
}

// A kernel from the process-wide cache; `key` must identify the source.
inline cl_kernel get_kernel(Device& dev, const std::string& key, const std::function<std::string()>& make_source,
                            const char* name) {
  return program_cache().kernel(dev, key, make_source, name);
}

}  // namespace oar_ocl
