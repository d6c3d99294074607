// Forward compatibility within a major version: a plugin built for ABI
// 1.(N+1), whose table is larger than this core's oar_plugin_api and carries
// a field the core does not know, must load, and an op on its device must run.
// Scenario: only test_plugins/newer_minor is searched (no CPU plugin), set in
// main() before the runtime starts.
#include <cmath>

#include "abi_test_util.h"
#include "oar/core.h"
#include "oar/plugin_loader.h"
#include "oar/plugin_table.h"

using namespace oar;
using namespace oar::abi_testing;

namespace {

const LoadedPlugin* find_plugin(const std::string& device_type) {
  for (const auto& p : Runtime::get().plugins())
    if (p->device_type == device_type) return p.get();
  return nullptr;
}

}  // namespace

TEST(AbiNewerMinor, LoadsWithLargerTable) {
  const Runtime& rt = Runtime::get();
  for (const auto& s : rt.skipped()) ADD_FAILURE() << "skipped " << s.path << ": " << s.reason;
  ASSERT_EQ(rt.plugins().size(), 1u);
  const LoadedPlugin* p = find_plugin("testdev");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "newer_minor");
  EXPECT_EQ(p->abi_major, uint32_t(OAR_ABI_VERSION_MAJOR));
  EXPECT_EQ(p->abi_minor, uint32_t(OAR_ABI_VERSION_MINOR + 1));
  // The plugin's own table: oar_plugin_api plus one appended function pointer.
  EXPECT_EQ(plugin_table(*p).plugin_struct_size, sizeof(oar_plugin_api) + sizeof(void*));
  EXPECT_EQ(p->device_count, 1);
  ASSERT_EQ(p->capabilities.size(), 1u);
  EXPECT_EQ(p->capabilities[0].dtype_mask, uint64_t(1) << OAR_DTYPE_F32);
  EXPECT_EQ(p->capabilities[0].alloc_alignment, 64u);
  EXPECT_STREQ(p->properties[0].name, "testdev fake device 0");
}

TEST(AbiNewerMinor, KernelRunsOnFakeDevice) {
  Device dev = Device::parse("testdev");
  EXPECT_EQ(dev.str(), "testdev:0");
  std::vector<float> values = {1.5f, -2.0f, 0.0f, 3.25f, -0.5f, 7.0f};
  Tensor x = Tensor::from_vector<float>(values, {2, 3}, dev);
  EXPECT_EQ(x.device(), dev);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x.storage_data()) % 64, 0u);  // alloc_alignment
  Tensor y = call1("neg", {x});
  EXPECT_EQ(y.device(), dev);
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  std::vector<float> got = y.to_vector<float>();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(got[i], -values[i]) << "at " << i;
}

TEST(AbiNewerMinor, UnregisteredOpAndDTypeAreReported) {
  Device dev = Device::parse("testdev");
  Tensor x = Tensor::from_vector<float>({1.0f, -1.0f}, {2}, dev);
  // No CPU plugin is loaded, so there is nothing to fall back to.
  try {
    call1("abs", {x});
    ADD_FAILURE() << "abs has no testdev kernel and must not run";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("testdev"), std::string::npos) << e.what();
  }
  Tensor x64 = Tensor::from_vector<double>({1.0, -1.0}, {2}, dev);
  try {
    call1("neg", {x64});
    ADD_FAILURE() << "neg is registered for f32 only";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("f32"), std::string::npos) << e.what();
  }
}

TEST(AbiNewerMinor, OarInfoShowsThePlugin) {
  ProcessResult r = run_oar_info(
      {"--json"}, {{"OAR_PLUGIN_PATH", plugin_dir("newer_minor")}, {"OAR_PLUGIN_DEFAULT_DIR", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"device_type\": \"testdev\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"abi_minor\": " + std::to_string(OAR_ABI_VERSION_MINOR + 1)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"op\": \"neg\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("testdev-loop"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"skipped\": []"), std::string::npos) << r.out;

  r = run_oar_info({}, {{"OAR_PLUGIN_PATH", plugin_dir("newer_minor")}, {"OAR_PLUGIN_DEFAULT_DIR", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("newer minor than this core"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Kernel coverage for device type 'testdev' (1 of"), std::string::npos)
      << r.out;
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("newer_minor"), /*default_dir=*/false);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
