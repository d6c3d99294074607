// Adapter driver loading and calls (see driver_registry.h).
#include "driver_registry.h"

#define BOOST_DLL_USE_STD_FS
#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cctype>
#include <cstring>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/log.h"
#include "oar/plugin_loader.h"
#include "oar/runtime.h"

namespace oar::adapter {

namespace {

thread_local std::string t_last_error;

void host_set_error(oar_status_t code, const char* message) {
  t_last_error = message != nullptr ? message : str("status ", code, " without a message");
}

void host_log(oar_log_level_t level, const char* message) {
  LogLevel l = level <= OAR_LOG_DEBUG ? LogLevel::kDebug
               : level == OAR_LOG_INFO ? LogLevel::kInfo
               : level == OAR_LOG_WARNING ? LogLevel::kWarning
                                          : LogLevel::kError;
  log_message(l, message != nullptr ? message : "");
}

const oar_adapter_host_api kHost = {sizeof(oar_adapter_host_api), OAR_ADAPTER_ABI_VERSION_MAJOR,
                                    OAR_ADAPTER_ABI_VERSION_MINOR, host_set_error, host_log};

// Entries every driver must have; the rest come in groups (serialization,
// asynchronous execution) that are all there or all absent.
std::string missing_entries(const oar_adapter_driver_api& a) {
  std::string missing;
  auto need = [&](const void* p, const char* name) {
    if (p == nullptr) missing += str(missing.empty() ? "" : ", ", name);
  };
  need(reinterpret_cast<const void*>(a.context_create), "context_create");
  need(reinterpret_cast<const void*>(a.context_destroy), "context_destroy");
  need(reinterpret_cast<const void*>(a.query_operation), "query_operation");
  need(reinterpret_cast<const void*>(a.compile), "compile");
  need(reinterpret_cast<const void*>(a.program_destroy), "program_destroy");
  need(reinterpret_cast<const void*>(a.execute), "execute");
  if ((a.serialize == nullptr) != (a.deserialize == nullptr))
    missing += str(missing.empty() ? "" : ", ", "serialize and deserialize (one without the other)");
  int async = (a.execute_async != nullptr) + (a.event_wait != nullptr) + (a.event_destroy != nullptr);
  if (async != 0 && async != 3)
    missing += str(missing.empty() ? "" : ", ", "execute_async, event_wait and event_destroy (all or none)");
  return missing;
}

std::unique_ptr<Driver> load_driver(const std::string& path, std::string* reason) {
  auto library = std::make_shared<boost::dll::shared_library>();
  try {
    library->load(std::filesystem::path(path), boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
  } catch (const std::exception& e) {
    *reason = str("cannot open shared library: ", e.what());
    return nullptr;
  }
  if (!library->has(OAR_ADAPTER_DRIVER_ENTRY_SYMBOL)) {
    *reason = str("no entry symbol ", OAR_ADAPTER_DRIVER_ENTRY_SYMBOL, " (not an oar adapter driver)");
    return nullptr;
  }
  auto entry = library->get<oar_status_t(const oar_adapter_host_api*, const oar_adapter_driver_api**)>(
      OAR_ADAPTER_DRIVER_ENTRY_SYMBOL);
  const oar_adapter_driver_api* api = nullptr;
  t_last_error.clear();
  oar_status_t status = entry(&kHost, &api);
  if (status != OAR_STATUS_OK || api == nullptr) {
    *reason = str("entry failed (", status_name(status), "): ",
                  t_last_error.empty() ? "the driver gave no message" : t_last_error);
    return nullptr;
  }
  if (!OAR_STRUCT_HAS(api, oar_adapter_driver_api, version)) {
    *reason = str("driver table struct_size ", api->struct_size, " is too small to hold its name and version");
    return nullptr;
  }
  if (api->abi_major != OAR_ADAPTER_ABI_VERSION_MAJOR) {
    *reason = str("built for adapter ABI ", api->abi_major, ".", api->abi_minor, ", but this oar has ",
                  OAR_ADAPTER_ABI_VERSION_MAJOR, ".", OAR_ADAPTER_ABI_VERSION_MINOR);
    return nullptr;
  }
  auto d = std::make_unique<Driver>();
  // A driver built for an older minor has a shorter table: what lies past its struct_size stays zero.
  std::memcpy(&d->api, api, std::min(api->struct_size, sizeof(oar_adapter_driver_api)));
  d->api.struct_size = sizeof(oar_adapter_driver_api);
  if (std::string missing = missing_entries(d->api); !missing.empty()) {
    *reason = str("the driver table lacks required entries: ", missing);
    return nullptr;
  }
  d->path = path;
  d->name = api->name != nullptr ? api->name : "";
  d->vendor = api->vendor != nullptr ? api->vendor : "";
  d->version = api->version != nullptr ? api->version : "";
  if (d->name.empty() || d->version.empty()) {
    *reason = "the driver table has no name or no version";
    return nullptr;
  }
  if (d->name != adapter_driver_name(path)) {
    *reason = str("the file is named for driver '", adapter_driver_name(path), "' but the driver calls itself '",
                  d->name, "'");
    return nullptr;
  }
  if (d->api.option_count > 256 || (d->api.option_count > 0 && d->api.options == nullptr)) {
    *reason = str("option_count is ", d->api.option_count, " but options is not a plausible list");
    return nullptr;
  }
  for (uint64_t i = 0; i < d->api.option_count; ++i) {
    try {
      FlagDefinition def = flag_definition_from_abi(d->api.options[i]);
      if (!Flags::instance().is_defined(def.name)) Flags::instance().declare(d->name, def);
      d->option_names.push_back(def.name);
    } catch (const Error& e) {
      Flags::instance().forget(d->option_names);
      *reason = str("option #", i, " is invalid: ", e.what());
      return nullptr;
    }
  }
  d->library = library;
  return d;
}

}  // namespace

std::string take_driver_error() {
  std::string m = std::move(t_last_error);
  t_last_error.clear();
  return m;
}

void Driver::check(oar_status_t status, const char* call) const {
  if (status == OAR_STATUS_OK) return;
  std::string msg = take_driver_error();
  std::string text = str("adapter driver '", name, "': ", call, " failed (", status_name(status), "): ",
                         msg.empty() ? "the driver gave no message" : msg);
  switch (status) {
    case OAR_STATUS_INVALID_ARGUMENT: throw ValueError(text);
    case OAR_STATUS_UNSUPPORTED:
    case OAR_STATUS_UNIMPLEMENTED: throw NotImplementedError(text);
    case OAR_STATUS_DEVICE_ERROR: throw DeviceError(text);
    default: throw PluginError(text);
  }
}

DriverContext::DriverContext(const Driver& driver, std::vector<std::pair<std::string, std::string>> options)
    : driver_(driver), options_(std::move(options)) {
  std::sort(options_.begin(), options_.end());
  std::vector<oar_adapter_option> values(options_.size());
  std::vector<const oar_adapter_option*> pointers;
  for (size_t i = 0; i < options_.size(); ++i) {
    values[i] = {sizeof(oar_adapter_option), options_[i].first.c_str(), options_[i].second.c_str()};
    pointers.push_back(&values[i]);
  }
  driver.check(driver.api.context_create(pointers.data(), uint32_t(pointers.size()), &handle_), "context_create");
}

DriverContext::~DriverContext() {
  if (handle_ != nullptr) driver_.api.context_destroy(handle_);
}

DriverRegistry& DriverRegistry::instance() {
  // Never destroyed: programs may outlive static destruction order.
  static DriverRegistry* registry = new DriverRegistry();
  return *registry;
}

void DriverRegistry::load_all() {
  Runtime::get();  // core flags and plugins first
  for (const auto& dir : adapter_search_dirs())
    for (const auto& path : list_adapter_files(dir)) {
      std::string name = adapter_driver_name(path);
      bool taken = std::any_of(drivers_.begin(), drivers_.end(), [&](const auto& d) { return d->name == name; });
      if (taken) {
        skipped_.push_back({path, name, "", "", {}, false, str("driver '", name, "' is already provided by an earlier file")});
        continue;
      }
      std::string reason;
      std::unique_ptr<Driver> d = load_driver(path, &reason);
      if (!d) {
        log_message(LogLevel::kInfo, str("skipped adapter driver ", path, ": ", reason));
        skipped_.push_back({path, name, "", "", {}, false, reason});
        continue;
      }
      drivers_.push_back(std::move(d));
    }
  loaded_ = true;
  // The core left OAR_<DRIVER>_* variables alone until the drivers declared
  // theirs; what is still unknown now is a typo.
  for (const auto& name : Flags::instance().unknown_environment_names())
    for (const auto& d : drivers_) {
      std::string prefix = "OAR_" + d->name + "_";
      for (char& c : prefix) c = char(std::toupper(static_cast<unsigned char>(c)));
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string near = Flags::instance().nearest_name(name);
      log_message(LogLevel::kWarning, str("unknown environment variable ", name, " ignored: adapter driver '", d->name,
                                          "' has no such option", near.empty() ? std::string() : str(" (did you mean ", near, "?)")));
    }
}

const Driver& DriverRegistry::get(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!loaded_) load_all();
  for (const auto& d : drivers_)
    if (d->name == name) return *d;
  std::string known;
  for (const auto& d : drivers_) known += str(known.empty() ? "" : ", ", d->name);
  std::string skipped;
  for (const auto& s : skipped_)
    if (s.name == name) skipped += str("; ", s.path, " was skipped: ", s.reason);
  std::string dirs;
  for (const auto& dir : adapter_search_dirs()) dirs += str(dirs.empty() ? "" : ":", dir);
  throw PluginError(str("no adapter driver '", name, "' (loaded: ", known.empty() ? "none" : known,
                        "; searched ", dirs.empty() ? "no directory" : dirs, ")", skipped));
}

std::vector<DriverInfo> DriverRegistry::infos() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!loaded_) load_all();
  std::vector<DriverInfo> out;
  for (const auto& d : drivers_) out.push_back({d->path, d->name, d->vendor, d->version, d->option_names, true, ""});
  out.insert(out.end(), skipped_.begin(), skipped_.end());
  return out;
}

std::vector<DriverInfo> drivers() { return DriverRegistry::instance().infos(); }

}  // namespace oar::adapter
