// Finding and opening device plugins: directories from OAR_PLUGIN_PATH, then
// (unless OAR_PLUGIN_DEFAULT_DIR=0) the plugin directory beside
// liboar_core.so. Each liboar_plugin_*.so is opened with Boost.DLL in local
// symbol scope, its entry symbol called with the host table, and its versions,
// struct sizes and required entries checked. Nothing here aborts: every
// failure becomes a SkippedPlugin with the precise reason.
#pragma once

#include <string>
#include <vector>

#include "oar/abi/oar_plugin.h"
#include "oar/flags.h"
#include "oar/runtime.h"

namespace oar {

struct PluginLoadResult {
  std::unique_ptr<LoadedPlugin> plugin;  // null when skipped
  std::string reason;
};

std::vector<std::string> plugin_search_dirs();
std::vector<std::string> list_plugin_files(const std::string& dir);
PluginLoadResult load_plugin(const std::string& path);
// Registers the flags the plugin's table declares (ABI 1.2) under its name; a
// bad declaration lands in plugin.rejected_flags with its reason, never fatal.
void declare_plugin_flags(LoadedPlugin& plugin);
// One oar_flag_definition (a plugin's or an adapter driver's) as a registry
// entry; ValueError saying what is wrong with it.
FlagDefinition flag_definition_from_abi(const oar_flag_definition* definition);

// Adapter drivers (liboar_adapter_<name>.so, adapter/) live in the
// directories of OAR_ADAPTER_PATH, then in oar/adapters beside liboar_core.so.
// The core only lists them (their flags are not reported as unknown);
// liboar_adapter loads them.
std::vector<std::string> adapter_search_dirs();
std::vector<std::string> list_adapter_files(const std::string& dir);
// "fake_npu" for ".../liboar_adapter_fake_npu.so".
std::string adapter_driver_name(const std::string& path);

// The ABI entry table (oar_plugin_entries.def) as data, for oar-info and docs.
struct AbiEntryInfo {
  const char* name;
  bool required;
  int since_minor;
};
const std::vector<AbiEntryInfo>& abi_entries();

}  // namespace oar
