// The core's side of the plugin boundary: the raw oar_plugin_api table of a
// loaded plugin and the one wrapper every core call into it goes through.
// This is an author-facing/internal header, included by the core's own .cpp
// files, oar-info and the ABI tests; the public runtime.h exposes a loaded
// plugin's name, devices, capabilities and flags, never its table (as ggml
// keeps its backend tables out of its public header).
#pragma once

#include <cstddef>

#include "oar/abi/oar_plugin.h"
#include "oar/error.h"
#include "oar/runtime.h"

namespace oar {

struct PluginTable {
  // The plugin's table copied into one of this core's size and zero past the
  // plugin's struct_size, so an entry appended after the plugin's minor
  // version reads as NULL and no caller needs OAR_STRUCT_HAS.
  oar_plugin_api entries{};
  size_t plugin_struct_size = 0;  // the struct_size the plugin declared
  const oar_plugin_api* original = nullptr;
};

// Copies `api` as described above (the loader has checked its struct_size).
PluginTable make_plugin_table(const oar_plugin_api* api);

inline const PluginTable& plugin_table(const LoadedPlugin& plugin) { return *plugin.table; }

template <class Entry>
bool has_entry(const LoadedPlugin& plugin, Entry oar_plugin_api::*entry) {
  return plugin_table(plugin).entries.*entry != nullptr;
}

// Calls `entry` (named `name` in messages) with `args`. A non-OK status
// becomes the typed error "plugin 'P': NAME failed (STATUS): <the plugin's
// message>" (Runtime::check); a NULL optional entry a NotImplementedError.
template <class Entry, class... Args>
void call_plugin(const LoadedPlugin& plugin, Entry oar_plugin_api::*entry, const char* name, Args... args) {
  Entry fn = plugin_table(plugin).entries.*entry;
  if (fn == nullptr) throw NotImplementedError(str("plugin '", plugin.name, "' has no ", name, " entry"));
  Runtime::clear_last_error();
  Runtime::check(fn(args...), plugin, name);
}

}  // namespace oar
