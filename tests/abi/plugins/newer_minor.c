/*
 * liboar_plugin_newer_minor.so: a working "testdev" plugin built as if
 * against ABI 1.(N+1), one minor version newer than the core. Its table embeds
 * the v1.0 oar_plugin_api first and appends a field the core does not know,
 * and struct_size says so. Minor versions only append, so the core must load
 * it, ignore the tail, and run the "neg" f32 kernel it registers.
 */
#include <stdio.h>

#include "testdev_device.h"

/* What a 1.(N+1) header would declare: the 1.N table plus a new entry. */
typedef struct testdev_plugin_api_next {
  oar_plugin_api base; /* first, so a 1.N reader sees a valid table */
  oar_status_t (*device_reset)(int32_t device);
} testdev_plugin_api_next;

static testdev_plugin_api_next g_api;

static oar_status_t td_device_reset(int32_t device) {
  if (device != 0) return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "device_reset: bad device");
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

static oar_status_t register_kernels(const oar_kernel_registrar* registrar) {
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

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  testdev_set_host(host);
  /* A newer-minor plugin accepts an older-minor host of its own major; it
   * would check host->struct_size before using any host field newer than 1.0. */
  if (host->abi_major != OAR_ABI_VERSION_MAJOR) {
    char msg[160];
    sprintf(msg, "newer_minor plugin is built for ABI %d.%d but the host offers ABI %u.%u",
            OAR_ABI_VERSION_MAJOR, OAR_ABI_VERSION_MINOR + 1, (unsigned)host->abi_major,
            (unsigned)host->abi_minor);
    return testdev_fail(OAR_STATUS_VERSION_MISMATCH, msg);
  }
  testdev_fill_api(&g_api.base, "newer_minor");
  g_api.base.struct_size = sizeof(g_api);
  g_api.base.abi_minor = OAR_ABI_VERSION_MINOR + 1;
  g_api.base.plugin_version = "1.1.0 (ABI test plugin, one minor ahead of the core)";
  g_api.base.register_kernels = register_kernels;
  g_api.device_reset = td_device_reset;
  *out_plugin = &g_api.base;
  return OAR_STATUS_OK;
}
