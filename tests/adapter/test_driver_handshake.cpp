// The driver entry's version handshake, for every driver present, through the
// C ABI alone: struct_size and versions checked in both directions. A host of
// another major version is refused with a message naming both versions; a
// host table from an older minor (shorter, without set_error) still works,
// and a later error is then a bare status, never a crash.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_driver.h"

namespace {

std::string g_message;
void keep(oar_status_t, const char* message) { g_message = message != nullptr ? message : ""; }
void quiet(oar_log_level_t, const char*) {}

class DriverHandshake : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string path = std::string(OAR_TEST_ADAPTER_DIR) + "/liboar_adapter_" + GetParam() + ".so";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not built";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    entry_ = reinterpret_cast<oar_adapter_driver_entry_fn>(dlsym(lib, OAR_ADAPTER_DRIVER_ENTRY_SYMBOL));
    ASSERT_NE(entry_, nullptr);
  }
  oar_adapter_host_api host(uint32_t major) {
    return {sizeof(oar_adapter_host_api), major, OAR_ADAPTER_ABI_VERSION_MINOR, keep, quiet};
  }
  oar_adapter_driver_entry_fn entry_ = nullptr;
};

TEST_P(DriverHandshake, NullArgumentsAreRefused) {
  const oar_adapter_driver_api* api = nullptr;
  oar_adapter_host_api h = host(OAR_ADAPTER_ABI_VERSION_MAJOR);
  EXPECT_EQ(entry_(nullptr, &api), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(entry_(&h, nullptr), OAR_STATUS_INVALID_ARGUMENT);
}

TEST_P(DriverHandshake, AnotherMajorVersionIsRefusedNamingBoth) {
  const oar_adapter_driver_api* api = nullptr;
  oar_adapter_host_api h = host(OAR_ADAPTER_ABI_VERSION_MAJOR + 1);
  g_message.clear();
  EXPECT_EQ(entry_(&h, &api), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_EQ(api, nullptr);
  EXPECT_NE(g_message.find("built for adapter ABI 1.0"), std::string::npos) << g_message;
  EXPECT_NE(g_message.find("offers 2.0"), std::string::npos) << g_message;
}

TEST_P(DriverHandshake, TheTableCarriesItsSizeAndVersion) {
  const oar_adapter_driver_api* api = nullptr;
  oar_adapter_host_api h = host(OAR_ADAPTER_ABI_VERSION_MAJOR);
  ASSERT_EQ(entry_(&h, &api), OAR_STATUS_OK);
  ASSERT_NE(api, nullptr);
  EXPECT_GE(api->struct_size, offsetof(oar_adapter_driver_api, execute) + sizeof(api->execute));
  EXPECT_EQ(api->abi_major, uint32_t(OAR_ADAPTER_ABI_VERSION_MAJOR));
  EXPECT_STREQ(api->name, GetParam());
  EXPECT_NE(api->version, nullptr);
}

TEST_P(DriverHandshake, AnOlderShorterHostTableWorksWithoutMessages) {
  // A host built before set_error existed: the table ends after abi_minor.
  oar_adapter_host_api h = host(OAR_ADAPTER_ABI_VERSION_MAJOR);
  h.struct_size = offsetof(oar_adapter_host_api, set_error);
  const oar_adapter_driver_api* api = nullptr;
  ASSERT_EQ(entry_(&h, &api), OAR_STATUS_OK);
  // A broken model: the driver reports INVALID_ARGUMENT and reaches for no callback.
  oar_adapter_model empty{};
  empty.struct_size = sizeof(empty);
  oar_adapter_context_t ctx = nullptr;
  std::vector<oar_adapter_option> values;
  std::vector<const oar_adapter_option*> options;
  values.reserve(size_t(api->option_count));
  for (uint64_t i = 0; i < api->option_count; ++i) {
    values.push_back({sizeof(oar_adapter_option), api->options[i]->name, api->options[i]->default_value});
    options.push_back(&values.back());
  }
  ASSERT_EQ(api->context_create(options.data(), uint32_t(options.size()), &ctx), OAR_STATUS_OK);
  int32_t ok = 1;
  char reason[64];
  g_message = "untouched";
  oar_status_t status = api->query_operation(ctx, &empty, 0, &ok, reason, sizeof(reason));
  EXPECT_TRUE(status == OAR_STATUS_INVALID_ARGUMENT || status == OAR_STATUS_OUT_OF_RANGE) << status;
  EXPECT_EQ(g_message, "untouched");
  api->context_destroy(ctx);
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverHandshake, ::testing::Values("fake_npu", "openvino"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
