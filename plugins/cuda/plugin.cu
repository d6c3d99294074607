// liboar_plugin_cuda.so (and, built by hipcc, liboar_plugin_hip.so): NVIDIA
// (AMD) GPUs through the CUDA (HIP) runtime. This file answers the device,
// memory, stream and event parts of the ABI; kernels live one group per file
// in ops/ and are registered from register_kernels below.
//
// Memory is cudaMalloc'd (the core's caching allocator sits on top and reuses
// blocks in stream order). A stream is a non-blocking runtime stream; the NULL
// stream is the device's legacy default stream, which synchronous copies are
// ordered after. Events are runtime events with timing.
#include <dlpack/dlpack.h>

#include <cstdio>
#include <string>

#include "gpu_device.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "oar/plugin_sdk/plugin_entry.h"
#include "ops/ops.h"
#if !defined(OAR_GPU_HIP)
#include "collectives.h"
#include "vendor_handles.h"
#endif

namespace {

using namespace oar_gpu;

// Runs an ABI entry body; exceptions become status + message (nothing may
// cross the C boundary).
template <class Body>
oar_status_t guard(Body&& body) {
  try {
    body();
    return OAR_STATUS_OK;
  } catch (const oar::sdk::KernelError& e) {
    if (host()) host()->set_error(e.code, e.message.c_str());
    return e.code;
  } catch (const std::exception& e) {
    if (host()) host()->set_error(OAR_STATUS_INTERNAL, e.what());
    return OAR_STATUS_INTERNAL;
  }
}

void require(bool ok, const char* what) {
  if (!ok) oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, what);
}

char* at(void* p, uint64_t offset) { return static_cast<char*>(p) + offset; }
const char* at(const void* p, uint64_t offset) { return static_cast<const char*>(p) + offset; }

// A synchronous copy: enqueued on the legacy default stream (so it follows
// that stream's work) and waited for, which cudaMemcpy does not do for d2d.
void copy_sync(void* dst, const void* src, uint64_t size, OAR_GPU(MemcpyKind) kind, const char* what) {
  if (size == 0) return;
  check(OAR_GPU(MemcpyAsync)(dst, src, size, kind, nullptr), what);
  check(OAR_GPU(StreamSynchronize)(nullptr), what);
}

bool overlaps(const char* a, const char* b, uint64_t size) { return a < b + size && b < a + size; }

// ---- devices ----

oar_status_t device_count(int32_t* out) {
  return guard([&] {
    require(out, "device_count: null output");
    *out = oar_gpu::device_count();
  });
}

oar_status_t device_get_properties(int32_t device, oar_device_properties* out) {
  return guard([&] {
    require_device(device);
    require(out, "device_get_properties: null output");
    gpu::DeviceProp prop{};
    check(OAR_GPU(GetDeviceProperties)(&prop, device), "GetDeviceProperties");
    std::snprintf(out->name, sizeof(out->name), "%.*s", int(sizeof(out->name) - 1), prop.name);
#if defined(OAR_GPU_HIP_CPU)
    std::snprintf(out->vendor, sizeof(out->vendor), "HIP-CPU (GPU kernels emulated on the host CPU)");
#elif defined(OAR_GPU_HIP)
    std::snprintf(out->vendor, sizeof(out->vendor), "AMD (%s)", prop.gcnArchName);
#else
    std::snprintf(out->vendor, sizeof(out->vendor), "NVIDIA (sm_%d%d)", prop.major, prop.minor);
#endif
    out->total_memory = prop.totalGlobalMem;
    out->compute_units = prop.multiProcessorCount;
    if (OAR_STRUCT_HAS(out, oar_device_properties, dlpack_device_type)) {
#if defined(OAR_GPU_HIP_CPU)
      out->dlpack_device_type = kDLCPU;  // HIP-CPU's device memory is host memory
#elif defined(OAR_GPU_HIP)
      out->dlpack_device_type = kDLROCM;
#else
      out->dlpack_device_type = kDLCUDA;
#endif
    }
  });
}

oar_status_t device_get_capabilities(int32_t device, oar_device_capabilities* out) {
  return guard([&] {
    require_device(device);
    require(out, "device_get_capabilities: null output");
    out->dtype_mask = (uint64_t(1) << OAR_DTYPE_COUNT) - 1;
    out->flags = OAR_CAPABILITY_ASYNC_COPY | OAR_CAPABILITY_EVENT_TIMING | OAR_CAPABILITY_PINNED_HOST_MEMORY |
                 OAR_CAPABILITY_PEER_COPY;
#if !defined(OAR_GPU_HIP)
    out->flags |= OAR_CAPABILITY_COLLECTIVES;
#endif
    out->memory_stats_fields =
        OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK | OAR_MEMORY_STAT_TOTAL | OAR_MEMORY_STAT_FREE;
    out->alloc_alignment = 256;  // cudaMalloc's guarantee
  });
}

oar_status_t device_synchronize(int32_t device) {
  return guard([&] {
    DeviceGuard g(device);
    check(OAR_GPU(DeviceSynchronize)(), "DeviceSynchronize");
  });
}

// ---- memory ----

oar_status_t memory_allocate(int32_t device, uint64_t size, void** out) {
  return guard([&] {
    require(out, "memory_allocate: null output");
    *out = nullptr;
    if (size == 0) return;
    DeviceGuard g(device);
    void* p = nullptr;
    gpu::Error e = OAR_GPU(Malloc)(&p, size);
    // HIP-CPU's hipMalloc is malloc and reports success when malloc returns
    // NULL: an allocation that yields no memory is out of memory, whatever it says.
    if (e == OAR_GPU(Success) && p == nullptr) e = OAR_GPU(ErrorMemoryAllocation);
    if (e == OAR_GPU(ErrorMemoryAllocation)) {
      (void)OAR_GPU(GetLastError)();
      oar::sdk::fail(OAR_STATUS_OUT_OF_MEMORY, "out of memory on " OAR_GPU_BACKEND_NAME ":" + std::to_string(device) +
                                                   ": cannot allocate " + std::to_string(size) + " bytes (" +
                                                   std::to_string(allocations(device).in_use()) + " in use)");
    }
    check(e, "Malloc");
    allocations(device).add(p, size);
    *out = p;
  });
}

oar_status_t memory_free(int32_t device, void* ptr) {
  return guard([&] {
    if (!ptr) return;
    DeviceGuard g(device);
    allocations(device).remove(ptr);
    check(OAR_GPU(Free)(ptr), "Free");
  });
}

oar_status_t pinned_allocate(int32_t device, uint64_t size, void** out) {
  return guard([&] {
    require(out, "memory_allocate_host_pinned: null output");
    *out = nullptr;
    if (size == 0) return;
    DeviceGuard g(device);
    check(gpu::host_alloc(out, size), "host_alloc");
  });
}

oar_status_t pinned_free(int32_t device, void* ptr) {
  return guard([&] {
    if (!ptr) return;
    DeviceGuard g(device);
    check(gpu::host_free(ptr), "host_free");
  });
}

oar_status_t copy_h2d(int32_t device, void* dst, uint64_t dst_offset, const void* src, uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    copy_sync(at(dst, dst_offset), src, size, OAR_GPU(MemcpyHostToDevice), "memory_copy_h2d");
  });
}

oar_status_t copy_d2h(int32_t device, void* dst, const void* src, uint64_t src_offset, uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    copy_sync(dst, at(src, src_offset), size, OAR_GPU(MemcpyDeviceToHost), "memory_copy_d2h");
  });
}

// Overlapping ranges go through a temporary: the runtime's copies assume disjoint ranges.
void copy_d2d_on(gpu::Stream stream, char* dst, const char* src, uint64_t size) {
  if (size == 0 || dst == src) return;
  if (!overlaps(dst, src, size)) {
    check(OAR_GPU(MemcpyAsync)(dst, src, size, OAR_GPU(MemcpyDeviceToDevice), stream), "memory_copy_d2d");
    return;
  }
  void* tmp = nullptr;
  check(OAR_GPU(MallocAsync)(&tmp, size, stream), "MallocAsync (overlapping copy)");
  check(OAR_GPU(MemcpyAsync)(tmp, src, size, OAR_GPU(MemcpyDeviceToDevice), stream), "memory_copy_d2d");
  check(OAR_GPU(MemcpyAsync)(dst, tmp, size, OAR_GPU(MemcpyDeviceToDevice), stream), "memory_copy_d2d");
  check(OAR_GPU(FreeAsync)(tmp, stream), "FreeAsync (overlapping copy)");
}

oar_status_t copy_d2d(int32_t device, void* dst, uint64_t dst_offset, const void* src, uint64_t src_offset,
                      uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    copy_d2d_on(nullptr, at(dst, dst_offset), at(src, src_offset), size);
    check(OAR_GPU(StreamSynchronize)(nullptr), "memory_copy_d2d");
  });
}

oar_status_t copy_h2d_async(int32_t device, oar_stream_t stream, void* dst, uint64_t dst_offset, const void* src,
                            uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    if (size)
      check(OAR_GPU(MemcpyAsync)(at(dst, dst_offset), src, size, OAR_GPU(MemcpyHostToDevice), to_stream(stream)),
            "memory_copy_h2d_async");
  });
}

oar_status_t copy_d2h_async(int32_t device, oar_stream_t stream, void* dst, const void* src, uint64_t src_offset,
                            uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    if (size)
      check(OAR_GPU(MemcpyAsync)(dst, at(src, src_offset), size, OAR_GPU(MemcpyDeviceToHost), to_stream(stream)),
            "memory_copy_d2h_async");
  });
}

oar_status_t copy_d2d_async(int32_t device, oar_stream_t stream, void* dst, uint64_t dst_offset, const void* src,
                            uint64_t src_offset, uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    copy_d2d_on(to_stream(stream), at(dst, dst_offset), at(src, src_offset), size);
  });
}

// Between two GPUs (or within one): cudaMemcpyPeer works without peer access
// being enabled (the driver stages it), and queues behind pending work on
// both devices; the wait on both makes it synchronous like memory_copy_d2d.
oar_status_t copy_peer(int32_t dst_device, void* dst, uint64_t dst_offset, int32_t src_device, const void* src,
                       uint64_t src_offset, uint64_t size) {
  return guard([&] {
    require_device(src_device);
    DeviceGuard g(dst_device);
    if (size == 0) return;
    require(dst && src, "memory_copy_peer: null buffer");
    if (dst_device == src_device) {
      copy_d2d_on(nullptr, at(dst, dst_offset), at(src, src_offset), size);
      check(OAR_GPU(StreamSynchronize)(nullptr), "memory_copy_peer");
      return;
    }
    check(OAR_GPU(MemcpyPeer)(at(dst, dst_offset), dst_device, at(src, src_offset), src_device, size), "MemcpyPeer");
    check(OAR_GPU(DeviceSynchronize)(), "memory_copy_peer (destination)");
    DeviceGuard source(src_device);
    check(OAR_GPU(DeviceSynchronize)(), "memory_copy_peer (source)");
  });
}

oar_status_t memory_set(int32_t device, oar_stream_t stream, void* ptr, uint64_t offset, uint8_t value,
                        uint64_t size) {
  return guard([&] {
    DeviceGuard g(device);
    if (size) check(OAR_GPU(MemsetAsync)(at(ptr, offset), value, size, to_stream(stream)), "memory_set");
  });
}

oar_status_t memory_get_stats(int32_t device, oar_memory_stats* out) {
  return guard([&] {
    require(out, "memory_get_stats: null output");
    DeviceGuard g(device);
    size_t free_bytes = 0, total_bytes = 0;
    check(OAR_GPU(MemGetInfo)(&free_bytes, &total_bytes), "MemGetInfo");
    out->in_use = allocations(device).in_use();
    out->peak = allocations(device).peak();
    out->limit = 0;
    out->total = total_bytes;
    out->free = free_bytes;
  });
}

// ---- streams and events ----

oar_status_t stream_create(int32_t device, oar_stream_t* out) {
  return guard([&] {
    require(out, "stream_create: null output");
    DeviceGuard g(device);
    gpu::Stream s = nullptr;
    check(OAR_GPU(StreamCreateWithFlags)(&s, OAR_GPU(StreamNonBlocking)), "StreamCreateWithFlags");
    *out = reinterpret_cast<oar_stream_t>(s);
  });
}

oar_status_t stream_destroy(int32_t device, oar_stream_t stream) {
  return guard([&] {
    if (!stream) return;  // the default stream is not ours to destroy
    DeviceGuard g(device);
    check(OAR_GPU(StreamDestroy)(to_stream(stream)), "StreamDestroy");
  });
}

oar_status_t stream_synchronize(int32_t device, oar_stream_t stream) {
  return guard([&] {
    DeviceGuard g(device);
    check(OAR_GPU(StreamSynchronize)(to_stream(stream)), "StreamSynchronize");
  });
}

// NOT_READY travels as a status without a message: it is an answer, not an error.
oar_status_t ready_or_error(gpu::Error e, const char* what) {
  if (e == OAR_GPU(ErrorNotReady)) {
    (void)OAR_GPU(GetLastError)();
    return OAR_STATUS_NOT_READY;
  }
  return guard([&] { check(e, what); });
}

oar_status_t stream_query(int32_t device, oar_stream_t stream) {
  gpu::Error e = OAR_GPU(Success);
  oar_status_t st = guard([&] {
    DeviceGuard g(device);
    e = OAR_GPU(StreamQuery)(to_stream(stream));
  });
  return st ? st : ready_or_error(e, "StreamQuery");
}

oar_status_t stream_wait_event(int32_t device, oar_stream_t stream, oar_event_t event) {
  return guard([&] {
    require(event, "stream_wait_event: null event");
    DeviceGuard g(device);
    check(OAR_GPU(StreamWaitEvent)(to_stream(stream), reinterpret_cast<gpu::Event>(event), 0), "StreamWaitEvent");
  });
}

oar_status_t event_create(int32_t device, oar_event_t* out) {
  return guard([&] {
    require(out, "event_create: null output");
    DeviceGuard g(device);
    gpu::Event e = nullptr;
    check(OAR_GPU(EventCreate)(&e), "EventCreate");
    *out = reinterpret_cast<oar_event_t>(e);
  });
}

oar_status_t event_destroy(int32_t device, oar_event_t event) {
  return guard([&] {
    if (!event) return;
    DeviceGuard g(device);
    check(OAR_GPU(EventDestroy)(reinterpret_cast<gpu::Event>(event)), "EventDestroy");
  });
}

oar_status_t event_record(int32_t device, oar_event_t event, oar_stream_t stream) {
  return guard([&] {
    require(event, "event_record: null event");
    DeviceGuard g(device);
    check(OAR_GPU(EventRecord)(reinterpret_cast<gpu::Event>(event), to_stream(stream)), "EventRecord");
  });
}

oar_status_t event_synchronize(int32_t device, oar_event_t event) {
  return guard([&] {
    require(event, "event_synchronize: null event");
    DeviceGuard g(device);
    check(OAR_GPU(EventSynchronize)(reinterpret_cast<gpu::Event>(event)), "EventSynchronize");
  });
}

oar_status_t event_query(int32_t device, oar_event_t event) {
  gpu::Error e = OAR_GPU(Success);
  oar_status_t st = guard([&] {
    require(event, "event_query: null event");
    DeviceGuard g(device);
    e = OAR_GPU(EventQuery)(reinterpret_cast<gpu::Event>(event));
  });
  return st ? st : ready_or_error(e, "EventQuery");
}

oar_status_t event_elapsed_ms(int32_t device, oar_event_t start, oar_event_t end, float* out) {
  return guard([&] {
    require(start && end && out, "event_elapsed_ms: null argument");
    DeviceGuard g(device);
    gpu::Error e = OAR_GPU(EventElapsedTime)(out, reinterpret_cast<gpu::Event>(start), reinterpret_cast<gpu::Event>(end));
    if (e == OAR_GPU(ErrorInvalidResourceHandle) || e == OAR_GPU(ErrorNotReady)) {
      (void)OAR_GPU(GetLastError)();
      oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "event_elapsed_ms needs two recorded, completed events");
    }
    check(e, "EventElapsedTime");
  });
}

// Kernels are registered even with no device, so the kernel table (and the
// test that it covers every CPU kernel) can be checked on a machine without a GPU.
oar_status_t register_kernels(const oar_kernel_registrar* registrar) {
  if (!registrar || registrar->struct_size < sizeof(oar_kernel_registrar)) {
    if (host()) host()->set_error(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: bad registrar");
    return OAR_STATUS_INVALID_ARGUMENT;
  }
  return register_all_kernels(registrar);
}

std::string g_version;

#if !defined(OAR_GPU_HIP)
// The flags this plugin reads (vendor_handles.h), declared to the core (ABI 1.2).
const oar_flag_definition kAllowTf32Definition = {
    sizeof(oar_flag_definition), kAllowTf32Flag, OAR_FLAG_TYPE_BOOL, "0",
    "Let f32 matmul (cuBLAS) and convolution (cuDNN) round inputs to TF32 on tensor cores "
    "(faster, ~1e-3 relative error). Read at each kernel call.",
    nullptr};
const oar_flag_definition kCudnnExhaustiveSearchDefinition = {
    sizeof(oar_flag_definition), kCudnnExhaustiveSearchFlag, OAR_FLAG_TYPE_BOOL, "0",
    "Pick each cuDNN convolution algorithm by timing every candidate (once per problem) instead "
    "of by cuDNN's heuristics. Read at each convolution call.",
    nullptr};
const oar_flag_definition kCudnnWorkspaceLimitDefinition = {
    sizeof(oar_flag_definition), kCudnnWorkspaceLimitFlag, OAR_FLAG_TYPE_INT, "1024",
    "Largest workspace, in MiB, a cuDNN convolution algorithm may use; algorithms needing more "
    "are skipped. Read at each convolution call.",
    nullptr};
const oar_flag_definition kNcclTimeoutDefinition = {
    sizeof(oar_flag_definition), kNcclTimeoutFlag, OAR_FLAG_TYPE_INT, "600000",
    "Longest wait, in ms, of a collectives call for its peers: communicator set-up (comm_init), "
    "teardown (comm_destroy) and an operation that cannot be enqueued; past it the call returns "
    "OAR_STATUS_TIMEOUT and a half-made communicator is aborted. Read at each call.",
    nullptr};
const oar_flag_definition kVendorSolversDefinition = {
    sizeof(oar_flag_definition), kVendorSolversFlag, OAR_FLAG_TYPE_BOOL, "0",
    "Run the linalg factorizations on cuSOLVER and rnn_layer on cuDNN's RNN API instead of the "
    "kernel families. Off until those kernels have passed the conformance suite on a GPU "
    "(docs/gpu_check.md). Read at each kernel call.",
    nullptr};
const oar_flag_definition* const kFlags[] = {&kAllowTf32Definition, &kCudnnExhaustiveSearchDefinition,
                                             &kCudnnWorkspaceLimitDefinition, &kNcclTimeoutDefinition,
                                             &kVendorSolversDefinition};
#endif

oar_plugin_api g_api;

// Called by the SDK's entry once the host's ABI version is accepted.
oar_status_t fill_api(const oar_host_api* host, oar_plugin_api* table) {
  set_host(host);
  oar_plugin_api& api = *table;
  int runtime = 0, driver = 0;
  (void)OAR_GPU(RuntimeGetVersion)(&runtime);
  (void)OAR_GPU(DriverGetVersion)(&driver);
  g_version = "1.0.0 (" OAR_GPU_BACKEND_NAME " runtime " + std::to_string(runtime) + ", driver " +
              std::to_string(driver) + ")";
  if (oar_gpu::device_count() == 0) g_version += "; no device: " + no_device_reason();
  api.plugin_version = g_version.c_str();
  api.device_type = OAR_GPU_BACKEND_NAME;
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
  api.memory_copy_peer = copy_peer;
#if !defined(OAR_GPU_HIP)
  api.collectives = nccl_collectives();
  api.flag_count = sizeof(kFlags) / sizeof(kFlags[0]);
  api.flags = kFlags;
#endif
  if (oar_gpu::device_count() == 0 && host->log)
    host->log(OAR_LOG_INFO, (OAR_GPU_BACKEND_NAME " plugin: no device (" + no_device_reason() + ")").c_str());
  return OAR_STATUS_OK;
}

}  // namespace

OAR_PLUGIN_DEFINE_ENTRY(OAR_GPU_BACKEND_NAME, &g_api, fill_api)
