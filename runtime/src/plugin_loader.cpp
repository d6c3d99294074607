#include "oar/plugin_loader.h"

#define BOOST_DLL_USE_STD_FS
#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <filesystem>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/plugin_table.h"

namespace oar {

namespace fs = std::filesystem;

const std::vector<AbiEntryInfo>& abi_entries() {
  static const std::vector<AbiEntryInfo> entries = {
#define OAR_PLUGIN_ENTRY(field, requirement, since) {#field, #requirement[0] == 'R', since},
#include "oar/abi/oar_plugin_entries.def"
#undef OAR_PLUGIN_ENTRY
  };
  return entries;
}

namespace {

// Directories from a colon-separated flag, then <dir of liboar_core.so>/oar/<sub>
// (in the build tree and when installed) unless OAR_PLUGIN_DEFAULT_DIR=0.
std::vector<std::string> search_dirs(const char* path_flag, const char* sub) {
  std::vector<std::string> dirs;
  std::string path = Flags::instance().get(path_flag);
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) dirs.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  if (Flags::instance().get_bool("OAR_PLUGIN_DEFAULT_DIR")) {
    std::error_code ec;
    fs::path core = boost::dll::this_line_location(ec);
    if (!ec) dirs.push_back((core.parent_path() / "oar" / sub).string());
  }
  return dirs;
}

std::vector<std::string> list_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && it->path().extension() == ".so") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::string> plugin_search_dirs() { return search_dirs("OAR_PLUGIN_PATH", "plugins"); }

std::vector<std::string> list_plugin_files(const std::string& dir) { return list_files(dir, "liboar_plugin_"); }

std::vector<std::string> adapter_search_dirs() { return search_dirs("OAR_ADAPTER_PATH", "adapters"); }

std::vector<std::string> list_adapter_files(const std::string& dir) { return list_files(dir, "liboar_adapter_"); }

std::string adapter_driver_name(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  const std::string prefix = "liboar_adapter_";
  return stem.rfind(prefix, 0) == 0 ? stem.substr(prefix.size()) : stem;
}

namespace {

// Reads a function-pointer field of the plugin table if the plugin's table is
// large enough to have it (a plugin built for an older minor version).
const void* entry_value(const oar_plugin_api* api, size_t offset, size_t size) {
  if (api->struct_size < offset + size) return nullptr;
  const void* value;
  std::memcpy(&value, reinterpret_cast<const char*>(api) + offset, sizeof(value));
  return value;
}

struct EntryLayout {
  const char* name;
  bool required;
  uint32_t since_minor;
  size_t offset;
  size_t size;
};

// The entry table with each field's position, from the same .def file.
const EntryLayout kEntryLayouts[] = {
#define OAR_PLUGIN_ENTRY(field, requirement, since)                                   \
  {#field, #requirement[0] == 'R', since, offsetof(oar_plugin_api, field), \
   sizeof(((oar_plugin_api*)nullptr)->field)},
#include "oar/abi/oar_plugin_entries.def"
#undef OAR_PLUGIN_ENTRY
};

std::string check_required_entries(const oar_plugin_api* api) {
  std::string missing;
  for (const auto& e : kEntryLayouts) {
    // An entry added in a later minor version than the plugin's is not required of it.
    if (!e.required || e.since_minor > api->abi_minor) continue;
    if (entry_value(api, e.offset, e.size) == nullptr)
      missing += std::string(missing.empty() ? "" : ", ") + e.name;
  }
  return missing;
}

}  // namespace

PluginTable make_plugin_table(const oar_plugin_api* api) {
  // A plugin built for an older minor has a shorter table: past its
  // struct_size lies whatever follows its static table in memory, never read.
  PluginTable table;
  std::memcpy(&table.entries, api, std::min(api->struct_size, sizeof(oar_plugin_api)));
  table.entries.struct_size = sizeof(oar_plugin_api);
  table.plugin_struct_size = api->struct_size;
  table.original = api;
  return table;
}

PluginLoadResult load_plugin(const std::string& path) {
  PluginLoadResult result;
  auto library = std::make_shared<boost::dll::shared_library>();
  try {
    library->load(fs::path(path),
                  boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
  } catch (const std::exception& e) {
    result.reason = str("cannot open shared library: ", e.what());
    return result;
  }
  if (!library->has(OAR_PLUGIN_ENTRY_SYMBOL)) {
    result.reason = str("no entry symbol '", OAR_PLUGIN_ENTRY_SYMBOL,
                        "' exported (is it built with OAR_PLUGIN_EXPORT and extern \"C\"?)");
    return result;
  }
  auto entry = library->get<oar_status_t(const oar_host_api*, const oar_plugin_api**)>(
      OAR_PLUGIN_ENTRY_SYMBOL);

  const oar_plugin_api* api = nullptr;
  Runtime::take_last_error();
  oar_status_t status;
  try {
    status = entry(Runtime::host_api(), &api);
  } catch (...) {
    result.reason = "entry function threw a C++ exception across the C ABI";
    return result;
  }
  if (status != OAR_STATUS_OK) {
    std::string msg = Runtime::take_last_error();
    result.reason = str("initialisation failed (", status_name(status), "): ",
                        msg.empty() ? "the plugin gave no message" : msg);
    return result;
  }
  if (api == nullptr) {
    result.reason = "entry returned OK but no plugin table";
    return result;
  }
  if (api->struct_size < offsetof(oar_plugin_api, abi_minor) + sizeof(uint32_t)) {
    result.reason = str("plugin table too small to hold a version (struct_size ",
                        api->struct_size, ")");
    return result;
  }
  if (api->abi_major != OAR_ABI_VERSION_MAJOR) {
    result.reason = str("ABI major version mismatch: plugin is built for ABI ", api->abi_major,
                        ".", api->abi_minor, ", this core implements ABI ",
                        OAR_ABI_VERSION_MAJOR, ".", OAR_ABI_VERSION_MINOR);
    return result;
  }
  // A v1.0 table must hold every v1.0 field; newer minors may be larger.
  if (api->struct_size < offsetof(oar_plugin_api, collectives) + sizeof(void*)) {
    result.reason = str("plugin table struct_size ", api->struct_size,
                        " is smaller than ABI 1.0 requires (",
                        offsetof(oar_plugin_api, collectives) + sizeof(void*), ")");
    return result;
  }
  std::string missing = check_required_entries(api);
  if (!missing.empty()) {
    result.reason = str("required ABI entries are NULL: ", missing);
    return result;
  }
  if (api->device_type == nullptr || api->device_type[0] == '\0') {
    result.reason = "plugin table has no device_type";
    return result;
  }
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->path = path;
  plugin->name = api->plugin_name ? api->plugin_name : fs::path(path).stem().string();
  plugin->version = api->plugin_version ? api->plugin_version : "";
  plugin->device_type = api->device_type;
  plugin->abi_major = api->abi_major;
  plugin->abi_minor = api->abi_minor;
  plugin->table = std::make_shared<const PluginTable>(make_plugin_table(api));
  plugin->library = library;
  result.plugin = std::move(plugin);
  return result;
}

}  // namespace oar
