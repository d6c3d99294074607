// Peer copies (ABI 1.1): moving a tensor between two devices of one plugin
// goes through the plugin's memory_copy_peer when the devices report
// OAR_CAPABILITY_PEER_COPY and the table has the entry; a plugin built for
// ABI 1.0 (whose struct_size ends before the entry) still loads, and the same
// move is staged through host memory. Scenario: only test_plugins/peer_copy
// is searched (liboar_plugin_peerdev.so and liboar_plugin_peerdev_v10.so,
// from plugins/peer_copy.c); set in main() before the runtime starts.
#include <dlfcn.h>

#include <cstddef>

#include "abi_test_util.h"
#include "oar/core.h"
#include "oar/flags.h"
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

// How often the plugin's own memory_copy_peer ran, read from the library the
// runtime already mapped (RTLD_NOLOAD: never a second copy with its own counter).
uint64_t peer_copy_calls(const std::string& device_type) {
  const LoadedPlugin* p = find_plugin(device_type);
  if (p == nullptr) {
    ADD_FAILURE() << device_type << " is not loaded";
    return 0;
  }
  void* lib = dlopen(p->path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) {
    ADD_FAILURE() << "dlopen(" << p->path << ", RTLD_NOLOAD): " << dlerror();
    return 0;
  }
  auto fn = reinterpret_cast<uint64_t (*)()>(dlsym(lib, "peerdev_peer_copy_calls"));
  uint64_t calls = 0;
  if (fn == nullptr) ADD_FAILURE() << "peerdev_peer_copy_calls not exported by " << p->path;
  else calls = fn();
  dlclose(lib);
  return calls;
}

}  // namespace

TEST(AbiPeerCopy, BothPluginsLoadAndOnlyTheNewOneHasTheEntry) {
  const Runtime& rt = Runtime::get();
  for (const auto& s : rt.skipped()) ADD_FAILURE() << "skipped " << s.path << ": " << s.reason;
  ASSERT_EQ(rt.plugins().size(), 2u);

  const LoadedPlugin* now = find_plugin("peerdev");
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(now->abi_minor, uint32_t(OAR_ABI_VERSION_MINOR));
  EXPECT_EQ(plugin_table(*now).plugin_struct_size, sizeof(oar_plugin_api));
  EXPECT_TRUE(has_entry(*now, &oar_plugin_api::memory_copy_peer));

  const LoadedPlugin* old = find_plugin("peerdev_v10");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->abi_minor, 0u);
  EXPECT_EQ(plugin_table(*old).plugin_struct_size, offsetof(oar_plugin_api, memory_copy_peer));
  // The plugin's static table does hold a pointer there, but past its struct_size.
  EXPECT_FALSE(has_entry(*old, &oar_plugin_api::memory_copy_peer));
  // Likewise its flags (ABI 1.2): a table without the field declares none.
  EXPECT_TRUE(old->declared_flags.empty());
  EXPECT_TRUE(old->rejected_flags.empty());
  EXPECT_FALSE(Flags::instance().is_defined("OAR_PEERDEV_V10_HIDDEN"));

  for (const LoadedPlugin* p : {now, old}) {
    EXPECT_EQ(p->device_count, 2) << p->name;
    ASSERT_EQ(p->capabilities.size(), 2u) << p->name;
    for (const auto& caps : p->capabilities) {
      EXPECT_NE(caps.flags & OAR_CAPABILITY_PEER_COPY, 0u) << p->name;
      EXPECT_EQ(caps.flags & OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY, 0u) << p->name;
    }
  }
}

TEST(AbiPeerCopy, MoveBetweenDevicesUsesThePeerEntry) {
  Device d0 = Device::parse("peerdev:0"), d1 = Device::parse("peerdev:1");
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {8}, d0);
  uint64_t before = peer_copy_calls("peerdev");

  Tensor y = x.to(d1);
  EXPECT_EQ(peer_copy_calls("peerdev"), before + 1);
  EXPECT_EQ(y.device(), d1);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));

  // A contiguous view with an element offset: the source offset reaches the plugin in bytes.
  Tensor tail = x.slice(0, 3, 8).to(d1);
  EXPECT_EQ(peer_copy_calls("peerdev"), before + 2);
  EXPECT_EQ(tail.device(), d1);
  EXPECT_EQ(tail.to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 8}));

  // And back: device 1 -> device 0.
  Tensor back = tail.to(d0);
  EXPECT_EQ(peer_copy_calls("peerdev"), before + 3);
  EXPECT_EQ(back.device(), d0);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 8}));

  // Nothing to copy, nothing called.
  Tensor empty = Tensor::from_vector<float>(std::vector<float>{}, {0}, d0).to(d1);
  EXPECT_EQ(empty.device(), d1);
  EXPECT_EQ(peer_copy_calls("peerdev"), before + 3);
}

TEST(AbiPeerCopy, PluginBuiltForAbi10IsStagedThroughTheHost) {
  Device d0 = Device::parse("peerdev_v10:0"), d1 = Device::parse("peerdev_v10:1");
  Tensor x = Tensor::from_vector<float>({0.5f, -1.5f, 2.25f, 8.0f}, {2, 2}, d0);
  Tensor y = x.to(d1);
  EXPECT_EQ(y.device(), d1);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0.5f, -1.5f, 2.25f, 8.0f}));
  EXPECT_EQ(y.to(d0).to_vector<float>(), (std::vector<float>{0.5f, -1.5f, 2.25f, 8.0f}));
  EXPECT_EQ(peer_copy_calls("peerdev_v10"), 0u);
}

// Between two plugins there is no peer entry to use, even when both report PEER_COPY.
TEST(AbiPeerCopy, MoveAcrossPluginsIsStaged) {
  uint64_t before = peer_copy_calls("peerdev");
  Tensor x = Tensor::from_vector<float>({3, 1, 4}, {3}, Device::parse("peerdev:1"));
  Tensor y = x.to(Device::parse("peerdev_v10:0"));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 1, 4}));
  EXPECT_EQ(y.to(Device::parse("peerdev:0")).to_vector<float>(), (std::vector<float>{3, 1, 4}));
  EXPECT_EQ(peer_copy_calls("peerdev"), before);
  EXPECT_EQ(peer_copy_calls("peerdev_v10"), 0u);
}

TEST(AbiPeerCopy, OarInfoShowsBothPlugins) {
  EnvList env = {{"OAR_PLUGIN_PATH", plugin_dir("peer_copy")}, {"OAR_PLUGIN_DEFAULT_DIR", "0"}};
  ProcessResult r = run_oar_info({"--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"device_type\": \"peerdev\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"device_type\": \"peerdev_v10\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"abi_minor\": 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"abi_minor\": " + std::to_string(OAR_ABI_VERSION_MINOR)), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"skipped\": []"), std::string::npos) << r.out;
  r = run_oar_info({}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("peer_copy"), std::string::npos) << r.out;
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("peer_copy"), /*default_dir=*/false);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
