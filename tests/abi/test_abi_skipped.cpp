// Every way a plugin can fail to load is reported, precisely, and none of them
// stops the host: a table of a newer major version (refused by the core), a
// plugin that refuses the host's major version itself, a library without the
// entry symbol, an entry that fails (driver missing), a table with a required
// entry NULL, and a file that is not a shared library. Scenario: all of those
// directories plus newer_minor on OAR_PLUGIN_PATH, and the default directory
// (the CPU plugin) too, so good plugins load beside the bad ones.
#include <map>

#include "abi_test_util.h"
#include "oar/core.h"

using namespace oar;
using namespace oar::abi_testing;

namespace {

const char* const kBadCases[] = {"wrong_major", "wrong_major_host", "no_entry",
                                 "init_fails",  "missing_required", "garbage"};

std::string scenario_path() {
  std::string path;
  for (const char* c : kBadCases) path += plugin_dir(c) + ":";
  return path + plugin_dir("newer_minor");
}

// The loader's reason for liboar_plugin_<name>.so, or "" if it was not skipped.
std::string reason_for(const std::string& name) {
  for (const auto& s : Runtime::get().skipped())
    if (s.path == plugin_dir(name) + "/liboar_plugin_" + name + ".so") return s.reason;
  return "";
}

std::string v(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

// Substrings each skip reason must contain.
std::map<std::string, std::vector<std::string>> expected_reasons() {
  const int M = OAR_ABI_VERSION_MAJOR, m = OAR_ABI_VERSION_MINOR;
  return {
      {"wrong_major", {"ABI major version mismatch", "ABI " + v(M + 1, 0), "ABI " + v(M, m)}},
      {"wrong_major_host",
       {"VERSION_MISMATCH", "wrong_major_host plugin is built for ABI " + v(M + 1, 0),
        "the host offers ABI " + v(M, m)}},
      {"no_entry", {"oar_plugin_entry"}},
      {"init_fails", {"DEVICE_ERROR", "simulated driver failure: no device found"}},
      {"missing_required", {"required ABI entries are NULL: memory_allocate"}},
      {"garbage", {"cannot open"}},
  };
}

}  // namespace

TEST(AbiSkipped, EachBadPluginHasAPreciseReason) {
  for (const auto& [name, parts] : expected_reasons()) {
    std::string reason = reason_for(name);
    ASSERT_FALSE(reason.empty()) << name << " was not skipped";
    for (const auto& part : parts)
      EXPECT_NE(reason.find(part), std::string::npos)
          << name << ": reason lacks '" << part << "': " << reason;
  }
  // missing_required is refused for that entry alone: nothing else is NULL.
  EXPECT_EQ(reason_for("missing_required").find(","), std::string::npos);
  EXPECT_EQ(Runtime::get().skipped().size(), std::size(kBadCases));
}

TEST(AbiSkipped, GoodPluginsStillLoadAndRun) {
  const Runtime& rt = Runtime::get();
  // testdev from OAR_PLUGIN_PATH, and the default directory's plugins (cpu, and
  // opencl where it was built): nothing from the bad scenario directories.
  int from_default_dir = 0;
  for (const auto& p : rt.plugins())
    if (p->device_type != "testdev") {
      EXPECT_EQ(p->path.find(OAR_TEST_PLUGIN_DIR), std::string::npos) << p->path;
      ++from_default_dir;
    }
  ASSERT_EQ(int(rt.plugins().size()), from_default_dir + 1);
  EXPECT_GE(rt.find_device_type("cpu"), 0);
  EXPECT_GE(rt.find_device_type("testdev"), 0);
  for (const char* t : {"wrongdev", "missingdev"}) EXPECT_EQ(rt.find_device_type(t), -1) << t;
  // The search order is OAR_PLUGIN_PATH, then the default directory.
  ASSERT_EQ(rt.searched_dirs().size(), std::size(kBadCases) + 2);
  EXPECT_EQ(rt.searched_dirs()[0], plugin_dir("wrong_major"));

  Tensor a = Tensor::from_vector<float>({2.0f, -3.0f}, {2}, Device::parse("testdev"));
  EXPECT_EQ(call1("neg", {a}).to_vector<float>(), (std::vector<float>{-2.0f, 3.0f}));
  Tensor b = Tensor::from_vector<float>({2.0f, -3.0f}, {2}, Device::cpu());
  EXPECT_EQ(call1("neg", {b}).to_vector<float>(), (std::vector<float>{-2.0f, 3.0f}));
}

TEST(AbiSkipped, DeviceOfARefusedPluginNamesTheReasons) {
  try {
    Device::parse("wrongdev");
    ADD_FAILURE() << "wrongdev must not exist";
  } catch (const DeviceError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown device 'wrongdev'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("simulated driver failure"), std::string::npos) << msg;
  }
}

TEST(AbiSkipped, OarInfoReportsEveryReason) {
  EnvList env = {{"OAR_PLUGIN_PATH", scenario_path()}, {"OAR_PLUGIN_DEFAULT_DIR", "1"}};
  for (bool json : {false, true}) {
    ProcessResult r = run_oar_info(json ? std::vector<std::string>{"--json"} : std::vector<std::string>{}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(json ? "\"skipped\": [" : "Skipped plugins (6):"), std::string::npos) << r.out;
    for (const auto& [name, parts] : expected_reasons()) {
      EXPECT_NE(r.out.find("liboar_plugin_" + name + ".so"), std::string::npos) << name;
      for (const auto& part : parts)
        EXPECT_NE(r.out.find(part), std::string::npos) << name << ": " << part << "\n" << r.out;
    }
    EXPECT_NE(r.out.find("cpu_mkldnn"), std::string::npos);
    EXPECT_NE(r.out.find("newer_minor"), std::string::npos);
  }
}

// With only bad plugins there is no device at all, yet oar-info still works.
TEST(AbiSkipped, OarInfoWithOnlyBadPlugins) {
  std::string path;
  for (const char* c : kBadCases) {
    if (!path.empty()) path += ':';
    path += plugin_dir(c);
  }
  ProcessResult r = run_oar_info({}, {{"OAR_PLUGIN_PATH", path}, {"OAR_PLUGIN_DEFAULT_DIR", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No plugin is loaded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Skipped plugins (6):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulated driver failure: no device found"), std::string::npos) << r.out;
}

int main(int argc, char** argv) {
  set_plugin_environment(scenario_path(), /*default_dir=*/true);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
