/*
 * liboar_plugin_init_fails.so: a driver-backed plugin on a machine without its
 * device. The entry reports why through host->set_error and returns the code;
 * the core must skip it and show the plugin's own message.
 */
#include "oar/abi/oar_plugin.h"

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  *out_plugin = NULL;
  host->set_error(OAR_STATUS_DEVICE_ERROR, "simulated driver failure: no device found");
  return OAR_STATUS_DEVICE_ERROR;
}
