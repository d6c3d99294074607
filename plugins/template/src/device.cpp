// The runtime entries of the pretend device: devices, memory, streams and
// events. A vendor replaces each body with a call into its driver; the
// comments say which call. The pretend device keeps its memory in host RAM
// but does not declare it host-accessible, so the core moves data only
// through these copies, as it would for a real accelerator.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "template_plugin.h"

namespace tmpl {

namespace {

constexpr uint64_t kAlignment = 64;

struct DeviceMemory {  // driver: the device's allocator and its statistics
  std::mutex mutex;
  std::unordered_map<void*, uint64_t> sizes;
  uint64_t in_use = 0, peak = 0;
};
DeviceMemory& memory() {
  static DeviceMemory m;
  return m;
}

struct Event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

oar_status_t check_device(int32_t device) {
  if (device == 0) return OAR_STATUS_OK;
  return fail(OAR_STATUS_INVALID_ARGUMENT, "template has one device (index 0), got " + std::to_string(device));
}

oar_status_t device_count(int32_t* out) {
  if (!out) return fail(OAR_STATUS_INVALID_ARGUMENT, "device_count: null output");
  *out = 1;  // driver: enumerate the devices
  return OAR_STATUS_OK;
}

oar_status_t device_get_properties(int32_t device, oar_device_properties* out) {
  if (oar_status_t st = check_device(device)) return st;
  if (!out) return fail(OAR_STATUS_INVALID_ARGUMENT, "device_get_properties: null output");
  std::snprintf(out->name, sizeof(out->name), "pretend accelerator (host memory)");
  std::snprintf(out->vendor, sizeof(out->vendor), "oar vendor template");
  out->total_memory = 0;
  out->compute_units = 1;
  return OAR_STATUS_OK;
}

oar_status_t device_get_capabilities(int32_t device, oar_device_capabilities* out) {
  if (oar_status_t st = check_device(device)) return st;
  if (!out) return fail(OAR_STATUS_INVALID_ARGUMENT, "device_get_capabilities: null output");
  out->dtype_mask = (uint64_t(1) << OAR_DTYPE_COUNT) - 1;
  out->flags = OAR_CAPABILITY_ASYNC_COPY | OAR_CAPABILITY_EVENT_TIMING;
  out->memory_stats_fields = OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK;
  out->alloc_alignment = kAlignment;
  return OAR_STATUS_OK;
}

// The pretend device runs every call to completion before returning, so
// synchronising is only checking the argument. driver: wait for the queues.
oar_status_t device_synchronize(int32_t device) { return check_device(device); }

oar_status_t memory_allocate(int32_t device, uint64_t size, void** out) {
  if (oar_status_t st = check_device(device)) return st;
  if (!out) return fail(OAR_STATUS_INVALID_ARGUMENT, "memory_allocate: null output");
  *out = nullptr;
  if (size == 0) return OAR_STATUS_OK;
  const uint64_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* p = rounded < size ? nullptr : std::aligned_alloc(kAlignment, rounded);  // driver: device malloc
  if (!p) return fail(OAR_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes");
  std::lock_guard<std::mutex> lock(memory().mutex);
  memory().sizes[p] = size;
  memory().in_use += size;
  memory().peak = std::max(memory().peak, memory().in_use);
  *out = p;
  return OAR_STATUS_OK;
}

oar_status_t memory_free(int32_t device, void* ptr) {
  if (oar_status_t st = check_device(device)) return st;
  if (!ptr) return OAR_STATUS_OK;
  {
    std::lock_guard<std::mutex> lock(memory().mutex);
    auto it = memory().sizes.find(ptr);
    if (it == memory().sizes.end()) return fail(OAR_STATUS_INVALID_ARGUMENT, "memory_free: not a buffer of this device");
    memory().in_use -= it->second;
    memory().sizes.erase(it);
  }
  std::free(ptr);  // driver: device free
  return OAR_STATUS_OK;
}

oar_status_t pinned_allocate(int32_t device, uint64_t size, void** out) {
  if (oar_status_t st = check_device(device)) return st;
  *out = size ? std::malloc(size) : nullptr;  // driver: page-locked host memory
  return size && !*out ? fail(OAR_STATUS_OUT_OF_MEMORY, "cannot allocate pinned memory") : OAR_STATUS_OK;
}
oar_status_t pinned_free(int32_t device, void* ptr) {
  if (oar_status_t st = check_device(device)) return st;
  std::free(ptr);
  return OAR_STATUS_OK;
}

// All copies are memmove: ranges may overlap within one buffer (the ABI's rule).
oar_status_t copy(int32_t device, void* dst, const void* src, uint64_t size) {
  if (oar_status_t st = check_device(device)) return st;
  if (size && (!dst || !src)) return fail(OAR_STATUS_INVALID_ARGUMENT, "copy: null buffer");
  if (size) std::memmove(dst, src, size);  // driver: DMA, then wait for it
  return OAR_STATUS_OK;
}
oar_status_t copy_h2d(int32_t d, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy(d, static_cast<char*>(dst) + off, src, n);
}
oar_status_t copy_d2h(int32_t d, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy(d, dst, static_cast<const char*>(src) + off, n);
}
oar_status_t copy_d2d(int32_t d, void* dst, uint64_t doff, const void* src, uint64_t soff, uint64_t n) {
  return copy(d, static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, n);
}
// driver: enqueue the DMA on `stream` and return at once.
oar_status_t copy_h2d_async(int32_t d, oar_stream_t, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy_h2d(d, dst, off, src, n);
}
oar_status_t copy_d2h_async(int32_t d, oar_stream_t, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy_d2h(d, dst, src, off, n);
}
oar_status_t copy_d2d_async(int32_t d, oar_stream_t, void* dst, uint64_t doff, const void* src, uint64_t soff,
                            uint64_t n) {
  return copy_d2d(d, dst, doff, src, soff, n);
}

oar_status_t memory_set(int32_t device, oar_stream_t, void* ptr, uint64_t off, uint8_t value, uint64_t size) {
  if (oar_status_t st = check_device(device)) return st;
  if (size && !ptr) return fail(OAR_STATUS_INVALID_ARGUMENT, "memory_set: null buffer");
  if (size) std::memset(static_cast<char*>(ptr) + off, value, size);  // driver: device memset
  return OAR_STATUS_OK;
}

oar_status_t memory_get_stats(int32_t device, oar_memory_stats* out) {
  if (oar_status_t st = check_device(device)) return st;
  std::lock_guard<std::mutex> lock(memory().mutex);
  out->in_use = memory().in_use;
  out->peak = memory().peak;
  out->limit = out->total = out->free = 0;
  return OAR_STATUS_OK;
}

// driver: a stream is a hardware queue; the pretend device needs only a token.
oar_status_t stream_create(int32_t device, oar_stream_t* out) {
  if (oar_status_t st = check_device(device)) return st;
  *out = reinterpret_cast<oar_stream_t>(new int(0));
  return OAR_STATUS_OK;
}
oar_status_t stream_destroy(int32_t device, oar_stream_t s) {
  if (oar_status_t st = check_device(device)) return st;
  delete reinterpret_cast<int*>(s);
  return OAR_STATUS_OK;
}
oar_status_t stream_synchronize(int32_t device, oar_stream_t) { return check_device(device); }
oar_status_t stream_wait_event(int32_t device, oar_stream_t, oar_event_t e) {
  if (oar_status_t st = check_device(device)) return st;
  return e ? OAR_STATUS_OK : fail(OAR_STATUS_INVALID_ARGUMENT, "stream_wait_event: null event");
}

oar_status_t event_create(int32_t device, oar_event_t* out) {
  if (oar_status_t st = check_device(device)) return st;
  *out = reinterpret_cast<oar_event_t>(new Event());
  return OAR_STATUS_OK;
}
oar_status_t event_destroy(int32_t device, oar_event_t e) {
  if (oar_status_t st = check_device(device)) return st;
  delete reinterpret_cast<Event*>(e);
  return OAR_STATUS_OK;
}
oar_status_t event_record(int32_t device, oar_event_t e, oar_stream_t) {
  if (oar_status_t st = check_device(device)) return st;
  if (!e) return fail(OAR_STATUS_INVALID_ARGUMENT, "event_record: null event");
  *reinterpret_cast<Event*>(e) = {std::chrono::steady_clock::now(), true};  // driver: a timestamp on the queue
  return OAR_STATUS_OK;
}
oar_status_t event_synchronize(int32_t device, oar_event_t e) {
  if (oar_status_t st = check_device(device)) return st;
  return e ? OAR_STATUS_OK : fail(OAR_STATUS_INVALID_ARGUMENT, "event: null event");
}
oar_status_t event_elapsed_ms(int32_t device, oar_event_t a, oar_event_t b, float* out) {
  if (oar_status_t st = check_device(device)) return st;
  auto *ea = reinterpret_cast<Event*>(a), *eb = reinterpret_cast<Event*>(b);
  if (!ea || !eb || !out) return fail(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: null argument");
  if (!ea->recorded || !eb->recorded) return fail(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms: an event was never recorded");
  *out = std::chrono::duration<float, std::milli>(eb->time - ea->time).count();
  return OAR_STATUS_OK;
}

}  // namespace

void fill_runtime_entries(oar_plugin_api& api) {
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
  api.stream_query = stream_synchronize;
  api.stream_wait_event = stream_wait_event;
  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.event_synchronize = event_synchronize;
  api.event_query = event_synchronize;
  api.event_elapsed_ms = event_elapsed_ms;
}

}  // namespace tmpl
