// The adapter drivers in oar-info and `python -m oar.info`: registered with
// the core's report when liboar_adapter is loaded (the core itself never
// loads drivers).
#include <sstream>

#include "oar/adapter/offload.h"
#include "oar/flags.h"
#include "oar/info_report.h"
#include "oar/plugin_loader.h"

namespace oar::adapter {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

std::string section_text() {
  std::vector<DriverInfo> all = drivers();
  std::ostringstream os;
  size_t loaded = 0;
  for (const auto& d : all) loaded += d.loaded;
  std::string dirs;
  for (const auto& dir : adapter_search_dirs()) dirs += (dirs.empty() ? "" : ":") + dir;
  os << "Adapter drivers (" << loaded << " loaded; OAR_ADAPTER='" << Flags::instance().get("OAR_ADAPTER")
     << "'; searched " << (dirs.empty() ? "no directory" : dirs) << "):\n";
  if (loaded == 0) os << "  none\n";
  for (const auto& d : all)
    if (d.loaded) {
      os << "  " << d.name << "  " << d.version << "  (" << d.vendor << ")\n      path:    " << d.path << "\n";
      std::string opts;
      for (const auto& o : d.options) opts += (opts.empty() ? "" : ", ") + o;
      os << "      options: " << (opts.empty() ? "none" : opts) << "\n";
    }
  os << "Skipped adapter drivers (" << all.size() - loaded << "):\n";
  if (loaded == all.size()) os << "  none\n";
  for (const auto& d : all)
    if (!d.loaded) os << "  " << d.path << "\n      reason: " << d.reason << "\n";
  return os.str();
}

std::string section_json() {
  std::ostringstream os;
  os << "[";
  bool first = true;
  for (const auto& d : drivers()) {
    os << (first ? "" : ", ") << "{\"name\": " << quoted(d.name) << ", \"path\": " << quoted(d.path)
       << ", \"loaded\": " << (d.loaded ? "true" : "false") << ", \"vendor\": " << quoted(d.vendor)
       << ", \"version\": " << quoted(d.version) << ", \"reason\": " << quoted(d.reason) << ", \"options\": [";
    for (size_t i = 0; i < d.options.size(); ++i) os << (i ? ", " : "") << quoted(d.options[i]);
    os << "]}";
    first = false;
  }
  os << "]";
  return os.str();
}

[[maybe_unused]] const bool registered = [] {
  register_info_section({"adapter_drivers", section_text, section_json});
  return true;
}();

}  // namespace

}  // namespace oar::adapter
