#include "oar/runtime.h"

#include <cctype>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/kernel_coverage.h"
#include "oar/kernel_registry.h"
#include "oar/log.h"
#include "oar/plugin_loader.h"
#include "oar/plugin_table.h"

namespace oar {

namespace {

thread_local std::string t_last_error;
thread_local oar_status_t t_last_code = OAR_STATUS_OK;

void host_set_error(oar_status_t code, const char* message) {
  t_last_code = code;
  t_last_error = message ? message : "";
}

void host_log(oar_log_level_t level, const char* message) {
  log_message(static_cast<LogLevel>(level), message ? message : "");
}

int32_t host_get_flag(const char* name, char* buffer, size_t size) {
  if (buffer == nullptr || size == 0) return 0;
  buffer[0] = '\0';
  if (name == nullptr || !Flags::instance().is_defined(name)) return 0;
  std::string v = Flags::instance().get(name);
  std::snprintf(buffer, size, "%s", v.c_str());
  return 1;
}

oar_status_t host_workspace_allocate(void* host_context, uint64_t size, void** out);

const oar_host_api kHostApi = {
    sizeof(oar_host_api), OAR_ABI_VERSION_MAJOR, OAR_ABI_VERSION_MINOR, host_set_error,
    host_log,             host_get_flag,         host_workspace_allocate,
};

}  // namespace

// Defined in dispatch.cpp, which owns the per-call workspace list.
oar_status_t dispatch_workspace_allocate(void* host_context, uint64_t size, void** out);
namespace {
oar_status_t host_workspace_allocate(void* host_context, uint64_t size, void** out) {
  return dispatch_workspace_allocate(host_context, size, out);
}
}  // namespace

const oar_host_api* Runtime::host_api() { return &kHostApi; }

void Runtime::clear_last_error() {
  if (t_last_code != OAR_STATUS_OK || !t_last_error.empty()) {
    t_last_error.clear();
    t_last_code = OAR_STATUS_OK;
  }
}

std::string Runtime::take_last_error() {
  std::string msg = std::move(t_last_error);
  t_last_error.clear();
  t_last_code = OAR_STATUS_OK;
  return msg;
}

const char* status_name(oar_status_t status) {
  switch (status) {
    case OAR_STATUS_OK: return "OK";
    case OAR_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case OAR_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case OAR_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case OAR_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case OAR_STATUS_VERSION_MISMATCH: return "VERSION_MISMATCH";
    case OAR_STATUS_DEVICE_ERROR: return "DEVICE_ERROR";
    case OAR_STATUS_NOT_READY: return "NOT_READY";
    case OAR_STATUS_TIMEOUT: return "TIMEOUT";
    case OAR_STATUS_INTERNAL: return "INTERNAL";
    case OAR_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
  }
  return "UNKNOWN_STATUS";
}

void throw_status(oar_status_t status, const std::string& message) {
  switch (status) {
    case OAR_STATUS_INVALID_ARGUMENT: throw ValueError(message);
    case OAR_STATUS_OUT_OF_RANGE: throw IndexError(message);
    case OAR_STATUS_UNIMPLEMENTED:
    case OAR_STATUS_UNSUPPORTED: throw NotImplementedError(message);
    case OAR_STATUS_OUT_OF_MEMORY:
    case OAR_STATUS_DEVICE_ERROR: throw DeviceError(message);
    default: throw PluginError(message);
  }
}

void Runtime::check(oar_status_t status, const LoadedPlugin& plugin, const char* call) {
  if (status == OAR_STATUS_OK) return;
  std::string msg = take_last_error();
  throw_status(status, str("plugin '", plugin.name, "': ", call, " failed (",
                           status_name(status), "): ",
                           msg.empty() ? "the plugin gave no message" : msg));
}

Runtime& Runtime::get() {
  // Never destroyed: plugin code must stay mapped for tensors freed at exit.
  static Runtime* runtime = new Runtime();
  return *runtime;
}

Runtime::Runtime() {
  load_all();
  // Registered after the plugins (and the vendor libraries they opened) were
  // loaded, so it runs before those libraries' static destructors: a plugin
  // finishes queued device work while its driver is still whole (PoCL
  // compiles kernels lazily on worker threads and aborts if LLVM is torn
  // down under it).
  std::atexit([] {
    const std::string coverage = Flags::instance().get("OAR_KERNEL_COVERAGE_FILE");
    if (!coverage.empty()) append_kernel_coverage(coverage);
    Runtime::get().shutdown_plugins();
  });
}

void Runtime::shutdown_plugins() {
  for (const auto& p : plugins_) {
    if (p->table->entries.shutdown == nullptr) continue;
    try {
      p->table->entries.shutdown();
    } catch (...) {
      // a C entry must not throw; at exit there is nobody left to tell
    }
  }
}

void Runtime::load_all() {
  searched_dirs_ = plugin_search_dirs();
  for (const auto& dir : searched_dirs_) {
    for (const auto& path : list_plugin_files(dir)) {
      PluginLoadResult r = load_plugin(path);
      if (!r.plugin) {
        skipped_.push_back({path, r.reason});
        log_message(LogLevel::kInfo, str("skipped plugin ", path, ": ", r.reason));
        continue;
      }
      LoadedPlugin& p = *r.plugin;
      if (find_device_type(p.device_type) >= 0) {
        skipped_.push_back({path, str("device type '", p.device_type,
                                      "' is already provided by an earlier plugin")});
        continue;
      }
      // Flags first: the plugin may read them from device_count on.
      declare_plugin_flags(p);
      try {
        int32_t count = 0;
        call_plugin(p, &oar_plugin_api::device_count, "device_count", &count);
        for (int32_t i = 0; i < count; ++i) {
          oar_device_properties props{};
          props.struct_size = sizeof(props);
          call_plugin(p, &oar_plugin_api::device_get_properties, "device_get_properties", i, &props);
          oar_device_capabilities caps{};
          caps.struct_size = sizeof(caps);
          call_plugin(p, &oar_plugin_api::device_get_capabilities, "device_get_capabilities", i, &caps);
          p.properties.push_back(props);
          p.capabilities.push_back(caps);
        }
        p.device_count = count;
        int32_t type_id = static_cast<int32_t>(device_type_names_.size());
        std::vector<std::string> errors;
        oar_kernel_registrar registrar =
            KernelRegistry::instance().make_registrar(type_id, p.device_type.c_str(), &errors);
        call_plugin(p, &oar_plugin_api::register_kernels, "register_kernels",
                    static_cast<const oar_kernel_registrar*>(&registrar));
        for (const auto& e : errors)
          log_message(LogLevel::kWarning, str("plugin '", p.name, "': ", e));
        p.device_type_id = type_id;
        device_type_names_.push_back(p.device_type);
        plugin_by_type_.push_back(&p);
        // Allocators exist from load on, so allocator() needs no lock on the hot path.
        allocators_.emplace_back();
        for (int32_t i = 0; i < count; ++i)
          allocators_.back().push_back(std::make_unique<CachingAllocator>(Device{type_id, i}, p));
        if (p.device_type == "cpu") cpu_type_ = type_id;
        plugins_.push_back(std::move(r.plugin));
      } catch (const Error& e) {
        Flags::instance().forget(p.declared_flags);
        skipped_.push_back({path, e.what()});
      }
    }
  }
  // Only now are the plugins' flags known, so a typo of one is caught too.
  // An adapter driver's flags (OAR_<DRIVER>_*) are declared when liboar_adapter
  // loads it, later or never: those of drivers on disk are not typos.
  std::vector<std::string> driver_prefixes;
  for (const auto& dir : adapter_search_dirs())
    for (const auto& file : list_adapter_files(dir)) {
      std::string prefix = "OAR_" + adapter_driver_name(file) + "_";
      for (char& c : prefix) c = char(std::toupper(static_cast<unsigned char>(c)));
      driver_prefixes.push_back(prefix);
    }
  for (const auto& name : Flags::instance().unknown_environment_names()) {
    bool of_driver = false;
    for (const auto& prefix : driver_prefixes) of_driver |= name.rfind(prefix, 0) == 0;
    if (of_driver) continue;
    const std::string near = Flags::instance().nearest_name(name);
    log_message(LogLevel::kWarning,
                str("unknown environment variable ", name, " ignored: it names no oar flag",
                    near.empty() ? std::string() : str(" (did you mean ", near, "?)"), "; oar-info lists them"));
  }
}

int32_t Runtime::find_device_type(const std::string& name) const {
  for (size_t i = 0; i < device_type_names_.size(); ++i)
    if (device_type_names_[i] == name) return static_cast<int32_t>(i);
  return -1;
}

const std::string& Runtime::device_type_name(int32_t type) const {
  static const std::string unknown = "<unknown>";
  if (type < 0 || static_cast<size_t>(type) >= device_type_names_.size()) return unknown;
  return device_type_names_[type];
}

const LoadedPlugin& Runtime::plugin_for(Device device) const {
  if (device.type < 0 || static_cast<size_t>(device.type) >= plugin_by_type_.size())
    throw DeviceError(str("invalid device (type id ", device.type, ")"));
  const LoadedPlugin& p = *plugin_by_type_[device.type];
  if (device.index < 0 || device.index >= p.device_count)
    throw DeviceError(str("device index ", device.index, " out of range for '", p.device_type,
                          "' (", p.device_count, " device(s))"));
  return p;
}

const oar_device_capabilities& Runtime::capabilities(Device device) const {
  return plugin_for(device).capabilities[device.index];
}

void Runtime::synchronize(Device device) const {
  const LoadedPlugin& p = plugin_for(device);
  call_plugin(p, &oar_plugin_api::device_synchronize, "device_synchronize", device.index);
}

bool Runtime::host_accessible(Device device) const {
  return (capabilities(device).flags & OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY) != 0;
}

CachingAllocator& Runtime::allocator(Device device) {
  plugin_for(device);  // validates type and index
  return *allocators_[device.type][device.index];
}

std::vector<Device> Runtime::devices() const {
  std::vector<Device> out;
  for (const auto& p : plugins_)
    for (int32_t i = 0; i < p->device_count; ++i) out.push_back(Device{p->device_type_id, i});
  return out;
}

}  // namespace oar
