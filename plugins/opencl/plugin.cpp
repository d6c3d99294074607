// liboar_plugin_opencl.so: OpenCL devices (PoCL in CI). This file answers the
// device, memory, stream and event parts of the ABI; kernels live one group
// per file in ops/ and are registered from register_kernels below.
//
// Memory is a cl_mem per allocation (views carry element offsets, so no
// pointer arithmetic is ever done on a handle). A stream is an in-order
// command queue with profiling; the NULL stream is the device's default queue.
// Events are markers enqueued on a queue, timed with the queue's profiling.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <dlpack/dlpack.h>

#include "cl_device.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "oar/plugin_sdk/plugin_entry.h"
#include "ops/ops.h"
#include "program_cache.h"

namespace {

using namespace oar_ocl;

const oar_host_api* g_host = nullptr;

// Runs an ABI entry body; exceptions become status + message (nothing may
// cross the C boundary).
template <class Body>
oar_status_t guard(Body&& body) {
  try {
    body();
    return OAR_STATUS_OK;
  } catch (const oar::sdk::KernelError& e) {
    if (g_host) g_host->set_error(e.code, e.message.c_str());
    return e.code;
  } catch (const std::exception& e) {
    if (g_host) g_host->set_error(OAR_STATUS_INTERNAL, e.what());
    return OAR_STATUS_INTERNAL;
  }
}

void require(bool ok, const char* what) {
  if (!ok) oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, what);
}

oar_status_t device_count(int32_t* out) {
  return guard([&] {
    require(out, "device_count: null output");
    *out = int32_t(devices().size());
  });
}

oar_status_t device_get_properties(int32_t index, oar_device_properties* out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "device_get_properties: null output");
    std::snprintf(out->name, sizeof(out->name), "%s", d.name.c_str());
    std::snprintf(out->vendor, sizeof(out->vendor), "%s (%s)", d.vendor.c_str(), d.platform_name.c_str());
    out->total_memory = d.global_memory;
    out->compute_units = d.compute_units;
    if (OAR_STRUCT_HAS(out, oar_device_properties, dlpack_device_type)) out->dlpack_device_type = kDLOpenCL;
  });
}

oar_status_t device_get_capabilities(int32_t index, oar_device_capabilities* out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "device_get_capabilities: null output");
    uint64_t mask = (uint64_t(1) << OAR_DTYPE_COUNT) - 1;
    if (!d.fp64) mask &= ~(uint64_t(1) << OAR_DTYPE_F64);
    out->dtype_mask = mask;
    out->flags = OAR_CAPABILITY_ASYNC_COPY | OAR_CAPABILITY_EVENT_TIMING | OAR_CAPABILITY_PINNED_HOST_MEMORY;
    out->memory_stats_fields = OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK | OAR_MEMORY_STAT_TOTAL;
    out->alloc_alignment = d.base_address_align;
  });
}

oar_status_t device_synchronize(int32_t index) {
  return guard([&] { check(clFinish(device(index).queue), "clFinish"); });
}

oar_status_t memory_allocate(int32_t index, uint64_t size, void** out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "memory_allocate: null output");
    *out = nullptr;
    if (size == 0) return;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(d.context, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (err != CL_SUCCESS)
      oar::sdk::fail(OAR_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes on " + d.name +
                                                   ": " + cl_error_name(err));
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      d.sizes[m] = size;
    }
    uint64_t now = d.in_use += size;
    uint64_t peak = d.peak.load();
    while (now > peak && !d.peak.compare_exchange_weak(peak, now)) {}
    *out = m;
  });
}

oar_status_t memory_free(int32_t index, void* ptr) {
  return guard([&] {
    Device& d = device(index);
    if (!ptr) return;
    cl_mem m = static_cast<cl_mem>(ptr);
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      auto it = d.sizes.find(m);
      require(it != d.sizes.end(), "memory_free: not a buffer of this device");
      d.in_use -= it->second;
      d.sizes.erase(it);
    }
    check(clReleaseMemObject(m), "clReleaseMemObject");
  });
}

// Pinned host memory: a host-allocated buffer mapped for the life of the block.
oar_status_t pinned_allocate(int32_t index, uint64_t size, void** out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "memory_allocate_host_pinned: null output");
    *out = nullptr;
    if (size == 0) return;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &err);
    check(err, "clCreateBuffer(pinned)");
    void* p = clEnqueueMapBuffer(d.queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) clReleaseMemObject(m);
    check(err, "clEnqueueMapBuffer(pinned)");
    std::lock_guard<std::mutex> lock(d.mutex);
    d.pinned[p] = m;
    *out = p;
  });
}

oar_status_t pinned_free(int32_t index, void* ptr) {
  return guard([&] {
    Device& d = device(index);
    if (!ptr) return;
    cl_mem m = nullptr;
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      auto it = d.pinned.find(ptr);
      require(it != d.pinned.end(), "memory_free_host_pinned: not a pinned block of this device");
      m = it->second;
      d.pinned.erase(it);
    }
    check(clEnqueueUnmapMemObject(d.queue, m, ptr, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    check(clFinish(d.queue), "clFinish");
    check(clReleaseMemObject(m), "clReleaseMemObject");
  });
}

void require_copy(uint64_t size, const void* a, const void* b) {
  if (size) require(a && b, "copy: null pointer or buffer");
}

oar_status_t copy_h2d_on(int32_t index, oar_stream_t stream, bool blocking, void* dst, uint64_t dst_off,
                         const void* src, uint64_t size) {
  return guard([&] {
    Device& d = device(index);
    require_copy(size, dst, src);
    if (!size) return;
    check(clEnqueueWriteBuffer(queue_of(d, stream), static_cast<cl_mem>(dst), blocking ? CL_TRUE : CL_FALSE, dst_off,
                               size, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  });
}
oar_status_t copy_d2h_on(int32_t index, oar_stream_t stream, bool blocking, void* dst, const void* src,
                         uint64_t src_off, uint64_t size) {
  return guard([&] {
    Device& d = device(index);
    require_copy(size, dst, src);
    if (!size) return;
    check(clEnqueueReadBuffer(queue_of(d, stream), static_cast<cl_mem>(const_cast<void*>(src)),
                              blocking ? CL_TRUE : CL_FALSE, src_off, size, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  });
}
// clEnqueueCopyBuffer refuses overlapping ranges of one buffer; those go
// through a temporary (memmove semantics, as on the CPU).
oar_status_t copy_d2d_on(int32_t index, oar_stream_t stream, bool blocking, void* dst, uint64_t dst_off,
                         const void* src, uint64_t src_off, uint64_t size) {
  return guard([&] {
    Device& d = device(index);
    require_copy(size, dst, src);
    if (!size) return;
    cl_command_queue q = queue_of(d, stream);
    cl_mem s = static_cast<cl_mem>(const_cast<void*>(src)), t = static_cast<cl_mem>(dst);
    bool overlap = s == t && src_off < dst_off + size && dst_off < src_off + size;
    if (overlap) {
      cl_int err = CL_SUCCESS;
      cl_mem tmp = clCreateBuffer(d.context, CL_MEM_READ_WRITE, size, nullptr, &err);
      check(err, "clCreateBuffer(copy temporary)");
      cl_int e1 = clEnqueueCopyBuffer(q, s, tmp, src_off, 0, size, 0, nullptr, nullptr);
      cl_int e2 = e1 ? e1 : clEnqueueCopyBuffer(q, tmp, t, 0, dst_off, size, 0, nullptr, nullptr);
      clReleaseMemObject(tmp);  // released once the queued copies finish
      check(e2, "clEnqueueCopyBuffer");
    } else {
      check(clEnqueueCopyBuffer(q, s, t, src_off, dst_off, size, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
    }
    if (blocking) check(clFinish(q), "clFinish");
  });
}

oar_status_t copy_h2d(int32_t i, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy_h2d_on(i, nullptr, true, dst, off, src, n);
}
oar_status_t copy_d2h(int32_t i, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy_d2h_on(i, nullptr, true, dst, src, off, n);
}
oar_status_t copy_d2d(int32_t i, void* dst, uint64_t doff, const void* src, uint64_t soff, uint64_t n) {
  return copy_d2d_on(i, nullptr, true, dst, doff, src, soff, n);
}
oar_status_t copy_h2d_async(int32_t i, oar_stream_t s, void* dst, uint64_t off, const void* src, uint64_t n) {
  return copy_h2d_on(i, s, false, dst, off, src, n);
}
oar_status_t copy_d2h_async(int32_t i, oar_stream_t s, void* dst, const void* src, uint64_t off, uint64_t n) {
  return copy_d2h_on(i, s, false, dst, src, off, n);
}
oar_status_t copy_d2d_async(int32_t i, oar_stream_t s, void* dst, uint64_t doff, const void* src, uint64_t soff,
                            uint64_t n) {
  return copy_d2d_on(i, s, false, dst, doff, src, soff, n);
}

oar_status_t memory_set(int32_t index, oar_stream_t stream, void* ptr, uint64_t off, uint8_t value, uint64_t size) {
  return guard([&] {
    Device& d = device(index);
    if (!size) return;
    require(ptr, "memory_set: null buffer");
    check(clEnqueueFillBuffer(queue_of(d, stream), static_cast<cl_mem>(ptr), &value, 1, off, size, 0, nullptr,
                              nullptr),
          "clEnqueueFillBuffer");
  });
}

oar_status_t memory_get_stats(int32_t index, oar_memory_stats* out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "memory_get_stats: null output");
    out->in_use = d.in_use.load();
    out->peak = d.peak.load();
    out->limit = 0;
    out->total = d.global_memory;
    out->free = 0;
  });
}

oar_status_t stream_create(int32_t index, oar_stream_t* out) {
  return guard([&] {
    Device& d = device(index);
    require(out, "stream_create: null output");
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(d.context, d.id, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue");
    *out = reinterpret_cast<oar_stream_t>(q);
  });
}
oar_status_t stream_destroy(int32_t index, oar_stream_t s) {
  return guard([&] {
    device(index);
    if (!s) return;  // the default stream lives as long as the device
    cl_command_queue q = reinterpret_cast<cl_command_queue>(s);
    check(clFinish(q), "clFinish");
    check(clReleaseCommandQueue(q), "clReleaseCommandQueue");
  });
}
oar_status_t stream_synchronize(int32_t index, oar_stream_t s) {
  return guard([&] { check(clFinish(queue_of(device(index), s)), "clFinish"); });
}
oar_status_t stream_query(int32_t index, oar_stream_t s) {
  // A marker's status tells whether everything before it finished.
  oar_status_t result = OAR_STATUS_OK;
  oar_status_t st = guard([&] {
    cl_command_queue q = queue_of(device(index), s);
    cl_event marker = nullptr;
    check(clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    check(clFlush(q), "clFlush");
    // The marker completes right after the work before it, but asynchronously:
    // give a queue whose work is done up to 20 ms (a loaded host schedules the
    // driver thread late) to retire it before answering "not ready".
    cl_int status = CL_QUEUED, err = CL_SUCCESS;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    do {
      err = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
      if (err != CL_SUCCESS || status <= CL_COMPLETE) break;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
    clReleaseEvent(marker);
    check(err, "clGetEventInfo");
    if (status < 0) oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, std::string("stream failed: ") + cl_error_name(status));
    if (status != CL_COMPLETE) result = OAR_STATUS_NOT_READY;
  });
  return st ? st : result;
}

struct Event {
  cl_event ev = nullptr;
};

oar_status_t stream_wait_event(int32_t index, oar_stream_t s, oar_event_t e) {
  return guard([&] {
    cl_command_queue q = queue_of(device(index), s);
    require(e, "stream_wait_event: null event");
    auto* ev = reinterpret_cast<Event*>(e);
    if (!ev->ev) return;  // never recorded: nothing to wait for
    check(clEnqueueBarrierWithWaitList(q, 1, &ev->ev, nullptr), "clEnqueueBarrierWithWaitList");
  });
}
oar_status_t event_create(int32_t index, oar_event_t* out) {
  return guard([&] {
    device(index);
    require(out, "event_create: null output");
    *out = reinterpret_cast<oar_event_t>(new Event());
  });
}
oar_status_t event_destroy(int32_t index, oar_event_t e) {
  return guard([&] {
    device(index);
    auto* ev = reinterpret_cast<Event*>(e);
    if (!ev) return;
    if (ev->ev) clReleaseEvent(ev->ev);
    delete ev;
  });
}
oar_status_t event_record(int32_t index, oar_event_t e, oar_stream_t s) {
  return guard([&] {
    cl_command_queue q = queue_of(device(index), s);
    require(e, "event_record: null event");
    auto* ev = reinterpret_cast<Event*>(e);
    cl_event marker = nullptr;
    check(clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    check(clFlush(q), "clFlush");
    if (ev->ev) clReleaseEvent(ev->ev);
    ev->ev = marker;
  });
}
oar_status_t event_synchronize(int32_t index, oar_event_t e) {
  return guard([&] {
    device(index);
    require(e, "event_synchronize: null event");
    auto* ev = reinterpret_cast<Event*>(e);
    if (ev->ev) check(clWaitForEvents(1, &ev->ev), "clWaitForEvents");
  });
}
oar_status_t event_query(int32_t index, oar_event_t e) {
  oar_status_t result = OAR_STATUS_OK;
  oar_status_t st = guard([&] {
    device(index);
    require(e, "event_query: null event");
    auto* ev = reinterpret_cast<Event*>(e);
    if (!ev->ev) return;
    cl_int status = CL_QUEUED;
    check(clGetEventInfo(ev->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
          "clGetEventInfo");
    if (status < 0) oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, std::string("event failed: ") + cl_error_name(status));
    if (status != CL_COMPLETE) result = OAR_STATUS_NOT_READY;
  });
  return st ? st : result;
}
oar_status_t event_elapsed_ms(int32_t index, oar_event_t a, oar_event_t b, float* out) {
  return guard([&] {
    device(index);
    auto* ea = reinterpret_cast<Event*>(a);
    auto* eb = reinterpret_cast<Event*>(b);
    require(ea && eb && out, "event_elapsed_ms: null argument");
    require(ea->ev && eb->ev, "event_elapsed_ms: both events must be recorded");
    check(clWaitForEvents(1, &ea->ev), "clWaitForEvents");
    check(clWaitForEvents(1, &eb->ev), "clWaitForEvents");
    cl_ulong ta = 0, tb = 0;
    check(clGetEventProfilingInfo(ea->ev, CL_PROFILING_COMMAND_END, sizeof(ta), &ta, nullptr),
          "clGetEventProfilingInfo");
    check(clGetEventProfilingInfo(eb->ev, CL_PROFILING_COMMAND_END, sizeof(tb), &tb, nullptr),
          "clGetEventProfilingInfo");
    *out = float((double(tb) - double(ta)) / 1e6);
  });
}

constexpr const char* kCacheDirFlag = "OAR_OPENCL_CACHE_DIR";

// The flags this plugin reads, declared to the core through the ABI (1.2).
const oar_flag_definition kCacheDirDefinition = {
    sizeof(oar_flag_definition), kCacheDirFlag, OAR_FLAG_TYPE_STRING, "",
    "Directory of the compiled-program cache; empty means $XDG_CACHE_HOME/oar/opencl (or "
    "~/.cache/oar/opencl), 'off' disables the disk cache. Read when the plugin loads.",
    nullptr};
const oar_flag_definition* const kFlags[] = {&kCacheDirDefinition};

std::string flag(const oar_host_api* host, const char* name) {
  char buf[1024] = {0};
  if (host == nullptr || !host->get_flag(name, buf, sizeof(buf))) return "";
  return buf;
}

// OAR_OPENCL_CACHE_DIR: empty is the XDG cache default, "off" disables.
std::string resolve_cache_dir(const std::string& setting) {
  if (setting == "off") return "";
  if (!setting.empty()) return setting;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/oar/opencl";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/oar/opencl";
  return "";
}

oar_status_t register_kernels(const oar_kernel_registrar* registrar) {
  if (!registrar || registrar->struct_size < sizeof(oar_kernel_registrar)) {
    if (g_host) g_host->set_error(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: bad registrar");
    return OAR_STATUS_INVALID_ARGUMENT;
  }
  // The first call after the core registered our flags, and before any program is built.
  set_program_cache_dir(resolve_cache_dir(flag(g_host, kCacheDirFlag)));
  if (devices().empty()) return OAR_STATUS_OK;
  return oar_ocl::register_all_kernels(registrar);
}

void shutdown() { release_devices(); }

std::string g_version;

oar_plugin_api g_api;

// Called by the SDK's entry once the host's ABI version is accepted.
oar_status_t fill_api(const oar_host_api* host, oar_plugin_api* table) {
  g_host = host;
  oar_plugin_api& api = *table;
  g_version = "1.0.0 (OpenCL 1.2 API";
  if (!devices().empty()) g_version += "; " + devices()[0]->platform_version;
  g_version += ")";
  api.plugin_version = g_version.c_str();
  api.device_type = "opencl";
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
  api.flag_count = sizeof(kFlags) / sizeof(kFlags[0]);
  api.flags = kFlags;
  return OAR_STATUS_OK;
}

}  // namespace

const oar_host_api* oar_ocl::host() { return g_host; }

OAR_PLUGIN_DEFINE_ENTRY("opencl", &g_api, fill_api)
