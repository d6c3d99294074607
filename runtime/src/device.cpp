#include "oar/device.h"

#include <cctype>
#include <mutex>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/runtime.h"

namespace oar {

namespace {
std::string available_devices_text(const Runtime& rt) {
  std::string s;
  for (const auto& p : rt.plugins())
    s += (s.empty() ? "" : ", ") + p->device_type + " (" + std::to_string(p->device_count) +
         " device(s))";
  return s.empty() ? "none" : s;
}

[[noreturn]] void throw_no_device(const Runtime& rt, const std::string& what) {
  std::string msg = str("no device: ", what, "; no plugin is loaded. Searched: ");
  std::string dirs;
  for (const auto& d : rt.searched_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
  msg += dirs.empty() ? "no directory (OAR_PLUGIN_PATH is empty and OAR_PLUGIN_DEFAULT_DIR=0)"
                      : dirs;
  for (const auto& s : rt.skipped()) msg += str("; skipped ", s.path, ": ", s.reason);
  throw DeviceError(msg);
}
}  // namespace

Device Device::parse(std::string_view text) {
  std::string_view type = text;
  int64_t index = 0;
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    type = text.substr(0, colon);
    std::string_view idx = text.substr(colon + 1);
    if (idx.empty() || idx.size() > 6)
      throw DeviceError(oar::str("invalid device string '", text, "': expected 'type' or 'type:index'"));
    for (char c : idx)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        throw DeviceError(
            oar::str("invalid device string '", text, "': index must be a non-negative integer"));
    index = std::stoll(std::string(idx));
  }
  if (type.empty())
    throw DeviceError(oar::str("invalid device string '", text, "': empty device type"));
  Runtime& rt = Runtime::get();
  if (rt.plugins().empty()) throw_no_device(rt, oar::str("cannot use device '", text, "'"));
  int32_t t = rt.find_device_type(std::string(type));
  if (t < 0) {
    std::string msg = oar::str("unknown device '", text, "': no loaded plugin provides device type '",
                          type, "'. Available: ", available_devices_text(rt));
    for (const auto& s : rt.skipped()) msg += oar::str("; skipped plugin ", s.path, ": ", s.reason);
    throw DeviceError(msg);
  }
  Device d{t, static_cast<int32_t>(index)};
  rt.plugin_for(d);  // range check of the index
  return d;
}

Device Device::default_device() {
  static std::mutex mutex;
  static std::string cached_text;
  static Device cached{};
  static bool valid = false;
  std::string text = Flags::instance().get("OAR_DEVICE");
  std::lock_guard<std::mutex> lock(mutex);
  if (!valid || text != cached_text) {
    cached = parse(text);
    cached_text = text;
    valid = true;
  }
  return cached;
}

const std::string& Device::type_name() const { return Runtime::get().device_type_name(type); }

std::string Device::str() const { return type_name() + ":" + std::to_string(index); }

}  // namespace oar
