/*
 * liboar_plugin_wrong_major.so: accepts the host but hands back a table that
 * claims ABI (N+1).0. The core must refuse it with a message naming both its
 * own version and the plugin's, and must not read anything past the version.
 */
#include <string.h>

#include "oar/abi/oar_plugin.h"

static oar_plugin_api g_api;

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  memset(&g_api, 0, sizeof(g_api));
  g_api.struct_size = sizeof(g_api);
  g_api.abi_major = OAR_ABI_VERSION_MAJOR + 1;
  g_api.abi_minor = 0;
  g_api.plugin_name = "wrong_major";
  g_api.plugin_version = "0.1.0";
  g_api.device_type = "wrongdev";
  *out_plugin = &g_api;
  return OAR_STATUS_OK;
}
