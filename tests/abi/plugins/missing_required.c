/*
 * liboar_plugin_missing_required.so: a complete testdev table except that the
 * required memory_allocate entry is NULL. The core must refuse it before
 * calling anything, naming the missing entry.
 */
#include "testdev_device.h"

static oar_plugin_api g_api;

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  testdev_set_host(host);
  testdev_fill_api(&g_api, "missing_required");
  g_api.device_type = "missingdev";
  g_api.memory_allocate = NULL;
  *out_plugin = &g_api;
  return OAR_STATUS_OK;
}
