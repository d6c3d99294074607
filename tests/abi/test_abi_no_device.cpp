// No plugin at all: OAR_PLUGIN_PATH names an empty directory and the default
// directory is off. The core must still start; the first tensor raises a
// DeviceError that says there is no device and where it looked, and oar-info
// reports the situation and exits 0.
#include "abi_test_util.h"
#include "oar/core.h"

using namespace oar;
using namespace oar::abi_testing;

TEST(AbiNoDevice, RuntimeStartsEmpty) {
  const Runtime& rt = Runtime::get();
  EXPECT_TRUE(rt.plugins().empty());
  EXPECT_TRUE(rt.skipped().empty());
  EXPECT_TRUE(rt.devices().empty());
  ASSERT_EQ(rt.searched_dirs().size(), 1u);
  EXPECT_EQ(rt.searched_dirs()[0], plugin_dir("empty"));
}

TEST(AbiNoDevice, CreatingATensorThrowsDeviceError) {
  try {
    Tensor t = Tensor::empty({2, 3});
    ADD_FAILURE() << "a tensor was created without any device";
  } catch (const DeviceError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("no device", 0), 0u) << msg;
    EXPECT_NE(msg.find(plugin_dir("empty")), std::string::npos) << msg;  // where it looked
  }
  EXPECT_THROW(Tensor::from_vector<float>({1.0f}, {1}), DeviceError);
  EXPECT_THROW(Device::parse("cpu"), DeviceError);
}

TEST(AbiNoDevice, OarInfoSaysNoPluginIsLoaded) {
  EnvList env = {{"OAR_PLUGIN_PATH", plugin_dir("empty")}, {"OAR_PLUGIN_DEFAULT_DIR", "0"}};
  ProcessResult r = run_oar_info({}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No plugin is loaded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(plugin_dir("empty")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OAR_FALLBACK"), std::string::npos) << r.out;  // flags still listed

  r = run_oar_info({"--json"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"no_plugin_loaded\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"plugins\": []"), std::string::npos) << r.out;

  // No directory at all is reported too.
  r = run_oar_info({}, {{"OAR_PLUGIN_DEFAULT_DIR", "0"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OAR_PLUGIN_PATH is empty and OAR_PLUGIN_DEFAULT_DIR=0"), std::string::npos)
      << r.out;
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("empty"), /*default_dir=*/false);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
