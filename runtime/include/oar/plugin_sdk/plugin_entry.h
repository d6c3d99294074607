/*
 * Plugin SDK: the entry point every plugin needs, written once.
 *
 * A plugin's exported `oar_plugin_entry` always does the same things: check
 * its arguments, refuse a host of another ABI major version with a message
 * naming both versions (through host->set_error, when the host table has it),
 * fill its static plugin table and hand it back. OAR_PLUGIN_DEFINE_ENTRY does
 * all of that; the plugin writes only the function that fills its own
 * entries. The header is C99 and C++ (the test plugins are C99), needs only
 * the ABI headers, and adds no symbol but the entry itself.
 *
 *   static oar_plugin_api g_api;
 *   static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
 *     api->device_type = "mydev";
 *     api->device_count = my_device_count;
 *     ...
 *     return OAR_STATUS_OK;  // or oar_plugin_sdk_fail(host, code, "why")
 *   }
 *   OAR_PLUGIN_DEFINE_ENTRY("mydev", &g_api, fill)
 */
#ifndef OAR_PLUGIN_SDK_PLUGIN_ENTRY_H
#define OAR_PLUGIN_SDK_PLUGIN_ENTRY_H

#include <stdio.h>
#include <string.h>

#include "oar/abi/oar_plugin.h"

#ifdef __cplusplus
#define OAR_PLUGIN_SDK_EXTERN_C extern "C"
#else
#define OAR_PLUGIN_SDK_EXTERN_C
#endif

/* Fills the plugin's entries into a table whose struct_size, versions and
 * plugin_name are already set (and everything else zero). May change any of
 * them, e.g. a plugin that appends fields of its own sets a larger struct_size. */
typedef oar_status_t (*oar_plugin_fill_fn)(const oar_host_api* host, oar_plugin_api* api);

/* Reports `code` with `message` through the host, if its table has set_error,
 * and returns `code`. Usable before and after negotiation. */
static inline oar_status_t oar_plugin_sdk_fail(const oar_host_api* host, oar_status_t code,
                                               const char* message) {
  if (OAR_STRUCT_HAS(host, oar_host_api, set_error) && host->set_error != NULL)
    host->set_error(code, message);
  return code;
}

/* Version negotiation and table hand-over for a plugin built for ABI
 * `major`.`minor` (normally OAR_ABI_VERSION_MAJOR/MINOR: only tests claim
 * another). A host of another major is refused with
 * "<name> plugin is built for ABI a.b but the host offers ABI c.d". */
static inline oar_status_t oar_plugin_sdk_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin,
                                                const char* plugin_name, uint32_t major,
                                                uint32_t minor, oar_plugin_api* table,
                                                oar_plugin_fill_fn fill) {
  oar_status_t status;
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  *out_plugin = NULL;
  if (!OAR_STRUCT_HAS(host, oar_host_api, abi_minor))
    return oar_plugin_sdk_fail(host, OAR_STATUS_VERSION_MISMATCH, "host table too small to hold a version");
  if (host->abi_major != major) {
    char message[192];
    snprintf(message, sizeof(message), "%s plugin is built for ABI %u.%u but the host offers ABI %u.%u",
             plugin_name, (unsigned)major, (unsigned)minor, (unsigned)host->abi_major,
             (unsigned)host->abi_minor);
    return oar_plugin_sdk_fail(host, OAR_STATUS_VERSION_MISMATCH, message);
  }
  memset(table, 0, sizeof(*table));
  table->struct_size = sizeof(*table);
  table->abi_major = major;
  table->abi_minor = minor;
  table->plugin_name = plugin_name;
  status = fill(host, table);
  if (status != OAR_STATUS_OK) return status;
  *out_plugin = table;
  return OAR_STATUS_OK;
}

/* Defines and exports `oar_plugin_entry` for the table `table` (an
 * oar_plugin_api*, valid until the process exits), filled by `fill`. The
 * table is filled at each call, so a plugin loaded twice gives the same one. */
#define OAR_PLUGIN_DEFINE_ENTRY_FOR_ABI(plugin_name, major, minor, table, fill)                  \
  OAR_PLUGIN_SDK_EXTERN_C OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(                       \
      const oar_host_api* host, const oar_plugin_api** out_plugin);                              \
  OAR_PLUGIN_SDK_EXTERN_C oar_status_t oar_plugin_entry(const oar_host_api* host,                \
                                                        const oar_plugin_api** out_plugin) {     \
    return oar_plugin_sdk_entry(host, out_plugin, plugin_name, major, minor, table, fill);       \
  }

#define OAR_PLUGIN_DEFINE_ENTRY(plugin_name, table, fill)                                        \
  OAR_PLUGIN_DEFINE_ENTRY_FOR_ABI(plugin_name, OAR_ABI_VERSION_MAJOR, OAR_ABI_VERSION_MINOR, \
                                  table, fill)

#endif /* OAR_PLUGIN_SDK_PLUGIN_ENTRY_H */
