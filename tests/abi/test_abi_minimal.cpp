// Streams are optional (ABI 1.2): the core runs everything on the default
// stream and calls no stream, event, memory_set or memory_copy_d2d entry, so a
// plugin with only the required entries (plugins/minimal.c: testdev with all
// twelve of those NULL) loads and runs an op end to end. It declares no DLPack
// device type either, so it shows the documented kDLExtDev default.
// Scenario: test_plugins/minimal plus the default directory (the CPU), set in
// main() before the runtime starts.
#include <dlpack/dlpack.h>

#include "abi_test_util.h"
#include "oar/core.h"
#include "oar/dlpack.h"
#include "oar/plugin_loader.h"
#include "oar/plugin_table.h"

using namespace oar;
using namespace oar::abi_testing;

namespace {

const LoadedPlugin* minimal() {
  for (const auto& p : Runtime::get().plugins())
    if (p->name == "minimal") return p.get();
  return nullptr;
}

}  // namespace

TEST(AbiMinimal, LoadsWithOnlyTheRequiredEntries) {
  for (const auto& s : Runtime::get().skipped()) ADD_FAILURE() << "skipped " << s.path << ": " << s.reason;
  const LoadedPlugin* p = minimal();
  ASSERT_NE(p, nullptr);
  const oar_plugin_api* api = &plugin_table(*p).entries;
  EXPECT_EQ(api->stream_create, nullptr);
  EXPECT_EQ(api->stream_synchronize, nullptr);
  EXPECT_EQ(api->stream_wait_event, nullptr);
  EXPECT_EQ(api->event_create, nullptr);
  EXPECT_EQ(api->event_record, nullptr);
  EXPECT_EQ(api->memory_set, nullptr);
  EXPECT_EQ(api->memory_copy_d2d, nullptr);
  EXPECT_EQ(api->shutdown, nullptr);
  EXPECT_EQ(p->device_count, 1);
}

// What the core calls, plus device_synchronize: the one wait every device
// keeps (benchmarks and a future profiler use it; it costs a plugin one line).
TEST(AbiMinimal, RequiredEntriesAreTheCoreMinimum) {
  std::vector<std::string> required;
  for (const auto& e : abi_entries())
    if (e.required) required.push_back(e.name);
  EXPECT_EQ(required, (std::vector<std::string>{"device_count", "device_get_properties",
                                                "device_get_capabilities", "device_synchronize",
                                                "memory_allocate", "memory_free", "memory_copy_h2d",
                                                "memory_copy_d2h", "register_kernels"}));
}

TEST(AbiMinimal, OpRunsEndToEnd) {
  Device dev = Device::parse("minimaldev");
  std::vector<float> values = {1.5f, -2.0f, 0.0f, 3.25f, -0.5f, 7.0f};
  Tensor x = Tensor::from_vector<float>(values, {2, 3}, dev);  // h2d
  Tensor y = call1("neg", {x});                                // kernel, core-allocated output
  EXPECT_EQ(y.device(), dev);
  std::vector<float> got = y.to_vector<float>();  // d2h
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(got[i], -values[i]) << "at " << i;
  // Moves to and from another plugin's device, and a second op on the result.
  Tensor on_cpu = y.to(Device::cpu());
  EXPECT_EQ(on_cpu.to_vector<float>(), got);
  Tensor back = on_cpu.to(dev);
  EXPECT_EQ(back.device(), dev);
  EXPECT_EQ(call1("neg", {back}).to_vector<float>(), values);
}

TEST(AbiMinimal, UndeclaredDlpackDeviceIsExtDev) {
  Device dev = Device::parse("minimaldev");
  EXPECT_EQ(minimal()->properties[0].dlpack_device_type, 0);
  EXPECT_EQ(dlpack_device_type(dev), kDLExtDev);
  EXPECT_EQ(dlpack_device_type(Device::cpu()), kDLCPU);
  Tensor x = Tensor::from_vector<float>({4.0f, 5.0f}, {2}, dev);
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLExtDev);
  Tensor back = from_dlpack(m);  // kDLExtDev:0 maps back to the one device declaring it
  EXPECT_EQ(back.device(), dev);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{4.0f, 5.0f}));
}

// Every core call goes through call_plugin (oar/plugin_table.h): a failed
// status becomes the typed error with the plugin's message, and an absent
// optional entry a NotImplementedError naming it, never a NULL call.
TEST(AbiMinimal, CallsGoThroughOneTypedWrapper) {
  const LoadedPlugin& p = *minimal();
  oar_device_properties props{};
  props.struct_size = sizeof(props);
  try {
    call_plugin(p, &oar_plugin_api::device_get_properties, "device_get_properties", int32_t(5), &props);
    ADD_FAILURE() << "device 5 does not exist";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "plugin 'minimal': device_get_properties failed (INVALID_ARGUMENT): "
                           "testdev has one device (index 0), got 5");
  }
  EXPECT_FALSE(has_entry(p, &oar_plugin_api::memory_set));
  try {
    call_plugin(p, &oar_plugin_api::memory_set, "memory_set", int32_t(0), oar_stream_t(nullptr),
                static_cast<void*>(nullptr), uint64_t(0), uint8_t(0), uint64_t(0));
    ADD_FAILURE() << "memory_set is NULL in this plugin";
  } catch (const NotImplementedError& e) {
    EXPECT_STREQ(e.what(), "plugin 'minimal' has no memory_set entry");
  }
  Runtime::get().synchronize(Device::parse("minimaldev"));  // the one required wait
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("minimal"), /*default_dir=*/true);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
