// Test helper: opens an adapter driver with dlopen and hands its entry a host
// table whose set_error keeps the last message, so a driver can be tested
// through its C ABI alone (no liboar_adapter in between).
#include <dlfcn.h>

#include <cstdio>

#include "c_model.hpp"

namespace oar_test {

namespace {

thread_local std::string g_last_error;

void set_error(oar_status_t code, const char* message) {
  char prefix[24];
  std::snprintf(prefix, sizeof(prefix), "[%d] ", int(code));
  g_last_error.assign(prefix);
  g_last_error.append(message != nullptr ? message : "(null)");
}

void log(oar_log_level_t level, const char* message) {
  if (level >= OAR_LOG_WARNING) std::fprintf(stderr, "driver log: %s\n", message ? message : "(null)");
}

const oar_adapter_host_api kHost = {sizeof(oar_adapter_host_api), OAR_ADAPTER_ABI_VERSION_MAJOR,
                                    OAR_ADAPTER_ABI_VERSION_MINOR, set_error, log};

}  // namespace

std::string last_error() { return g_last_error; }

const oar_adapter_driver_api* load_driver_for_test(const std::string& path, std::string* error) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *error = dlerror();
    return nullptr;
  }
  auto entry = reinterpret_cast<oar_adapter_driver_entry_fn>(dlsym(lib, OAR_ADAPTER_DRIVER_ENTRY_SYMBOL));
  if (entry == nullptr) {
    *error = "no entry symbol";
    return nullptr;
  }
  const oar_adapter_driver_api* api = nullptr;
  if (entry(&kHost, &api) != OAR_STATUS_OK) {
    *error = g_last_error;
    return nullptr;
  }
  return api;  // the library stays open for the process
}

}  // namespace oar_test
