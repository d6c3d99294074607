// liboar_plugin_cpu.so: the CPU device. This file answers the device, memory,
// stream and event parts of the ABI; kernels live one group per file in ops/
// and are registered from register_kernels below.
//
// The CPU runs kernels synchronously on the calling thread (with OpenMP
// inside), so a stream is an ordering token: all work on it is complete when
// the call that submitted it returns, and events record host timestamps.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include <dlpack/dlpack.h>
#include <dnnl.hpp>

#include "oar/abi/oar_plugin.h"
#include "oar/plugin_sdk/plugin_entry.h"
#include "ops/ops.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

const oar_host_api* g_host = nullptr;
constexpr uint64_t kAlignment = 64;
std::atomic<uint64_t> g_in_use{0}, g_peak{0};

oar_status_t error(oar_status_t code, const std::string& msg) {
  if (g_host) g_host->set_error(code, msg.c_str());
  return code;
}

oar_status_t check_device(int32_t device) {
  if (device != 0) return error(OAR_STATUS_INVALID_ARGUMENT, "cpu has one device (index 0), got " + std::to_string(device));
  return OAR_STATUS_OK;
}

oar_status_t device_count(int32_t* out) {
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "device_count: null output");
  *out = 1;
  return OAR_STATUS_OK;
}

oar_status_t device_get_properties(int32_t device, oar_device_properties* out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "device_get_properties: null output");
  std::snprintf(out->name, sizeof(out->name), "host CPU (%u threads)", std::thread::hardware_concurrency());
  std::snprintf(out->vendor, sizeof(out->vendor), "oneDNN %d.%d.%d", dnnl_version()->major,
                dnnl_version()->minor, dnnl_version()->patch);
  out->total_memory = 0;
  out->compute_units = static_cast<int32_t>(std::thread::hardware_concurrency());
  if (OAR_STRUCT_HAS(out, oar_device_properties, dlpack_device_type)) out->dlpack_device_type = kDLCPU;
  return OAR_STATUS_OK;
}

oar_status_t device_get_capabilities(int32_t device, oar_device_capabilities* out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "device_get_capabilities: null output");
  out->dtype_mask = (uint64_t(1) << OAR_DTYPE_COUNT) - 1;
  out->flags = OAR_CAPABILITY_ASYNC_COPY | OAR_CAPABILITY_EVENT_TIMING |
               OAR_CAPABILITY_PINNED_HOST_MEMORY | OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY;
  out->memory_stats_fields = OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK;
  out->alloc_alignment = kAlignment;
  return OAR_STATUS_OK;
}

oar_status_t device_synchronize(int32_t device) { return check_device(device); }

// Allocation header keeps the size for stats; the block itself stays 64-aligned.
oar_status_t memory_allocate(int32_t device, uint64_t size, void** out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "memory_allocate: null output");
  *out = nullptr;
  if (size == 0) return OAR_STATUS_OK;
  uint64_t total = size + kAlignment;
  if (total < size) return error(OAR_STATUS_OUT_OF_MEMORY, "allocation size overflows");
  total = (total + kAlignment - 1) / kAlignment * kAlignment;
  void* raw = std::aligned_alloc(kAlignment, total);
  if (!raw) return error(OAR_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes of host memory");
  *static_cast<uint64_t*>(raw) = size;
  uint64_t now = g_in_use += size;
  uint64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {}
  *out = static_cast<char*>(raw) + kAlignment;
  return OAR_STATUS_OK;
}

oar_status_t memory_free(int32_t device, void* ptr) {
  if (auto st = check_device(device)) return st;
  if (!ptr) return OAR_STATUS_OK;
  void* raw = static_cast<char*>(ptr) - kAlignment;
  g_in_use -= *static_cast<uint64_t*>(raw);
  std::free(raw);
  return OAR_STATUS_OK;
}

oar_status_t pinned_allocate(int32_t device, uint64_t size, void** out) { return memory_allocate(device, size, out); }
oar_status_t pinned_free(int32_t device, void* ptr) { return memory_free(device, ptr); }

oar_status_t copy_h2d(int32_t device, void* dst, uint64_t dst_off, const void* src, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && (!dst || !src)) return error(OAR_STATUS_INVALID_ARGUMENT, "copy: null pointer");
  if (size) std::memcpy(static_cast<char*>(dst) + dst_off, src, size);
  return OAR_STATUS_OK;
}
oar_status_t copy_d2h(int32_t device, void* dst, const void* src, uint64_t src_off, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && (!dst || !src)) return error(OAR_STATUS_INVALID_ARGUMENT, "copy: null pointer");
  if (size) std::memcpy(dst, static_cast<const char*>(src) + src_off, size);
  return OAR_STATUS_OK;
}
oar_status_t copy_d2d(int32_t device, void* dst, uint64_t dst_off, const void* src, uint64_t src_off, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && (!dst || !src)) return error(OAR_STATUS_INVALID_ARGUMENT, "copy: null pointer");
  if (size) std::memmove(static_cast<char*>(dst) + dst_off, static_cast<const char*>(src) + src_off, size);
  return OAR_STATUS_OK;
}
oar_status_t copy_h2d_async(int32_t device, oar_stream_t, void* dst, uint64_t dst_off, const void* src, uint64_t size) {
  return copy_h2d(device, dst, dst_off, src, size);
}
oar_status_t copy_d2h_async(int32_t device, oar_stream_t, void* dst, const void* src, uint64_t src_off, uint64_t size) {
  return copy_d2h(device, dst, src, src_off, size);
}
oar_status_t copy_d2d_async(int32_t device, oar_stream_t, void* dst, uint64_t dst_off, const void* src,
                            uint64_t src_off, uint64_t size) {
  return copy_d2d(device, dst, dst_off, src, src_off, size);
}
oar_status_t memory_set(int32_t device, oar_stream_t, void* ptr, uint64_t off, uint8_t value, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && !ptr) return error(OAR_STATUS_INVALID_ARGUMENT, "memory_set: null pointer");
  if (size) std::memset(static_cast<char*>(ptr) + off, value, size);
  return OAR_STATUS_OK;
}
oar_status_t memory_get_stats(int32_t device, oar_memory_stats* out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "memory_get_stats: null output");
  out->in_use = g_in_use.load();
  out->peak = g_peak.load();
  out->limit = out->total = out->free = 0;
  return OAR_STATUS_OK;
}

// Streams and events: see the file comment for why these are light.
struct oar_stream_marker { int unused; };
struct CpuEvent {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

oar_status_t stream_create(int32_t device, oar_stream_t* out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "stream_create: null output");
  *out = reinterpret_cast<oar_stream_t>(new oar_stream_marker{0});
  return OAR_STATUS_OK;
}
oar_status_t stream_destroy(int32_t device, oar_stream_t s) {
  if (auto st = check_device(device)) return st;
  delete reinterpret_cast<oar_stream_marker*>(s);
  return OAR_STATUS_OK;
}
oar_status_t stream_synchronize(int32_t device, oar_stream_t) { return check_device(device); }
oar_status_t stream_query(int32_t device, oar_stream_t) { return check_device(device); }
oar_status_t stream_wait_event(int32_t device, oar_stream_t, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  if (!e) return error(OAR_STATUS_INVALID_ARGUMENT, "stream_wait_event: null event");
  return OAR_STATUS_OK;
}
oar_status_t event_create(int32_t device, oar_event_t* out) {
  if (auto st = check_device(device)) return st;
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, "event_create: null output");
  *out = reinterpret_cast<oar_event_t>(new CpuEvent());
  return OAR_STATUS_OK;
}
oar_status_t event_destroy(int32_t device, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  delete reinterpret_cast<CpuEvent*>(e);
  return OAR_STATUS_OK;
}
oar_status_t event_record(int32_t device, oar_event_t e, oar_stream_t) {
  if (auto st = check_device(device)) return st;
  if (!e) return error(OAR_STATUS_INVALID_ARGUMENT, "event_record: null event");
  auto* ev = reinterpret_cast<CpuEvent*>(e);
  ev->time = std::chrono::steady_clock::now();
  ev->recorded = true;
  return OAR_STATUS_OK;
}
oar_status_t event_synchronize(int32_t device, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  if (!e) return error(OAR_STATUS_INVALID_ARGUMENT, "event_synchronize: null event");
  return OAR_STATUS_OK;
}
oar_status_t event_query(int32_t device, oar_event_t e) { return event_synchronize(device, e); }
oar_status_t event_elapsed_ms(int32_t device, oar_event_t a, oar_event_t b, float* out) {
  if (auto st = check_device(device)) return st;
  auto* ea = reinterpret_cast<CpuEvent*>(a);
  auto* eb = reinterpret_cast<CpuEvent*>(b);
  if (!ea || !eb || !out) return error(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: null argument");
  if (!ea->recorded || !eb->recorded)
    return error(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: both events must be recorded");
  *out = std::chrono::duration<float, std::milli>(eb->time - ea->time).count();
  return OAR_STATUS_OK;
}

oar_status_t register_kernels(const oar_kernel_registrar* registrar) {
  if (!registrar || registrar->struct_size < sizeof(oar_kernel_registrar))
    return error(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: bad registrar");
  return oar_cpu::register_all_kernels(registrar);
}

void shutdown() {}

std::string g_version;

oar_plugin_api g_api;

// Called by the SDK's entry once the host's ABI version is accepted.
oar_status_t fill_api(const oar_host_api* host, oar_plugin_api* table) {
  g_host = host;
#ifdef _OPENMP
  char buf[32] = {0};
  if (host->get_flag("OAR_NUM_THREADS", buf, sizeof(buf)) && std::atoi(buf) > 0)
    omp_set_num_threads(std::atoi(buf));
#endif
  oar_plugin_api& api = *table;
  g_version = "1.0.0 (oneDNN " + std::to_string(dnnl_version()->major) + "." +
              std::to_string(dnnl_version()->minor) + "." + std::to_string(dnnl_version()->patch) + ")";
  api.plugin_version = g_version.c_str();
  api.device_type = "cpu";
  api.shutdown = shutdown;
  api.device_count = device_count;
  api.device_get_properties = device_get_properties;
  api.device_get_capabilities = device_get_capabilities;
  api.device_synchronize = device_synchronize;
  api.memory_allocate = memory_allocate;
  api.memory_free = memory_free;
  api.memory_allocate_host_pinned = pinned_allocate;
  api.memory_free_host_pinned = pinned_free;
  api.memory_copy_h2d = copy_h2d;
  api.memory_copy_d2h = copy_d2h;
  api.memory_copy_d2d = copy_d2d;
  api.memory_copy_h2d_async = copy_h2d_async;
  api.memory_copy_d2h_async = copy_d2h_async;
  api.memory_copy_d2d_async = copy_d2d_async;
  api.memory_set = memory_set;
  api.memory_get_stats = memory_get_stats;
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.stream_query = stream_query;
  api.stream_wait_event = stream_wait_event;
  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.event_synchronize = event_synchronize;
  api.event_query = event_query;
  api.event_elapsed_ms = event_elapsed_ms;
  api.register_kernels = register_kernels;
  api.collectives = nullptr;
  return OAR_STATUS_OK;
}

}  // namespace

const oar_host_api* oar_cpu::host() { return g_host; }

OAR_PLUGIN_DEFINE_ENTRY("cpu_mkldnn", &g_api, fill_api)
