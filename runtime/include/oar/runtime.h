// Runtime: the process-wide owner of loaded plugins, the device types they
// provide, per-device capabilities and allocators, and the host callback
// table handed to plugins. Plugins are found and loaded on first use (see
// plugin_loader.h); a plugin that fails to load is recorded with its reason.
// A plugin's raw entry table is not reachable from here: the core calls it
// through oar/plugin_table.h, the internal, author-facing header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oar/abi/oar_plugin.h"
#include "oar/allocator.h"
#include "oar/device.h"

namespace oar {

// A flag declaration the registry refused, with why (oar-info shows it).
struct RejectedFlag {
  std::string name;  // as declared, or "flag #i" when it has no usable name
  std::string reason;
};

struct PluginTable;  // oar/plugin_table.h

struct LoadedPlugin {
  std::string path;
  std::string name;
  std::string version;
  std::string device_type;
  int32_t device_type_id = -1;
  uint32_t abi_major = 0, abi_minor = 0;
  int32_t device_count = 0;
  std::shared_ptr<const PluginTable> table;  // the entries: oar/plugin_table.h
  std::vector<std::string> declared_flags;  // accepted OAR_<NAME>_* flags (1.2)
  std::vector<RejectedFlag> rejected_flags;
  std::vector<oar_device_properties> properties;
  std::vector<oar_device_capabilities> capabilities;
  std::shared_ptr<void> library;  // keeps the shared library mapped
};

struct SkippedPlugin {
  std::string path;
  std::string reason;
};

class Runtime {
 public:
  static Runtime& get();  // loads plugins on first call

  const std::vector<std::unique_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  const std::vector<SkippedPlugin>& skipped() const { return skipped_; }
  const std::vector<std::string>& searched_dirs() const { return searched_dirs_; }

  // Device type id for a name, or -1.
  int32_t find_device_type(const std::string& name) const;
  const std::string& device_type_name(int32_t type) const;
  const LoadedPlugin& plugin_for(Device device) const;  // throws DeviceError
  // Waits for all work on the device (the plugin's device_synchronize).
  void synchronize(Device device) const;
  const oar_device_capabilities& capabilities(Device device) const;
  bool host_accessible(Device device) const;
  CachingAllocator& allocator(Device device);
  std::vector<Device> devices() const;
  int32_t cpu_type() const { return cpu_type_; }

  static const oar_host_api* host_api();

  // Throws a typed error when `status` is not OK, using the message the plugin
  // left with host->set_error (or a generic one if it left none). Core code
  // calls plugins through call_plugin (oar/plugin_table.h), which uses this.
  static void check(oar_status_t status, const LoadedPlugin& plugin, const char* call);
  // Fetches and clears this thread's last plugin error message.
  static std::string take_last_error();
  // Forgets a pending message without building a string (before each kernel call).
  static void clear_last_error();

 private:
  Runtime();
  void load_all();
  void shutdown_plugins();  // at exit: every plugin's optional shutdown entry
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<SkippedPlugin> skipped_;
  std::vector<std::string> searched_dirs_;
  std::vector<std::string> device_type_names_;
  std::vector<LoadedPlugin*> plugin_by_type_;
  std::vector<std::vector<std::unique_ptr<CachingAllocator>>> allocators_;
  int32_t cpu_type_ = -1;
};

// Throws the typed error matching an ABI status code.
[[noreturn]] void throw_status(oar_status_t status, const std::string& message);
const char* status_name(oar_status_t status);

}  // namespace oar
