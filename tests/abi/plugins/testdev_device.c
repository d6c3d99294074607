/*
 * The fake "testdev" device shared by the ABI test plugins (see
 * testdev_device.h). Work runs synchronously on the calling thread, so a
 * stream is only an ordering token and every event is complete once recorded;
 * the optional async copies, pinned memory and event timing are left NULL to
 * show that the core accepts a table without them.
 */
#include "testdev_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TESTDEV_ALIGNMENT 64u

static const oar_host_api* g_host = NULL;
static int32_t g_device_count = 1;
static oar_capability_flags_t g_flags = OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY;
static uint64_t g_in_use = 0;
static uint64_t g_peak = 0;

/* Sits just before each aligned block: what to free and how much it counted. */
typedef struct testdev_block_header {
  void* raw;
  uint64_t size;
} testdev_block_header;

typedef struct testdev_stream {
  int32_t device;
} testdev_stream;

typedef struct testdev_event {
  int32_t recorded;
} testdev_event;

void testdev_set_host(const oar_host_api* host) { g_host = host; }
const oar_host_api* testdev_host(void) { return g_host; }
uint64_t testdev_bytes_in_use(void) { return g_in_use; }
void testdev_set_device_count(int32_t count) { g_device_count = count; }
void testdev_set_capability_flags(oar_capability_flags_t flags) { g_flags = flags; }

oar_status_t testdev_fail(oar_status_t code, const char* message) {
  if (g_host != NULL && g_host->set_error != NULL) g_host->set_error(code, message);
  return code;
}

oar_status_t testdev_check_device(int32_t device) {
  char msg[96];
  if (device >= 0 && device < g_device_count) return OAR_STATUS_OK;
  if (g_device_count == 1)
    sprintf(msg, "testdev has one device (index 0), got %d", (int)device);
  else
    sprintf(msg, "testdev has %d devices (indices 0..%d), got %d", (int)g_device_count,
            (int)g_device_count - 1, (int)device);
  return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, msg);
}

/* Says so when asked: tests/abi/test_abi_two_devices.cpp checks the core calls it at exit. */
static void td_shutdown(void) {
  if (getenv("OAR_TESTDEV_REPORT_SHUTDOWN") != NULL) fputs("testdev: shutdown called\n", stderr);
}

static oar_status_t td_device_count(int32_t* out_count) {
  if (out_count == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "device_count: null output");
  *out_count = g_device_count;
  return OAR_STATUS_OK;
}

static oar_status_t td_device_get_properties(int32_t device, oar_device_properties* out) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (out == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "device_get_properties: null output");
  sprintf(out->name, "testdev fake device %d", (int)device);
  strcpy(out->vendor, "oar ABI tests");
  out->total_memory = 0;
  out->compute_units = 1;
  return OAR_STATUS_OK;
}

static oar_status_t td_device_get_capabilities(int32_t device, oar_device_capabilities* out) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (out == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "device_get_capabilities: null output");
  out->dtype_mask = (uint64_t)1 << OAR_DTYPE_F32;
  out->flags = g_flags;
  out->memory_stats_fields = OAR_MEMORY_STAT_IN_USE | OAR_MEMORY_STAT_PEAK;
  out->alloc_alignment = TESTDEV_ALIGNMENT;
  return OAR_STATUS_OK;
}

static oar_status_t td_device_synchronize(int32_t device) { return testdev_check_device(device); }

/* malloc plus manual alignment: aligned_alloc is C11, and these plugins are C99. */
static oar_status_t td_memory_allocate(int32_t device, uint64_t size, void** out_ptr) {
  oar_status_t st = testdev_check_device(device);
  uint64_t total;
  char* raw;
  uintptr_t aligned;
  testdev_block_header* header;
  if (st != OAR_STATUS_OK) return st;
  if (out_ptr == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_allocate: null output");
  *out_ptr = NULL;
  if (size == 0) return OAR_STATUS_OK;
  total = size + sizeof(testdev_block_header) + TESTDEV_ALIGNMENT;
  if (total < size || total != (uint64_t)(size_t)total)
    return testdev_fail(OAR_STATUS_OUT_OF_MEMORY, "memory_allocate: size overflows");
  raw = (char*)malloc((size_t)total);
  if (raw == NULL) return testdev_fail(OAR_STATUS_OUT_OF_MEMORY, "memory_allocate: malloc failed");
  aligned = ((uintptr_t)(raw + sizeof(testdev_block_header)) + TESTDEV_ALIGNMENT - 1) &
            ~(uintptr_t)(TESTDEV_ALIGNMENT - 1);
  header = (testdev_block_header*)aligned - 1;
  header->raw = raw;
  header->size = size;
  g_in_use += size;
  if (g_in_use > g_peak) g_peak = g_in_use;
  *out_ptr = (void*)aligned;
  return OAR_STATUS_OK;
}

static oar_status_t td_memory_free(int32_t device, void* ptr) {
  oar_status_t st = testdev_check_device(device);
  testdev_block_header* header;
  if (st != OAR_STATUS_OK) return st;
  if (ptr == NULL) return OAR_STATUS_OK;
  header = (testdev_block_header*)ptr - 1;
  g_in_use -= header->size;
  free(header->raw);
  return OAR_STATUS_OK;
}

static oar_status_t td_copy_h2d(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                uint64_t size) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (size == 0) return OAR_STATUS_OK;
  if (dst == NULL || src == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_copy_h2d: null pointer");
  memcpy((char*)dst + dst_offset, src, (size_t)size);
  return OAR_STATUS_OK;
}

static oar_status_t td_copy_d2h(int32_t device, void* dst, const void* src, uint64_t src_offset,
                                uint64_t size) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (size == 0) return OAR_STATUS_OK;
  if (dst == NULL || src == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_copy_d2h: null pointer");
  memcpy(dst, (const char*)src + src_offset, (size_t)size);
  return OAR_STATUS_OK;
}

static oar_status_t td_copy_d2d(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                uint64_t src_offset, uint64_t size) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (size == 0) return OAR_STATUS_OK;
  if (dst == NULL || src == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_copy_d2d: null pointer");
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, (size_t)size);
  return OAR_STATUS_OK;
}

static oar_status_t td_memory_set(int32_t device, oar_stream_t stream, void* ptr, uint64_t offset,
                                  uint8_t value, uint64_t size) {
  oar_status_t st = testdev_check_device(device);
  (void)stream;
  if (st != OAR_STATUS_OK) return st;
  if (size == 0) return OAR_STATUS_OK;
  if (ptr == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_set: null pointer");
  memset((char*)ptr + offset, value, (size_t)size);
  return OAR_STATUS_OK;
}

static oar_status_t td_memory_get_stats(int32_t device, oar_memory_stats* out) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (out == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_get_stats: null output");
  out->in_use = g_in_use;
  out->peak = g_peak;
  out->limit = out->total = out->free = 0;
  return OAR_STATUS_OK;
}

static oar_status_t td_stream_create(int32_t device, oar_stream_t* out_stream) {
  oar_status_t st = testdev_check_device(device);
  testdev_stream* s;
  if (st != OAR_STATUS_OK) return st;
  if (out_stream == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "stream_create: null output");
  s = (testdev_stream*)malloc(sizeof(*s));
  if (s == NULL) return testdev_fail(OAR_STATUS_OUT_OF_MEMORY, "stream_create: malloc failed");
  s->device = device;
  *out_stream = (oar_stream_t)(void*)s;
  return OAR_STATUS_OK;
}

static oar_status_t td_stream_destroy(int32_t device, oar_stream_t stream) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  free((void*)stream);
  return OAR_STATUS_OK;
}

/* Work is synchronous, so every stream is always idle. */
static oar_status_t td_stream_synchronize(int32_t device, oar_stream_t stream) {
  (void)stream;
  return testdev_check_device(device);
}

static oar_status_t td_stream_query(int32_t device, oar_stream_t stream) {
  (void)stream;
  return testdev_check_device(device);
}

static oar_status_t td_stream_wait_event(int32_t device, oar_stream_t stream, oar_event_t event) {
  oar_status_t st = testdev_check_device(device);
  (void)stream;
  if (st != OAR_STATUS_OK) return st;
  if (event == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "stream_wait_event: null event");
  return OAR_STATUS_OK;
}

static oar_status_t td_event_create(int32_t device, oar_event_t* out_event) {
  oar_status_t st = testdev_check_device(device);
  testdev_event* e;
  if (st != OAR_STATUS_OK) return st;
  if (out_event == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "event_create: null output");
  e = (testdev_event*)malloc(sizeof(*e));
  if (e == NULL) return testdev_fail(OAR_STATUS_OUT_OF_MEMORY, "event_create: malloc failed");
  e->recorded = 0;
  *out_event = (oar_event_t)(void*)e;
  return OAR_STATUS_OK;
}

static oar_status_t td_event_destroy(int32_t device, oar_event_t event) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  free((void*)event);
  return OAR_STATUS_OK;
}

static oar_status_t td_event_record(int32_t device, oar_event_t event, oar_stream_t stream) {
  oar_status_t st = testdev_check_device(device);
  (void)stream;
  if (st != OAR_STATUS_OK) return st;
  if (event == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "event_record: null event");
  ((testdev_event*)(void*)event)->recorded = 1;
  return OAR_STATUS_OK;
}

static oar_status_t td_event_synchronize(int32_t device, oar_event_t event) {
  oar_status_t st = testdev_check_device(device);
  if (st != OAR_STATUS_OK) return st;
  if (event == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "event_synchronize: null event");
  return OAR_STATUS_OK;
}

static oar_status_t td_event_query(int32_t device, oar_event_t event) {
  return td_event_synchronize(device, event);
}

static oar_status_t td_register_no_kernels(const oar_kernel_registrar* registrar) {
  if (registrar == NULL) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: null registrar");
  return OAR_STATUS_OK;
}

/* out = -in for f32 views of any shape and element strides. */
static oar_status_t neg_f32(const oar_kernel_context* ctx) {
  const oar_tensor_view* in;
  const oar_tensor_view* out;
  int64_t index[OAR_MAX_DIMS] = {0};
  int64_t total = 1;
  int64_t n;
  int32_t d;
  if (ctx == NULL || ctx->num_inputs != 1 || ctx->num_outputs != 1)
    return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "testdev neg: expects one input and one output");
  in = &ctx->inputs[0];
  out = &ctx->outputs[0];
  if (in->dtype != OAR_DTYPE_F32 || out->dtype != OAR_DTYPE_F32 || in->ndim != out->ndim ||
      in->ndim > OAR_MAX_DIMS)
    return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "testdev neg: expects f32 views of equal rank");
  for (d = 0; d < out->ndim; ++d) total *= out->shape[d];
  for (n = 0; n < total; ++n) {
    int64_t src = in->offset, dst = out->offset;
    for (d = 0; d < out->ndim; ++d) {
      src += index[d] * in->strides[d];
      dst += index[d] * out->strides[d];
    }
    ((float*)out->data)[dst] = -((const float*)in->data)[src];
    /* Row-major increment of the multi-index. */
    for (d = out->ndim - 1; d >= 0; --d) {
      if (++index[d] < out->shape[d]) break;
      index[d] = 0;
    }
  }
  return OAR_STATUS_OK;
}

oar_status_t testdev_register_neg(const oar_kernel_registrar* registrar) {
  static const oar_dtype_t sig[1] = {OAR_DTYPE_F32};
  oar_kernel_def def;
  if (!OAR_STRUCT_HAS(registrar, oar_kernel_registrar, register_kernel))
    return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: registrar too old");
  def.struct_size = sizeof(def);
  def.op_name = "neg";
  def.dtypes = sig;
  def.num_dtypes = 1;
  def.priority = 0;
  def.impl_name = "testdev-loop";
  def.fn = neg_f32;
  def.supports = NULL;
  return registrar->register_kernel(registrar->registry, &def);
}

void testdev_fill_entries(oar_plugin_api* api) {
  api->plugin_version = "0.1.0 (ABI test plugin)";
  api->device_type = "testdev";
  api->shutdown = td_shutdown;
  api->device_count = td_device_count;
  api->device_get_properties = td_device_get_properties;
  api->device_get_capabilities = td_device_get_capabilities;
  api->device_synchronize = td_device_synchronize;
  api->memory_allocate = td_memory_allocate;
  api->memory_free = td_memory_free;
  api->memory_allocate_host_pinned = NULL;
  api->memory_free_host_pinned = NULL;
  api->memory_copy_h2d = td_copy_h2d;
  api->memory_copy_d2h = td_copy_d2h;
  api->memory_copy_d2d = td_copy_d2d;
  api->memory_copy_h2d_async = NULL;
  api->memory_copy_d2h_async = NULL;
  api->memory_copy_d2d_async = NULL;
  api->memory_set = td_memory_set;
  api->memory_get_stats = td_memory_get_stats;
  api->stream_create = td_stream_create;
  api->stream_destroy = td_stream_destroy;
  api->stream_synchronize = td_stream_synchronize;
  api->stream_query = td_stream_query;
  api->stream_wait_event = td_stream_wait_event;
  api->event_create = td_event_create;
  api->event_destroy = td_event_destroy;
  api->event_record = td_event_record;
  api->event_synchronize = td_event_synchronize;
  api->event_query = td_event_query;
  api->event_elapsed_ms = NULL;
  api->register_kernels = td_register_no_kernels;
  api->collectives = NULL;
}
