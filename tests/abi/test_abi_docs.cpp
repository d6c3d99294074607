// The documentation stays true to the code: docs/abi.md's entry table lists
// exactly oar::abi_entries() (from oar_plugin_entries.def), in order, with the
// same requirement and version, and names the core's ABI version; docs/flags.md
// documents every flag with its default and choices.
#include <regex>

#include "abi_test_util.h"
#include "oar/flags.h"
#include "oar/plugin_loader.h"

using namespace oar::abi_testing;

namespace {

struct DocEntry {
  std::string name, requirement, since;
};

// Rows of the Markdown table whose header is "| Entry | Requirement | Since ABI |".
std::vector<DocEntry> parse_entry_table(const std::string& markdown) {
  std::vector<DocEntry> rows;
  std::istringstream in(markdown);
  bool in_table = false;
  const std::regex row(R"(^\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*([0-9.]+)\s*\|\s*$)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| Entry | Requirement | Since ABI |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;
    std::smatch m;
    if (std::regex_match(line, m, row)) rows.push_back({m[1], m[2], m[3]});
    else rows.push_back({"<unparsed: " + line + ">", "", ""});
  }
  return rows;
}

}  // namespace

TEST(AbiDocs, EntryTableMatchesAbiEntries) {
  std::string doc = read_file(std::string(OAR_SOURCE_DIR) + "/docs/abi.md");
  ASSERT_FALSE(doc.empty()) << "docs/abi.md is missing";
  std::vector<DocEntry> rows = parse_entry_table(doc);
  const auto& entries = oar::abi_entries();
  ASSERT_EQ(rows.size(), entries.size()) << "docs/abi.md's table and oar_plugin_entries.def differ";
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(rows[i].name, entries[i].name) << "row " << i;
    EXPECT_EQ(rows[i].requirement, entries[i].required ? "required" : "optional")
        << entries[i].name;
    EXPECT_EQ(rows[i].since, std::to_string(OAR_ABI_VERSION_MAJOR) + "." +
                                 std::to_string(entries[i].since_minor))
        << entries[i].name;
  }
}

// The table in the docs is the one `oar-info --abi` prints, verbatim.
TEST(AbiDocs, EntryTableIsOarInfoOutput) {
  ProcessResult r = run_oar_info({"--abi"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string doc = read_file(std::string(OAR_SOURCE_DIR) + "/docs/abi.md");
  EXPECT_NE(doc.find(r.out), std::string::npos) << "paste this into docs/abi.md:\n" << r.out;
}

TEST(AbiDocs, AbiVersionAndChangelog) {
  std::string doc = read_file(std::string(OAR_SOURCE_DIR) + "/docs/abi.md");
  std::string version = std::to_string(OAR_ABI_VERSION_MAJOR) + "." + std::to_string(OAR_ABI_VERSION_MINOR);
  EXPECT_NE(doc.find("## ABI changelog"), std::string::npos);
  EXPECT_NE(doc.find("v" + version), std::string::npos) << "changelog lacks v" << version;
  EXPECT_NE(doc.find(OAR_PLUGIN_ENTRY_SYMBOL), std::string::npos);
}

TEST(AbiDocs, FlagsDocumentEveryFlag) {
  std::string doc = read_file(std::string(OAR_SOURCE_DIR) + "/docs/flags.md");
  ASSERT_FALSE(doc.empty()) << "docs/flags.md is missing";
  for (const auto& def : oar::builtin_flag_definitions()) {
    size_t at = doc.find("## `" + def.name + "`");
    ASSERT_NE(at, std::string::npos) << def.name << " has no section in docs/flags.md";
    std::string section = doc.substr(at, doc.find("\n## ", at + 1) - at);
    std::string want_default = "Default: `" + def.default_value + "`";
    if (def.default_value.empty()) want_default = "Default: empty";
    EXPECT_NE(section.find(want_default), std::string::npos) << def.name << ":\n" << section;
    for (const auto& c : def.choices)
      EXPECT_NE(section.find("`" + c + "`"), std::string::npos) << def.name << " choice " << c;
  }
}

// Each loaded plugin's flags are documented in that plugin's section of
// docs/flags.md ("## Flags of plugin `NAME`", one "### `FLAG`" each), with
// their type, default and choices; none is documented as a core flag.
TEST(AbiDocs, FlagsDocumentEveryPluginFlagUnderItsPlugin) {
  std::string doc = read_file(std::string(OAR_SOURCE_DIR) + "/docs/flags.md");
  ASSERT_FALSE(doc.empty()) << "docs/flags.md is missing";
  size_t checked = 0;
  bool opencl_loaded = false;
  for (const auto& p : oar::Runtime::get().plugins()) {
    opencl_loaded |= p->name == "opencl";
    if (p->declared_flags.empty()) continue;
    size_t at = doc.find("## Flags of plugin `" + p->name + "`");
    ASSERT_NE(at, std::string::npos) << "docs/flags.md has no section for plugin " << p->name;
    std::string plugin_section = doc.substr(at, doc.find("\n## ", at + 1) - at);
    for (const auto& f : oar::Flags::instance().list()) {
      if (f.owner != p->name) continue;
      const auto& def = f.definition;
      EXPECT_EQ(doc.find("\n## `" + def.name + "`"), std::string::npos)
          << def.name << " is documented as a core flag";
      size_t fat = plugin_section.find("### `" + def.name + "`");
      ASSERT_NE(fat, std::string::npos) << def.name << " is not in plugin " << p->name << "'s section";
      std::string section = plugin_section.substr(fat, plugin_section.find("\n### ", fat + 1) - fat);
      EXPECT_NE(section.find(std::string("- Type: ") + oar::flag_type_name(def.type)), std::string::npos)
          << def.name << ":\n" << section;
      std::string want_default = def.default_value.empty() ? "Default: empty" : "Default: `" + def.default_value + "`";
      EXPECT_NE(section.find(want_default), std::string::npos) << def.name << ":\n" << section;
      for (const auto& c : def.choices)
        EXPECT_NE(section.find("`" + c + "`"), std::string::npos) << def.name << " choice " << c;
      ++checked;
    }
  }
  if (opencl_loaded) {
    EXPECT_GE(checked, 1u) << "the opencl plugin declares OAR_OPENCL_CACHE_DIR";
  }
}
