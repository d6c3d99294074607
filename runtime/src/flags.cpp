#include "oar/flags.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
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

const char* flag_type_name(FlagType type) {
  switch (type) {
    case FlagType::kBool: return "bool";
    case FlagType::kInt: return "int";
    case FlagType::kString: return "string";
    case FlagType::kChoice: return "choice";
    case FlagType::kFloat: return "float";
  }
  return "?";
}

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
    case FlagType::kFloat: {
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        throw ValueError(str("flag ", def.name, " expects a finite number, got '", value, "'"));
      return value;
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

namespace {
// The flag at its default, or at the environment's value when that is valid.
FlagValue initial_value(const FlagDefinition& def, const std::string& owner) {
  FlagValue fv{def, def.default_value, false, owner};
  if (const char* env = std::getenv(def.name.c_str())) {
    try {
      fv.value = normalize_flag_value(def, env);
      fv.from_environment = true;
    } catch (const ValueError& e) {
      // A bad environment value must not kill the host at start-up; keep the default.
      std::fprintf(stderr, "oar: warning: ignoring %s: %s\n", def.name.c_str(), e.what());
    }
  }
  return fv;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}
}  // namespace

Flags::Flags() {
  for (auto& def : builtin_flag_definitions()) flags_.push_back(initial_value(def, ""));
}

const FlagValue& Flags::find(const std::string& name) const {
  for (const auto& f : flags_)
    if (f.definition.name == name) return f;
  throw ValueError(str("unknown flag '", name, "' (oar-info lists the flags)"));
}

bool Flags::is_defined(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& f : flags_)
    if (f.definition.name == name) return true;
  return false;
}

void Flags::declare(const std::string& owner, const FlagDefinition& def) {
  // Plugin names may hold characters a variable name cannot ("cpu-x"): map them to '_'.
  std::string prefix = "OAR_" + upper(owner) + "_";
  for (char& c : prefix)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (def.name.size() <= prefix.size() || def.name.compare(0, prefix.size(), prefix) != 0)
    throw ValueError(str("name '", def.name, "' must start with ", prefix,
                         " (a plugin's flags carry its name)"));
  for (char c : def.name)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      throw ValueError(str("name '", def.name, "' may hold only A-Z, 0-9 and '_'"));
  if (def.help.empty()) throw ValueError(str(def.name, " has no documentation line"));
  if (def.type == FlagType::kChoice && def.choices.empty())
    throw ValueError(str(def.name, " is a choice flag without choices"));
  for (const auto& c : def.choices)
    if (c.empty() || c != lower(c))
      throw ValueError(str(def.name, ": choice '", c, "' must be a non-empty lower-case word"));
  FlagDefinition checked = def;
  try {
    checked.default_value = normalize_flag_value(def, def.default_value);
  } catch (const ValueError& e) {
    throw ValueError(str("invalid default: ", e.what()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& f : flags_)
    if (f.definition.name == def.name)
      throw ValueError(str(def.name, " is already defined by ",
                           f.owner.empty() ? std::string("the core") : "plugin '" + f.owner + "'"));
  flags_.push_back(initial_value(checked, owner));
}

void Flags::forget(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  flags_.erase(std::remove_if(flags_.begin(), flags_.end(),
                              [&](const FlagValue& f) {
                                return !f.owner.empty() &&
                                       std::find(names.begin(), names.end(), f.definition.name) != names.end();
                              }),
               flags_.end());
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

std::string Flags::nearest_name(const std::string& name) const {
  // Levenshtein distance, one row at a time; names are short.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_distance = 3;  // more than two edits is not a typo
  for (const FlagValue& f : list()) {
    const size_t d = distance(name, f.definition.name);
    if (d < best_distance) best_distance = d, best = f.definition.name;
  }
  return best;
}

std::vector<std::string> Flags::unknown_environment_names() const {
  // Called once plugins have loaded, so their flags count as known.
  std::vector<std::string> unknown;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "OAR_", 4) != 0) continue;
    std::string name(*e, std::strcspn(*e, "="));
    if (!is_defined(name)) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace oar
