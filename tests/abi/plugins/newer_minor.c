/*
 * liboar_plugin_newer_minor.so: a working "testdev" plugin built as if
 * against ABI 1.(N+1), one minor version newer than the core. Its table embeds
 * the v1.0 oar_plugin_api first and appends a field the core does not know,
 * and struct_size says so. Minor versions only append, so the core must load
 * it, ignore the tail, and run the "neg" f32 kernel it registers.
 */
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

/* Runs after the SDK's helper accepted the host (of our major) and set the
 * 1.N base table; a newer-minor plugin would check host->struct_size before
 * using any host field newer than 1.0. */
static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  testdev_set_host(host);
  testdev_fill_entries(api);
  api->struct_size = sizeof(g_api);
  api->plugin_version = "1.1.0 (ABI test plugin, one minor ahead of the core)";
  api->register_kernels = testdev_register_neg;
  g_api.device_reset = td_device_reset;
  return OAR_STATUS_OK;
}

OAR_PLUGIN_DEFINE_ENTRY_FOR_ABI("newer_minor", OAR_ABI_VERSION_MAJOR, OAR_ABI_VERSION_MINOR + 1,
                                &g_api.base, fill)
