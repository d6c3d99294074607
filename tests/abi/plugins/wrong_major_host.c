/*
 * liboar_plugin_wrong_major_host.so: the plugin-side half of version
 * negotiation. Built as if for ABI (N+1).0, the SDK's entry helper finds the
 * core's major N and refuses: set_error with both versions, then
 * OAR_STATUS_VERSION_MISMATCH, as oar_plugin.h asks of every plugin.
 */
#include "oar/plugin_sdk/plugin_entry.h"

static oar_plugin_api g_api;

/* Not reached with this core: the plugin exists only to refuse it. */
static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  (void)api;
  return oar_plugin_sdk_fail(host, OAR_STATUS_UNSUPPORTED, "wrong_major_host is a test plugin without a device");
}

OAR_PLUGIN_DEFINE_ENTRY_FOR_ABI("wrong_major_host", OAR_ABI_VERSION_MAJOR + 1, 0, &g_api, fill)
