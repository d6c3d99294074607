/*
 * liboar_plugin_missing_required.so: a complete testdev table except that the
 * required memory_allocate entry is NULL. The core must refuse it before
 * calling anything, naming the missing entry.
 */
#include "testdev_device.h"

static oar_plugin_api g_api;

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  testdev_set_host(host);
  testdev_fill_entries(api);
  api->device_type = "missingdev";
  api->memory_allocate = NULL;
  return OAR_STATUS_OK;
}

OAR_PLUGIN_DEFINE_ENTRY("missing_required", &g_api, fill)
