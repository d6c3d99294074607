/*
 * liboar_plugin_wrong_major_host.so: the plugin-side half of version
 * negotiation. It claims to need a host of ABI major N+1, finds the core's
 * major N, and refuses: set_error with both versions, then
 * OAR_STATUS_VERSION_MISMATCH, as oar_plugin.h asks of every plugin.
 */
#include <stdio.h>

#include "oar/abi/oar_plugin.h"

#define NEEDED_HOST_MAJOR (OAR_ABI_VERSION_MAJOR + 1)

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  char msg[192];
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  *out_plugin = NULL;
  if (host->abi_major == NEEDED_HOST_MAJOR) {
    /* Not reached with this core: the plugin exists only to refuse it. */
    host->set_error(OAR_STATUS_UNSUPPORTED, "wrong_major_host is a test plugin without a device");
    return OAR_STATUS_UNSUPPORTED;
  }
  sprintf(msg, "wrong_major_host plugin needs host ABI %d.0 but the host offers ABI %u.%u",
          NEEDED_HOST_MAJOR, (unsigned)host->abi_major, (unsigned)host->abi_minor);
  /* set_error is in every 1.x host table; check anyway, as a plugin must. */
  if (host->struct_size >= offsetof(oar_host_api, set_error) + sizeof(host->set_error) &&
      host->set_error != NULL)
    host->set_error(OAR_STATUS_VERSION_MISMATCH, msg);
  return OAR_STATUS_VERSION_MISMATCH;
}
