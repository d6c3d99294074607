// The typed registry of every OAR_* setting. The core's flags are defined in
// one table (runtime/src/flag_definitions.cpp); a plugin declares its own
// (OAR_<PLUGIN>_*) through the ABI when it loads, and they join the registry
// under the plugin's name after the same validation. Each has a type, default,
// choices and help text; values come from the environment when the flag is
// defined and can be changed at run time (Flags::set, oar.set_flag in Python).
// An OAR_* environment variable that names no flag draws a warning once all
// plugins have declared theirs, so typos, also of plugin flags, do not pass
// silently. A plugin's flag exists once plugins have loaded (Runtime::get());
// Python's oar.get_flag/set_flag load them first for a name the core lacks.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace oar {

enum class FlagType { kBool, kInt, kString, kChoice, kFloat };

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
  std::string owner;  // the declaring plugin's name; empty for a core flag
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
  // Adds a plugin's flag after checking it (name OAR_<OWNER IN UPPER CASE>_*,
  // no clash with a defined flag, a help text, choices for kChoice, a default
  // valid for its type); throws ValueError saying what is wrong otherwise.
  // Its value is read from the environment as for a core flag.
  void declare(const std::string& owner, const FlagDefinition& def);
  // Removes plugin flags by name (a plugin skipped after declaring them);
  // core flags stay.
  void forget(const std::vector<std::string>& names);
  // OAR_* names in the environment that match no flag.
  std::vector<std::string> unknown_environment_names() const;
  // The defined flag nearest to `name` (at most two edits: a typo), or "".
  std::string nearest_name(const std::string& name) const;

 private:
  Flags();
  const FlagValue& find(const std::string& name) const;
  std::vector<FlagValue> flags_;
  mutable std::mutex mutex_;
};

std::vector<FlagDefinition> builtin_flag_definitions();
const char* flag_type_name(FlagType type);  // "bool", "int", ...
// Throws ValueError when `value` is not valid for `def`.
std::string normalize_flag_value(const FlagDefinition& def, const std::string& value);

}  // namespace oar
