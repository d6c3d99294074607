// The adapter driver loader on broken drivers (tests/adapter/broken, put in
// OAR_ADAPTER_PATH by CTest): each is skipped with the reason, listed by
// adapter::drivers() and oar-info, and the good drivers still load.
#include <gtest/gtest.h>

#include "oar/adapter/offload.h"
#include "oar/error.h"
#include "oar/info_report.h"

namespace oar {
namespace {

std::string reason_for(const std::string& name) {
  for (const auto& d : adapter::drivers())
    if (d.name == name && !d.loaded) return d.reason;
  return "(not skipped)";
}

TEST(AdapterLoader, BrokenDriversAreSkippedWithTheirReason) {
  EXPECT_NE(reason_for("no_entry").find("no entry symbol oar_adapter_driver_entry"), std::string::npos)
      << reason_for("no_entry");
  EXPECT_NE(reason_for("entry_fails").find("no NPU card found on the PCI bus"), std::string::npos)
      << reason_for("entry_fails");
  EXPECT_NE(reason_for("abi_major").find("built for adapter ABI 99.0"), std::string::npos) << reason_for("abi_major");
  EXPECT_NE(reason_for("missing_compile").find("lacks required entries: compile"), std::string::npos)
      << reason_for("missing_compile");
  EXPECT_NE(reason_for("wrong_name").find("calls itself 'someone_else'"), std::string::npos) << reason_for("wrong_name");
  EXPECT_NE(reason_for("bad_option").find("OAR_SOMEONE_ELSES_FLAG"), std::string::npos) << reason_for("bad_option");
  EXPECT_NE(reason_for("not_a_library").find("cannot open shared library"), std::string::npos)
      << reason_for("not_a_library");
  bool old_minor = false;
  for (const auto& d : adapter::drivers()) old_minor |= d.name == "old_minor" && d.loaded;
  EXPECT_TRUE(old_minor) << "a driver with a shorter (older minor) table loads: " << reason_for("old_minor");
  bool fake_npu = false;
  for (const auto& d : adapter::drivers()) fake_npu |= d.name == "fake_npu" && d.loaded;
  EXPECT_TRUE(fake_npu) << "the good driver beside the broken ones still loads";
}

TEST(AdapterLoader, OarInfoListsLoadedAndSkippedDrivers) {
  std::string text = info_report_text();
  EXPECT_NE(text.find("Adapter drivers ("), std::string::npos);
  EXPECT_NE(text.find("fake_npu"), std::string::npos);
  EXPECT_NE(text.find("no NPU card found on the PCI bus"), std::string::npos);
  EXPECT_NE(text.find("OAR_FAKE_NPU_PRECISION"), std::string::npos) << "driver options are listed as flags";
  std::string json = info_report_json();
  EXPECT_NE(json.find("\"adapter_drivers\": ["), std::string::npos);
}

TEST(AdapterLoader, SelectingASkippedDriverSaysWhyItWasSkipped) {
  adapter::OffloadOptions o;
  o.driver = "entry_fails";
  auto g = std::make_shared<graph::Graph>();
  graph::Value* x = g->add_input("x", {{2}, DType::f32});
  g->set_outputs({g->add_node("relu", {x}, {})->outputs[0]});
  try {
    adapter::offload(g, Device::cpu(), o);
    ADD_FAILURE() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("was skipped: entry failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace oar
