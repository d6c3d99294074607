#include "oar/flags.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "oar/error.h"

extern char** environ;

namespace oar {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

std::string normalize_flag_value(const FlagDefinition& def, const std::string& value) {
  switch (def.type) {
    case FlagType::kBool: {
      std::string v = lower(value);
      if (v == "1" || v == "true" || v == "on" || v == "yes") return "1";
      if (v == "0" || v == "false" || v == "off" || v == "no" || v.empty()) return "0";
      throw ValueError(str("flag ", def.name, " expects a boolean (1/0, true/false), got '",
                           value, "'"));
    }
    case FlagType::kInt: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        throw ValueError(str("flag ", def.name, " expects an integer, got '", value, "'"));
      return std::to_string(v);
    }
    case FlagType::kChoice: {
      std::string v = lower(value);
      for (const auto& c : def.choices)
        if (v == c) return v;
      std::string all;
      for (const auto& c : def.choices) all += (all.empty() ? "" : ", ") + c;
      throw ValueError(str("flag ", def.name, " expects one of {", all, "}, got '", value, "'"));
    }
    case FlagType::kString:
      return value;
  }
  return value;
}

Flags& Flags::instance() {
  static Flags flags;
  return flags;
}

Flags::Flags() {
  for (auto& def : builtin_flag_definitions()) {
    FlagValue fv{def, def.default_value, false};
    if (const char* env = std::getenv(def.name.c_str())) {
      try {
        fv.value = normalize_flag_value(def, env);
        fv.from_environment = true;
      } catch (const ValueError& e) {
        // A bad environment value must not kill the host at start-up; keep the default.
        std::fprintf(stderr, "oar: warning: ignoring %s: %s\n", def.name.c_str(), e.what());
      }
    }
    flags_.push_back(std::move(fv));
  }
}

const FlagValue& Flags::find(const std::string& name) const {
  for (const auto& f : flags_)
    if (f.definition.name == name) return f;
  throw ValueError(str("unknown flag '", name, "' (oar-info lists the flags)"));
}

bool Flags::is_defined(const std::string& name) const {
  for (const auto& f : flags_)
    if (f.definition.name == name) return true;
  return false;
}

std::string Flags::get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find(name).value;
}
bool Flags::get_bool(const std::string& name) const { return get(name) == "1"; }
int64_t Flags::get_int(const std::string& name) const { return std::stoll(get(name)); }

void Flags::set(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& f = const_cast<FlagValue&>(find(name));
  f.value = normalize_flag_value(f.definition, value);
}

std::vector<FlagValue> Flags::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return flags_;
}

std::vector<std::string> Flags::unknown_environment_names() const {
  std::vector<std::string> unknown;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "OAR_", 4) != 0) continue;
    std::string name(*e, std::strcspn(*e, "="));
    if (!is_defined(name)) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace oar
