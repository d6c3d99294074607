/*
 * liboar_plugin_wrong_major.so: accepts the host but hands back a table that
 * claims ABI (N+1).0, as a plugin built from mismatched headers would. The
 * core must refuse it with a message naming both its own version and the
 * plugin's, and must not read anything past the version.
 */
#include "oar/plugin_sdk/plugin_entry.h"

static oar_plugin_api g_api;

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  (void)host;
  api->abi_major = OAR_ABI_VERSION_MAJOR + 1;
  api->abi_minor = 0;
  api->plugin_version = "0.1.0";
  api->device_type = "wrongdev";
  return OAR_STATUS_OK;
}

OAR_PLUGIN_DEFINE_ENTRY("wrong_major", &g_api, fill)
