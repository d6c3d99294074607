// A plugin's flag declarations (oar_plugin_api.flags, ABI 1.2) turned into
// registry entries. Everything read here was written by the plugin, so every
// pointer and size is checked before use and each failure is kept as a reason.
#include <string>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/log.h"
#include "oar/plugin_loader.h"
#include "oar/plugin_table.h"

namespace oar {

namespace {

// More than any plugin needs; a larger count is a garbage table, not a list.
constexpr uint64_t kMaxPluginFlags = 1024;

FlagType flag_type(oar_flag_type_t type) {
  switch (type) {
    case OAR_FLAG_TYPE_BOOL: return FlagType::kBool;
    case OAR_FLAG_TYPE_INT: return FlagType::kInt;
    case OAR_FLAG_TYPE_FLOAT: return FlagType::kFloat;
    case OAR_FLAG_TYPE_STRING: return FlagType::kString;
    case OAR_FLAG_TYPE_CHOICE: return FlagType::kChoice;
  }
  throw ValueError(str("unknown flag type ", type, " (oar_flag_type_t is 0..4)"));
}

std::vector<std::string> split_choices(const char* text) {
  std::vector<std::string> out;
  std::string all = text ? text : "";
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    std::string word = all.substr(start, end - start);
    size_t a = word.find_first_not_of(' '), b = word.find_last_not_of(' ');
    if (a != std::string::npos) out.push_back(word.substr(a, b - a + 1));
    else if (!all.empty()) out.push_back("");  // an empty word, refused by Flags::declare
    start = end + 1;
  }
  return out;
}

}  // namespace

FlagDefinition flag_definition_from_abi(const oar_flag_definition* d) {
  if (d == nullptr) throw ValueError("the definition pointer is NULL");
  if (!OAR_STRUCT_HAS(d, oar_flag_definition, doc))
    throw ValueError(str("struct_size ", d->struct_size, " is too small for an oar_flag_definition"));
  if (d->name == nullptr || d->name[0] == '\0') throw ValueError("it has no name");
  FlagDefinition def;
  def.name = d->name;
  def.type = flag_type(d->type);
  if (d->default_value == nullptr) throw ValueError("its default_value is NULL (use \"\" for empty)");
  def.default_value = d->default_value;
  def.help = d->doc ? d->doc : "";
  const char* choices = OAR_STRUCT_HAS(d, oar_flag_definition, choices) ? d->choices : nullptr;
  if (def.type == FlagType::kChoice) def.choices = split_choices(choices);
  else if (choices != nullptr && choices[0] != '\0')
    throw ValueError(str("choices are given but the type is ", flag_type_name(def.type)));
  return def;
}

void declare_plugin_flags(LoadedPlugin& plugin) {
  // Zero for a table older than 1.2 (the loader's copy ends at its struct_size).
  const oar_plugin_api* api = &plugin_table(plugin).entries;
  if (api->flag_count == 0) return;
  auto reject = [&plugin](std::string name, std::string reason) {
    log_message(LogLevel::kWarning, str("plugin '", plugin.name, "': flag ", name, " ignored: ", reason));
    plugin.rejected_flags.push_back({std::move(name), std::move(reason)});
  };
  if (api->flags == nullptr || api->flag_count > kMaxPluginFlags) {
    reject("(all)", str("flag_count is ", api->flag_count, " but flags is ",
                        api->flags ? "not a plausible list" : "NULL"));
    return;
  }
  for (uint64_t i = 0; i < api->flag_count; ++i) {
    const oar_flag_definition* d = api->flags[i];
    std::string label = (d && OAR_STRUCT_HAS(d, oar_flag_definition, name) && d->name && d->name[0])
                            ? std::string(d->name)
                            : str("flag #", i);
    try {
      FlagDefinition def = flag_definition_from_abi(d);
      Flags::instance().declare(plugin.name, def);
      plugin.declared_flags.push_back(def.name);
    } catch (const ValueError& e) {
      reject(label, e.what());
    }
  }
}

}  // namespace oar
