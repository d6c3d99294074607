// What this oar installation can do, as the core sees it: the report that
// oar-info prints and `python -m oar.info` prints the same way. Loads the
// plugins on first use; never fails because a plugin did (a skipped plugin is
// part of the report).
#pragma once

#include <string>

namespace oar {

std::string info_report_text();
std::string info_report_json();
// The plugin ABI entry table (oar_plugin_entries.def) as Markdown, for docs/abi.md.
std::string abi_entries_markdown();

}  // namespace oar
