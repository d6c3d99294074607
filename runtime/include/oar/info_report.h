// What this oar installation can do, as the core sees it: the report that
// oar-info prints and `python -m oar.info` prints the same way. Loads the
// plugins on first use; never fails because a plugin did (a skipped plugin is
// part of the report).
#pragma once

#include <functional>
#include <string>

namespace oar {

// A section another oar library adds to the report when it is loaded
// (liboar_adapter lists its adapter drivers): `text` is printed after the
// skipped plugins, `json` (a JSON value) goes under `key`. Both run before the
// flags are listed, so flags the section's library declares are listed too.
struct InfoSection {
  std::string key;
  std::function<std::string()> text;
  std::function<std::string()> json;
};
void register_info_section(InfoSection section);

std::string info_report_text();
std::string info_report_json();
// The plugin ABI entry table (oar_plugin_entries.def) as Markdown, for docs/abi.md.
std::string abi_entries_markdown();

}  // namespace oar
