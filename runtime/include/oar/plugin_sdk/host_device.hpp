// The device, memory, stream and event entries of a device whose memory is
// host memory and whose kernels run synchronously on the calling thread: a
// plugin author's starting point while the real memory layer is not written
// yet (bring-up, simulators, test plugins), and a reference for the ABI's
// memory and ordering semantics. One device (index 0); allocations are
// `kAlignment`-aligned; a stream is an ordering token (work on it is complete
// when the submitting call returns) and events record host timestamps.
//
//   oar_plugin_api api{};
//   oar::sdk::host_device::fill(api, host, "my_device");
//   api.register_kernels = ...;
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "oar/abi/oar_plugin.h"

namespace oar::sdk::host_device {

inline constexpr uint64_t kAlignment = 64;

struct State {
  const oar_host_api* host = nullptr;
  const char* name = "host";
  int32_t dlpack_device_type = 0;  // 0: not declared (the core reports kDLExtDev)
  std::atomic<uint64_t> in_use{0}, peak{0};
};
inline State& state() {
  static State s;  // one per plugin: plugins load with local symbol scope
  return s;
}

inline oar_status_t error(oar_status_t code, const std::string& msg) {
  if (state().host) state().host->set_error(code, msg.c_str());
  return code;
}
inline oar_status_t check_device(int32_t device) {
  if (device != 0)
    return error(OAR_STATUS_INVALID_ARGUMENT,
                 std::string(state().name) + " has one device (index 0), got " + std::to_string(device));
  return OAR_STATUS_OK;
}
inline oar_status_t check_out(const void* out, const char* call) {
  if (!out) return error(OAR_STATUS_INVALID_ARGUMENT, std::string(call) + ": null output");
  return OAR_STATUS_OK;
}

inline oar_status_t device_count(int32_t* out) {
  if (auto st = check_out(out, "device_count")) return st;
  *out = 1;
  return OAR_STATUS_OK;
}
inline oar_status_t device_get_properties(int32_t device, oar_device_properties* out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "device_get_properties")) return st;
  std::snprintf(out->name, sizeof(out->name), "%s (host memory)", state().name);
  std::snprintf(out->vendor, sizeof(out->vendor), "oar plugin SDK");
  out->total_memory = 0;
  out->compute_units = 1;
  if (OAR_STRUCT_HAS(out, oar_device_properties, dlpack_device_type))
    out->dlpack_device_type = state().dlpack_device_type;
  return OAR_STATUS_OK;
}
inline oar_status_t device_get_capabilities(int32_t device, oar_device_capabilities* out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "device_get_capabilities")) return st;
  out->dtype_mask = (uint64_t(1) << OAR_DTYPE_COUNT) - 1;
  out->flags = OAR_CAPABILITY_ASYNC_COPY | OAR_CAPABILITY_EVENT_TIMING | OAR_CAPABILITY_PINNED_HOST_MEMORY |
               OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY;
  out->memory_stats_fields = OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK;
  out->alloc_alignment = kAlignment;
  return OAR_STATUS_OK;
}
inline oar_status_t device_synchronize(int32_t device) { return check_device(device); }

// A header before each block keeps its size for the statistics.
inline oar_status_t memory_allocate(int32_t device, uint64_t size, void** out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "memory_allocate")) return st;
  *out = nullptr;
  if (size == 0) return OAR_STATUS_OK;
  uint64_t total = size + kAlignment;
  if (total < size) return error(OAR_STATUS_OUT_OF_MEMORY, "allocation size overflows");
  total = (total + kAlignment - 1) / kAlignment * kAlignment;
  void* raw = std::aligned_alloc(kAlignment, total);
  if (!raw) return error(OAR_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes");
  *static_cast<uint64_t*>(raw) = size;
  const uint64_t now = state().in_use += size;
  uint64_t peak = state().peak.load();
  while (now > peak && !state().peak.compare_exchange_weak(peak, now)) {
  }
  *out = static_cast<char*>(raw) + kAlignment;
  return OAR_STATUS_OK;
}
inline oar_status_t memory_free(int32_t device, void* ptr) {
  if (auto st = check_device(device)) return st;
  if (!ptr) return OAR_STATUS_OK;
  void* raw = static_cast<char*>(ptr) - kAlignment;
  state().in_use -= *static_cast<uint64_t*>(raw);
  std::free(raw);
  return OAR_STATUS_OK;
}

inline oar_status_t copy(int32_t device, void* dst, const void* src, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && (!dst || !src)) return error(OAR_STATUS_INVALID_ARGUMENT, "copy: null pointer");
  if (size) std::memmove(dst, src, size);
  return OAR_STATUS_OK;
}
inline oar_status_t copy_h2d(int32_t d, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy(d, dst ? static_cast<char*>(dst) + off : nullptr, src, n);
}
inline oar_status_t copy_d2h(int32_t d, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy(d, dst, src ? static_cast<const char*>(src) + off : nullptr, n);
}
inline oar_status_t copy_d2d(int32_t d, void* dst, uint64_t doff, const void* src, uint64_t soff, uint64_t n) {
  return copy(d, dst ? static_cast<char*>(dst) + doff : nullptr, src ? static_cast<const char*>(src) + soff : nullptr,
              n);
}
inline oar_status_t copy_h2d_async(int32_t d, oar_stream_t, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy_h2d(d, dst, off, src, n);
}
inline oar_status_t copy_d2h_async(int32_t d, oar_stream_t, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy_d2h(d, dst, src, off, n);
}
inline oar_status_t copy_d2d_async(int32_t d, oar_stream_t, void* dst, uint64_t doff, const void* src, uint64_t soff,
                                   uint64_t n) {
  return copy_d2d(d, dst, doff, src, soff, n);
}
inline oar_status_t memory_set(int32_t device, oar_stream_t, void* ptr, uint64_t off, uint8_t value, uint64_t size) {
  if (auto st = check_device(device)) return st;
  if (size && !ptr) return error(OAR_STATUS_INVALID_ARGUMENT, "memory_set: null pointer");
  if (size) std::memset(static_cast<char*>(ptr) + off, value, size);
  return OAR_STATUS_OK;
}
inline oar_status_t memory_get_stats(int32_t device, oar_memory_stats* out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "memory_get_stats")) return st;
  out->in_use = state().in_use.load();
  out->peak = state().peak.load();
  out->limit = out->total = out->free = 0;
  return OAR_STATUS_OK;
}

struct Stream {
  int unused = 0;
};
struct Event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

inline oar_status_t stream_create(int32_t device, oar_stream_t* out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "stream_create")) return st;
  *out = reinterpret_cast<oar_stream_t>(new Stream());
  return OAR_STATUS_OK;
}
inline oar_status_t stream_destroy(int32_t device, oar_stream_t s) {
  if (auto st = check_device(device)) return st;
  delete reinterpret_cast<Stream*>(s);
  return OAR_STATUS_OK;
}
inline oar_status_t stream_synchronize(int32_t device, oar_stream_t) { return check_device(device); }
inline oar_status_t stream_query(int32_t device, oar_stream_t) { return check_device(device); }
inline oar_status_t stream_wait_event(int32_t device, oar_stream_t, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  return e ? OAR_STATUS_OK : error(OAR_STATUS_INVALID_ARGUMENT, "stream_wait_event: null event");
}
inline oar_status_t event_create(int32_t device, oar_event_t* out) {
  if (auto st = check_device(device)) return st;
  if (auto st = check_out(out, "event_create")) return st;
  *out = reinterpret_cast<oar_event_t>(new Event());
  return OAR_STATUS_OK;
}
inline oar_status_t event_destroy(int32_t device, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  delete reinterpret_cast<Event*>(e);
  return OAR_STATUS_OK;
}
inline oar_status_t event_record(int32_t device, oar_event_t e, oar_stream_t) {
  if (auto st = check_device(device)) return st;
  if (!e) return error(OAR_STATUS_INVALID_ARGUMENT, "event_record: null event");
  auto* ev = reinterpret_cast<Event*>(e);
  ev->time = std::chrono::steady_clock::now();
  ev->recorded = true;
  return OAR_STATUS_OK;
}
inline oar_status_t event_synchronize(int32_t device, oar_event_t e) {
  if (auto st = check_device(device)) return st;
  return e ? OAR_STATUS_OK : error(OAR_STATUS_INVALID_ARGUMENT, "event_synchronize: null event");
}
inline oar_status_t event_elapsed_ms(int32_t device, oar_event_t a, oar_event_t b, float* out) {
  if (auto st = check_device(device)) return st;
  auto *ea = reinterpret_cast<Event*>(a), *eb = reinterpret_cast<Event*>(b);
  if (!ea || !eb || !out) return error(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: null argument");
  if (!ea->recorded || !eb->recorded)
    return error(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: both events must be recorded");
  *out = std::chrono::duration<float, std::milli>(eb->time - ea->time).count();
  return OAR_STATUS_OK;
}

// Fills every device, memory, stream and event entry of `api`; the plugin
// sets its identity, register_kernels and anything it does better.
// `dlpack_device_type`: the DLPack code of the memory (kDLCPU = 1 only for
// the process's CPU device; 0 leaves it undeclared).
inline void fill(oar_plugin_api& api, const oar_host_api* host, const char* name, int32_t dlpack_device_type = 0) {
  state().host = host;
  state().name = name;
  state().dlpack_device_type = dlpack_device_type;
  api.device_count = device_count;
  api.device_get_properties = device_get_properties;
  api.device_get_capabilities = device_get_capabilities;
  api.device_synchronize = device_synchronize;
  api.memory_allocate = memory_allocate;
  api.memory_free = memory_free;
  api.memory_allocate_host_pinned = memory_allocate;
  api.memory_free_host_pinned = memory_free;
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
  api.event_query = event_synchronize;
  api.event_elapsed_ms = event_elapsed_ms;
}

}  // namespace oar::sdk::host_device
