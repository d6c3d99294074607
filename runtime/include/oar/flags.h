// The typed registry of every OAR_* setting. Flags are defined in one table
// (runtime/src/flag_definitions.cpp) with a type, default, choices and help
// text; values come from the environment at first use and can be changed at
// run time (Flags::set, oar.set_flag in Python). An OAR_* environment variable
// that names no flag draws a warning, so typos do not pass silently.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace oar {

enum class FlagType { kBool, kInt, kString, kChoice };

struct FlagDefinition {
  std::string name;  // "OAR_DEVICE"
  FlagType type;
  std::string default_value;
  std::string help;
  std::vector<std::string> choices;  // kChoice only
};

struct FlagValue {
  FlagDefinition definition;
  std::string value;
  bool from_environment;
};

class Flags {
 public:
  static Flags& instance();

  std::string get(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  // Validates against the flag's type and choices; throws ValueError.
  void set(const std::string& name, const std::string& value);
  bool is_defined(const std::string& name) const;
  std::vector<FlagValue> list() const;
  // OAR_* names in the environment that match no flag.
  std::vector<std::string> unknown_environment_names() const;

 private:
  Flags();
  const FlagValue& find(const std::string& name) const;
  std::vector<FlagValue> flags_;
  mutable std::mutex mutex_;
};

std::vector<FlagDefinition> builtin_flag_definitions();
// Throws ValueError when `value` is not valid for `def`.
std::string normalize_flag_value(const FlagDefinition& def, const std::string& value);

}  // namespace oar
