// Deliberately broken device plugins, the fixtures that show oar-conformance
// names each defect and still finishes. One source, built once per defect
// (OAR_BROKEN_DEFECT): a correct host-memory device (the SDK's) with the
// primitives' elementwise kernels (primitive_kernels.cpp, compiled once),
// and one thing wrong:
//   1 wrong_kernel  f32 `add` computes a - b
//   2 drop_bytes    every copy leaves out its last byte
//   3 missing_sync  memory_set runs later on a worker thread, and nothing waits for it
//   4 segfault      f32 `mul` dereferences a null pointer
//   5 hang          f32 `sub` on 15 elements never returns
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "oar/plugin_sdk/host_device.hpp"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "oar/plugin_sdk/plugin_entry.h"

#ifndef OAR_BROKEN_DEFECT
#error "define OAR_BROKEN_DEFECT (1..5)"
#endif
#ifndef OAR_BROKEN_NAME
#error "define OAR_BROKEN_NAME"
#endif

oar_status_t oar_broken_register_primitives(const oar_kernel_registrar* r);  // primitive_kernels.cpp

namespace {

namespace hd = oar::sdk::host_device;
using oar::sdk::KernelArgs;
oar_plugin_api g_api;

// a - b over the broadcast views (the core expands both to the output's shape).
oar_status_t broken_kernel(const oar_kernel_context* ctx) {
  return oar::sdk::run_kernel(ctx, [](const KernelArgs& a) {
    const oar_tensor_view &x = a.input(0), &y = a.input(1), &out = a.output(0);
    const int64_t n = oar::sdk::numel(out);
    if (OAR_BROKEN_DEFECT == 4) *static_cast<volatile int*>(nullptr) = 1;
    if (OAR_BROKEN_DEFECT == 5 && n == 15)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    const float *px = static_cast<const float*>(x.data), *py = static_cast<const float*>(y.data);
    float* po = oar::sdk::data_of<float>(out);
    std::vector<int64_t> idx(size_t(out.ndim), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t ox = x.offset, oy = y.offset;
      for (int32_t d = 0; d < out.ndim; ++d) {
        ox += idx[size_t(d)] * (d < x.ndim ? x.strides[d] : 0);
        oy += idx[size_t(d)] * (d < y.ndim ? y.strides[d] : 0);
      }
      po[i] = px[ox] - py[oy];
      for (int32_t d = out.ndim; d-- > 0 && ++idx[size_t(d)] == out.shape[d];) idx[size_t(d)] = 0;
    }
  });
}

// Defect 2: copies that drop their last byte.
oar_status_t short_h2d(int32_t d, void* dst, uint64_t off, const void* src, uint64_t n) {
  return hd::copy_h2d(d, dst, off, src, n > 1 ? n - 1 : n);
}
oar_status_t short_d2h(int32_t d, void* dst, const void* src, uint64_t off, uint64_t n) {
  return hd::copy_d2h(d, dst, src, off, n > 1 ? n - 1 : n);
}
oar_status_t short_d2d(int32_t d, void* dst, uint64_t doff, const void* src, uint64_t soff, uint64_t n) {
  return hd::copy_d2d(d, dst, doff, src, soff, n > 1 ? n - 1 : n);
}

// Defect 3: a fill that lands 50 ms later, which no synchronisation waits for.
struct LateWork {
  std::mutex mutex;
  std::deque<std::function<void()>> queue;
  std::thread worker{[this] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::lock_guard<std::mutex> lock(mutex);
      while (!queue.empty()) {
        queue.front()();
        queue.pop_front();
      }
    }
  }};
  LateWork() { worker.detach(); }
};
oar_status_t late_memset(int32_t device, oar_stream_t, void* ptr, uint64_t off, uint8_t value, uint64_t size) {
  static LateWork* late = new LateWork();
  if (auto st = hd::check_device(device)) return st;
  std::lock_guard<std::mutex> lock(late->mutex);
  late->queue.push_back([=] { std::memset(static_cast<char*>(ptr) + off, value, size); });
  return OAR_STATUS_OK;
}

oar_status_t register_kernels(const oar_kernel_registrar* r) {
  if (oar_status_t st = oar_broken_register_primitives(r)) return st;
  const char* op = OAR_BROKEN_DEFECT == 1 ? "add" : OAR_BROKEN_DEFECT == 4 ? "mul" : OAR_BROKEN_DEFECT == 5 ? "sub" : nullptr;
  if (!op) return OAR_STATUS_OK;
  return oar::sdk::register_kernel(r, op, {OAR_DTYPE_F32, OAR_DTYPE_F32}, broken_kernel, "broken", 100);
}

oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  api->plugin_version = "1.0.0 (a conformance fixture: " OAR_BROKEN_NAME ")";
  api->device_type = OAR_BROKEN_NAME;
  hd::fill(*api, host, OAR_BROKEN_NAME);
  if (OAR_BROKEN_DEFECT == 2) {
    api->memory_copy_h2d = short_h2d;
    api->memory_copy_d2h = short_d2h;
    api->memory_copy_d2d = short_d2d;
  }
  if (OAR_BROKEN_DEFECT == 3) api->memory_set = late_memset;
  api->register_kernels = register_kernels;
  return OAR_STATUS_OK;
}

}  // namespace

OAR_PLUGIN_DEFINE_ENTRY(OAR_BROKEN_NAME, &g_api, fill)
