// Plugin-declared flags (ABI 1.2): the flagdev test plugin declares three good
// flags and nine bad ones. The good ones join the registry under the plugin's
// name, are read back by the plugin through host->get_flag, are listed by
// oar-info, take their value from the environment, and a typo of one draws
// the unknown-variable warning; each bad one is refused with its reason while
// the plugin still loads. Scenario: test_plugins/flags on OAR_PLUGIN_PATH plus
// the default directory, set in main() before the runtime starts.
#include <map>

#include "abi_test_util.h"
#include "oar/core.h"
#include "oar/flags.h"

using namespace oar;
using namespace oar::abi_testing;

namespace {

const LoadedPlugin* flagdev() {
  for (const auto& p : Runtime::get().plugins())
    if (p->name == "flagdev") return p.get();
  return nullptr;
}

EnvList only_flagdev(EnvList extra = {}) {
  extra.push_back({"OAR_PLUGIN_PATH", plugin_dir("flags")});
  extra.push_back({"OAR_PLUGIN_DEFAULT_DIR", "0"});
  return extra;
}

// The JSON object of flag `name` in oar-info --json's top-level "flags" list
// (a plugin's "rejected_flags" may hold the same name).
std::string json_flag(const std::string& out, const std::string& name) {
  size_t list = out.rfind("\n  \"flags\": [");
  if (list == std::string::npos) return "";
  size_t at = out.find("\"name\": \"" + name + "\",\n", list);
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('}', at) - at);
}

}  // namespace

TEST(AbiPluginFlags, GoodFlagsAreDeclaredUnderThePlugin) {
  const LoadedPlugin* p = flagdev();
  ASSERT_NE(p, nullptr) << "flagdev did not load";
  EXPECT_EQ(p->declared_flags,
            (std::vector<std::string>{"OAR_FLAGDEV_MODE", "OAR_FLAGDEV_SCALE", "OAR_FLAGDEV_VERBOSE"}));
  auto& flags = Flags::instance();
  EXPECT_EQ(flags.get("OAR_FLAGDEV_MODE"), "fast");
  EXPECT_EQ(flags.get("OAR_FLAGDEV_SCALE"), "1.5");
  EXPECT_EQ(flags.get("OAR_FLAGDEV_VERBOSE"), "0");  // "off", normalised
  std::map<std::string, FlagValue> by_name;
  for (const auto& f : flags.list()) by_name.emplace(f.definition.name, f);
  EXPECT_EQ(by_name.at("OAR_FLAGDEV_MODE").owner, "flagdev");
  EXPECT_EQ(by_name.at("OAR_FLAGDEV_MODE").definition.type, FlagType::kChoice);
  EXPECT_EQ(by_name.at("OAR_FLAGDEV_MODE").definition.choices, (std::vector<std::string>{"fast", "exact"}));
  EXPECT_EQ(by_name.at("OAR_FLAGDEV_SCALE").definition.type, FlagType::kFloat);
  EXPECT_EQ(by_name.at("OAR_DEVICE").owner, "");
  // The plugin read its flag through host->get_flag while the core queried it.
  ASSERT_EQ(p->properties.size(), 1u);
  EXPECT_STREQ(p->properties[0].name, "flagdev (mode fast)");
}

TEST(AbiPluginFlags, PluginFlagsAreSetAndValidatedLikeCoreFlags) {
  ASSERT_NE(flagdev(), nullptr);  // a plugin's flags exist once plugins have loaded
  auto& flags = Flags::instance();
  flags.set("OAR_FLAGDEV_MODE", "EXACT");
  EXPECT_EQ(flags.get("OAR_FLAGDEV_MODE"), "exact");
  EXPECT_THROW(flags.set("OAR_FLAGDEV_MODE", "slow"), ValueError);
  EXPECT_THROW(flags.set("OAR_FLAGDEV_SCALE", "1.5x"), ValueError);
  EXPECT_THROW(flags.set("OAR_FLAGDEV_SCALE", "inf"), ValueError);
  flags.set("OAR_FLAGDEV_SCALE", "-2e-3");
  EXPECT_EQ(flags.get("OAR_FLAGDEV_SCALE"), "-2e-3");
  flags.set("OAR_FLAGDEV_MODE", "fast");
}

TEST(AbiPluginFlags, BadDeclarationsAreRefusedWithAReason) {
  const LoadedPlugin* p = flagdev();
  ASSERT_NE(p, nullptr);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"OAR_OTHER_THING", "must start with OAR_FLAGDEV_"},
      {"OAR_DEVICE", "must start with OAR_FLAGDEV_"},
      {"OAR_FLAGDEV_MODE", "already defined by plugin 'flagdev'"},
      {"OAR_FLAGDEV_BAD_TYPE", "unknown flag type 42"},
      {"OAR_FLAGDEV_BAD_DEFAULT", "invalid default: flag OAR_FLAGDEV_BAD_DEFAULT expects an integer, got 'ten'"},
      {"OAR_FLAGDEV_NO_CHOICES", "choice flag without choices"},
      {"OAR_FLAGDEV_NO_DOC", "no documentation line"},
      {"flag #10", "struct_size 8 is too small"},
      {"flag #11", "the definition pointer is NULL"},
  };
  ASSERT_EQ(p->rejected_flags.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p->rejected_flags[i].name, expected[i].first);
    EXPECT_NE(p->rejected_flags[i].reason.find(expected[i].second), std::string::npos)
        << expected[i].first << ": " << p->rejected_flags[i].reason;
  }
  // A refused flag is not defined, and the core's OAR_DEVICE is untouched.
  EXPECT_FALSE(Flags::instance().is_defined("OAR_FLAGDEV_BAD_DEFAULT"));
  EXPECT_FALSE(Flags::instance().is_defined("OAR_OTHER_THING"));
  EXPECT_EQ(Flags::instance().get("OAR_DEVICE"), "cpu");
}

// The registry's own checks, without a plugin in between.
TEST(AbiPluginFlags, DeclareChecksNamesAndClashes) {
  auto& flags = Flags::instance();
  FlagDefinition clash{"OAR_PLUGIN_PATH", FlagType::kString, "", "clashes with the core", {}};
  try {
    flags.declare("plugin", clash);
    ADD_FAILURE() << "a core flag's name must be refused";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("already defined by the core"), std::string::npos) << e.what();
  }
  FlagDefinition lower_case{"OAR_MY_DEV_x", FlagType::kBool, "0", "bad character", {}};
  EXPECT_THROW(flags.declare("my-dev", lower_case), ValueError);
  FlagDefinition upper_choice{"OAR_MY_DEV_C", FlagType::kChoice, "a", "upper-case choice", {"a", "B"}};
  EXPECT_THROW(flags.declare("my-dev", upper_choice), ValueError);
  FlagDefinition prefix_only{"OAR_MY_DEV_", FlagType::kBool, "0", "nothing after the prefix", {}};
  EXPECT_THROW(flags.declare("my-dev", prefix_only), ValueError);
  // A plugin name with a '-' maps to '_' in the prefix.
  FlagDefinition good{"OAR_MY_DEV_LEVEL", FlagType::kInt, "3", "a level", {}};
  flags.declare("my-dev", good);
  EXPECT_EQ(flags.get_int("OAR_MY_DEV_LEVEL"), 3);
  flags.forget({"OAR_MY_DEV_LEVEL", "OAR_DEVICE"});  // core flags are never forgotten
  EXPECT_FALSE(flags.is_defined("OAR_MY_DEV_LEVEL"));
  EXPECT_TRUE(flags.is_defined("OAR_DEVICE"));
}

TEST(AbiPluginFlags, OarInfoListsThemUnderThePlugin) {
  ProcessResult r = run_oar_info({}, only_flagdev());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("flags:       OAR_FLAGDEV_MODE, OAR_FLAGDEV_SCALE, OAR_FLAGDEV_VERBOSE"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rejected flag OAR_OTHER_THING: name 'OAR_OTHER_THING' must start with OAR_FLAGDEV_"),
            std::string::npos) << r.out;
  size_t section = r.out.find("Flags of plugin 'flagdev':");
  ASSERT_NE(section, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OAR_FLAGDEV_MODE = 'fast'  [choice {fast, exact}, default 'fast', source: default]",
                       section), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("How the fake device pretends to work.", section), std::string::npos);
  // The refusals are warned about at load too, so a plugin author sees them.
  EXPECT_NE(r.err.find("plugin 'flagdev': flag OAR_FLAGDEV_NO_DOC ignored"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unknown environment variable"), std::string::npos) << r.err;

  r = run_oar_info({"--json"}, only_flagdev({{"OAR_FLAGDEV_MODE", "exact"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string mode = json_flag(r.out, "OAR_FLAGDEV_MODE");
  EXPECT_NE(mode.find("\"value\": \"exact\""), std::string::npos) << mode;
  EXPECT_NE(mode.find("\"source\": \"env\""), std::string::npos) << mode;
  EXPECT_NE(mode.find("\"owner\": \"flagdev\""), std::string::npos) << mode;
  EXPECT_NE(r.out.find("\"name\": \"flagdev (mode exact)\""), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("unknown environment variable"), std::string::npos) << r.err;
}

TEST(AbiPluginFlags, TypoOfAPluginFlagWarns) {
  // One letter changed: checked after the plugins declared theirs.
  ProcessResult r = run_oar_info({}, only_flagdev({{"OAR_FLAGDEV_MODD", "exact"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown environment variable OAR_FLAGDEV_MODD ignored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(did you mean OAR_FLAGDEV_MODE?)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("OAR_FLAGDEV_MODE = 'fast'"), std::string::npos) << r.out;
  // The real name is only a flag while its plugin is loaded.
  r = run_oar_info({}, {{"OAR_PLUGIN_DEFAULT_DIR", "0"}, {"OAR_FLAGDEV_MODE", "exact"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown environment variable OAR_FLAGDEV_MODE ignored"), std::string::npos) << r.err;
  // Nothing within two edits: no suggestion.
  r = run_oar_info({}, only_flagdev({{"OAR_SOMETHING_ELSE_ENTIRELY", "1"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown environment variable OAR_SOMETHING_ELSE_ENTIRELY ignored: it names no oar flag;"),
            std::string::npos)
      << r.err;
}

TEST(AbiPluginFlags, InvalidEnvironmentValueKeepsTheDefault) {
  ProcessResult r = run_oar_info({"--json"}, only_flagdev({{"OAR_FLAGDEV_MODE", "slow"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ignoring OAR_FLAGDEV_MODE: flag OAR_FLAGDEV_MODE expects one of {fast, exact}, got 'slow'"),
            std::string::npos) << r.err;
  std::string mode = json_flag(r.out, "OAR_FLAGDEV_MODE");
  EXPECT_NE(mode.find("\"value\": \"fast\""), std::string::npos) << mode;
  EXPECT_NE(mode.find("\"source\": \"default\""), std::string::npos) << mode;
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("flags"), /*default_dir=*/true);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
