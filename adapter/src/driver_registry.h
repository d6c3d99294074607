// Loading adapter drivers (liboar_adapter_<name>.so) and calling them. Each
// driver is opened with Boost.DLL in local symbol scope, its entry called with
// the host table, its versions, struct size and required entries checked and
// its options declared as flags; a failure at any step skips the driver with
// the reason (oar-info lists them), never aborts. Calls go through Driver,
// which turns a non-OK status and the driver's message into a typed error
// naming the driver and the call.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_driver.h"
#include "oar/adapter/offload.h"

namespace oar::adapter {

class Driver {
 public:
  std::string path, name, vendor, version;
  std::vector<std::string> option_names;  // flag names, in declaration order
  oar_adapter_driver_api api{};           // the driver's table, zero past its struct_size
  std::shared_ptr<void> library;          // keeps the library mapped

  // Throws the typed error for `status` (ValueError for INVALID_ARGUMENT,
  // NotImplementedError for UNSUPPORTED, PluginError otherwise) with the
  // driver's message, unless it is OK.
  void check(oar_status_t status, const char* call) const;
  bool has_serialization() const { return api.serialize != nullptr && api.deserialize != nullptr; }
};

// One driver context: a driver with its option values, destroyed with it.
class DriverContext {
 public:
  DriverContext(const Driver& driver, std::vector<std::pair<std::string, std::string>> options);
  ~DriverContext();
  DriverContext(const DriverContext&) = delete;
  DriverContext& operator=(const DriverContext&) = delete;
  const Driver& driver() const { return driver_; }
  oar_adapter_context_t handle() const { return handle_; }
  // "name=value" pairs, sorted: part of cache keys and of Placement::driver.
  const std::vector<std::pair<std::string, std::string>>& options() const { return options_; }

 private:
  const Driver& driver_;
  std::vector<std::pair<std::string, std::string>> options_;
  oar_adapter_context_t handle_ = nullptr;
};

// The message the last failing driver call on this thread reported.
std::string take_driver_error();

class DriverRegistry {
 public:
  static DriverRegistry& instance();
  // The loaded driver of that name; PluginError listing the loaded drivers
  // and why others were skipped otherwise.
  const Driver& get(const std::string& name);
  std::vector<DriverInfo> infos();

 private:
  void load_all();
  std::mutex mutex_;
  bool loaded_ = false;
  std::vector<std::unique_ptr<Driver>> drivers_;
  std::vector<DriverInfo> skipped_;
};

}  // namespace oar::adapter
