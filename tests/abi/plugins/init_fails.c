/*
 * liboar_plugin_init_fails.so: a driver-backed plugin on a machine without its
 * device. Its fill function reports why through the host and returns the
 * code; the core must skip it and show the plugin's own message.
 */
#include "oar/plugin_sdk/plugin_entry.h"

static oar_plugin_api g_api;

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  (void)api;
  return oar_plugin_sdk_fail(host, OAR_STATUS_DEVICE_ERROR, "simulated driver failure: no device found");
}

OAR_PLUGIN_DEFINE_ENTRY("init_fails", &g_api, fill)
