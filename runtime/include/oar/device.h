// Device identity: a device type registered by a loaded plugin ("cpu",
// "cuda", "opencl", a vendor name) plus an index. Parsing a string checks the
// syntax and that some loaded plugin provides the type and index, so a typo or
// a missing plugin is reported at the point the user names the device.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace oar {

struct Device {
  int32_t type = 0;   // index into the runtime's device-type table
  int32_t index = 0;

  // "cpu", "cpu:0", "cuda:1". Throws DeviceError for bad syntax, an unknown
  // type, or an index beyond the plugin's device count.
  static Device parse(std::string_view text);
  // The default device (OAR_DEVICE, else "cpu").
  static Device default_device();
  static Device cpu() { return parse("cpu"); }

  const std::string& type_name() const;
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace oar

template <>
struct std::hash<oar::Device> {
  size_t operator()(const oar::Device& d) const noexcept {
    return std::hash<int64_t>()((int64_t(d.type) << 32) | uint32_t(d.index));
  }
};
