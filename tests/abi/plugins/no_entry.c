/*
 * liboar_plugin_no_entry.so: a well-formed shared library that exports no
 * oar_plugin_entry symbol (its entry is misspelled). The core must report the
 * missing symbol by name and carry on.
 */
#include "oar/abi/oar_plugin.h"

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry_v0(const oar_host_api* host,
                                                   const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry_v0(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  (void)host;
  (void)out_plugin;
  return OAR_STATUS_INTERNAL;
}
