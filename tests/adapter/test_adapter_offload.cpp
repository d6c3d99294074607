// Subgraph offload through liboar_adapter with the fake_npu driver (a host
// simulation with an NPU's fixed op set): which nodes are offloaded, on models
// with unsupported ops in the middle (no cycles), pins, the threshold,
// fallback when a compile fails versus OAR_FALLBACK=error, the compiled-subgraph
// cache, and results against the plugin-only run on every present device.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <fstream>

#include "oar/adapter/offload.h"
#include "oar/error.h"
#include "oar/flags.h"
#include "oar/graph/executor.h"
#include "precision_tolerances.h"
#include "test_util.h"

namespace oar {
namespace {

using adapter::OffloadOptions;
using adapter::Placement;
using adapter::PlacementTarget;
using graph::Graph;
using graph::Node;
using graph::Value;
namespace fs = std::filesystem;

Tensor random_tensor(const Shape& shape, uint32_t seed, double lo = -1, double hi = 1) {
  return testing::make_tensor(testing::random_values(numel_of(shape), lo, hi, seed), shape, DType::f32, Device::cpu());
}

OffloadOptions fake_npu(int64_t min_nodes = 1, double min_macs = 0) {
  OffloadOptions o;
  o.driver = "fake_npu";
  o.min_nodes = min_nodes;
  o.min_macs = min_macs;
  return o;
}

std::vector<std::string> targets(const Placement& p) {
  std::vector<std::string> out;
  for (const auto& n : p.nodes) {
    std::string where = n.target == PlacementTarget::kDriver ? str("@", n.subgraph) : std::string("@plugin");
    out.push_back(str(n.name, where));
  }
  return out;
}

// conv -> relu -> max_pool -> reshape -> linear -> relu: reshape is not in fake_npu's op set.
std::shared_ptr<Graph> cnn_with_reshape(int64_t batch = 2) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{batch, 3, 8, 8}, DType::f32});
  Value* w = g->add_constant("w", random_tensor({4, 3, 3, 3}, 1));
  Value* b = g->add_constant("b", random_tensor({4}, 2));
  Value* fw = g->add_constant("fw", random_tensor({5, 64}, 3, -0.2, 0.2));
  Value* fb = g->add_constant("fb", random_tensor({5}, 4));
  Node* conv = g->add_node("conv2d", {x, w, b}, {{"padding", std::vector<int64_t>{1, 1}}});
  Node* relu = g->add_node("relu", {conv->outputs[0]}, {});
  Node* pool = g->add_node("max_pool2d", {relu->outputs[0]}, {{"kernel_size", std::vector<int64_t>{2, 2}}});
  Node* flat = g->add_node("reshape", {pool->outputs[0]}, {{"shape", std::vector<int64_t>{batch, 64}}});
  Node* fc = g->add_node("linear", {flat->outputs[0], fw, fb}, {});
  Node* out = g->add_node("relu", {fc->outputs[0]}, {});
  g->set_outputs({out->outputs[0]});
  g->verify();
  return g;
}

std::vector<double> plugin_only(const std::shared_ptr<Graph>& g, const std::vector<Tensor>& inputs, Device device) {
  graph::Executor ex(g, device);
  return testing::host_values(ex.run(inputs)[0]);
}

void expect_within_precision(const std::vector<double>& got, const std::vector<double>& want, const char* precision,
                             const std::string& what) {
  const testing::PrecisionTolerance& tol = testing::precision_tolerance(precision);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol.atol + tol.rtol * std::max(std::abs(want[i]), scale))
        << what << " at " << i << " (" << precision << ")";
}

TEST(AdapterOffload, UnsupportedNodeInTheMiddleSplitsTheGraph) {
  auto g = cnn_with_reshape();
  auto run = adapter::offload(g, Device::cpu(), fake_npu());
  const Placement& p = run->placement();
  EXPECT_EQ(targets(p), (std::vector<std::string>{"conv2d_0@0", "relu_1@0", "max_pool2d_2@0", "reshape_3@plugin",
                                                  "linear_4@1", "relu_5@1"}));
  EXPECT_NE(p.nodes[3].reason.find("reshape"), std::string::npos) << p.nodes[3].reason;
  EXPECT_NE(p.nodes[3].reason.find("fake_npu"), std::string::npos) << p.nodes[3].reason;
  ASSERT_EQ(p.subgraphs.size(), 2u);
  EXPECT_EQ(p.subgraphs[0].inputs, 1);
  EXPECT_EQ(p.subgraphs[0].outputs, 1);
  EXPECT_EQ(p.offloaded_nodes(), 5u);
  EXPECT_NE(p.explain().find("5 of 6 nodes offloaded in 2 subgraphs"), std::string::npos) << p.explain();
  Tensor x = random_tensor({2, 3, 8, 8}, 10);
  for (Device dev : testing::devices()) {
    auto on_dev = adapter::offload(g, dev, fake_npu());
    std::vector<Tensor> y = on_dev->run({x.to(dev)});
    EXPECT_EQ(y[0].device(), dev);
    expect_within_precision(testing::host_values(y[0]), plugin_only(g, {x}, dev), "fp32", "offloaded on " + dev.str());
  }
}

// x -> conv(A) -> relu(B); B -> exp(C, not on the NPU); B -> relu(D); add(C, D) = E.
// E reads D (in A's subgraph) and C (which depends on that subgraph): E joining
// it would make the contracted subgraph feed itself.
TEST(AdapterOffload, NoSubgraphFeedsItselfThroughThePluginDevice) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{1, 2, 5, 5}, DType::f32});
  Value* w = g->add_constant("w", random_tensor({2, 2, 1, 1}, 1));
  Node* a = g->add_node("conv2d", {x, w, nullptr}, {});
  Node* b = g->add_node("relu", {a->outputs[0]}, {});
  Node* c = g->add_node("exp", {b->outputs[0]}, {});
  Node* d = g->add_node("relu", {b->outputs[0]}, {});
  Node* e = g->add_node("add", {c->outputs[0], d->outputs[0]}, {});
  Node* f = g->add_node("relu", {e->outputs[0]}, {});
  g->set_outputs({f->outputs[0]});
  auto run = adapter::offload(g, Device::cpu(), fake_npu());
  EXPECT_EQ(targets(run->placement()), (std::vector<std::string>{"conv2d_0@0", "relu_1@0", "exp_2@plugin",
                                                                 "relu_3@0", "add_4@1", "relu_5@1"}));
  Tensor xv = random_tensor({1, 2, 5, 5}, 2);
  expect_within_precision(testing::host_values(run->run({xv})[0]), plugin_only(g, {xv}, Device::cpu()), "fp32",
                          "diamond");
}

TEST(AdapterOffload, PinsKeepNodesOnThePluginDeviceAndSayWhy) {
  auto g = cnn_with_reshape();
  OffloadOptions o = fake_npu();
  o.deny = {"op:max_pool2d", "node:relu_5"};
  auto run = adapter::offload(g, Device::cpu(), o);
  const Placement& p = run->placement();
  EXPECT_EQ(targets(p), (std::vector<std::string>{"conv2d_0@0", "relu_1@0", "max_pool2d_2@plugin",
                                                  "reshape_3@plugin", "linear_4@1", "relu_5@plugin"}));
  EXPECT_NE(p.nodes[2].reason.find("pinned to the plugin device by 'op:max_pool2d'"), std::string::npos);
  EXPECT_NE(p.nodes[5].reason.find("'node:relu_5'"), std::string::npos);
  Tensor x = random_tensor({2, 3, 8, 8}, 3);
  expect_within_precision(testing::host_values(run->run({x})[0]), plugin_only(g, {x}, Device::cpu()), "fp32", "pinned");

  // The same pins from a file (OAR_ADAPTER_DENY_FILE), comments and blank lines allowed.
  fs::path file = fs::temp_directory_path() / "oar_adapter_pins.txt";
  std::ofstream(file) << "# keep pooling on the CPU\nmax_pool2d\n\nnode:relu_5  # the last activation\n";
  Flags::instance().set("OAR_ADAPTER_DENY_FILE", file.string());
  auto from_file = adapter::offload(g, Device::cpu(), fake_npu());
  Flags::instance().set("OAR_ADAPTER_DENY_FILE", "");
  EXPECT_EQ(targets(from_file->placement()), targets(p));
  Flags::instance().set("OAR_ADAPTER_DENY_FILE", (fs::temp_directory_path() / "no_such_pins.txt").string());
  EXPECT_THROW(adapter::offload(g, Device::cpu(), fake_npu()), IOError);
  Flags::instance().set("OAR_ADAPTER_DENY_FILE", "");
  o.deny = {"node:"};
  EXPECT_THROW(adapter::offload(g, Device::cpu(), o), ValueError);
}

TEST(AdapterOffload, SmallSubgraphsStayOnThePluginDevice) {
  auto g = cnn_with_reshape();
  // Three nodes at least, unless the subgraph computes 1e5 MACs: the conv
  // subgraph (2*4*8*8*27 = 13824 MACs + 2 cheap nodes, 3 nodes) stays; the
  // linear one (2 nodes) goes back.
  auto run = adapter::offload(g, Device::cpu(), fake_npu(3, 1e5));
  const Placement& p = run->placement();
  EXPECT_EQ(targets(p), (std::vector<std::string>{"conv2d_0@0", "relu_1@0", "max_pool2d_2@0", "reshape_3@plugin",
                                                  "linear_4@plugin", "relu_5@plugin"}));
  EXPECT_NE(p.nodes[4].reason.find("under the offload threshold"), std::string::npos) << p.nodes[4].reason;
  // A compute-heavy single node passes on its MACs alone.
  auto heavy = adapter::offload(g, Device::cpu(), fake_npu(10, 500));  // linear: 2*5*64 + 10 = 650 MACs
  EXPECT_EQ(heavy->placement().subgraphs.size(), 2u);
}

TEST(AdapterOffload, FailedCompileFallsBackWithAWarningOrRaisesUnderFallbackError) {
  auto g = cnn_with_reshape();
  OffloadOptions o = fake_npu();
  o.options["OAR_FAKE_NPU_FAIL_COMPILE"] = "linear";
  const std::string fallback = Flags::instance().get("OAR_FALLBACK");
  Flags::instance().set("OAR_FALLBACK", "warn");
  int64_t failures = adapter::stats().compile_failures;
  auto run = adapter::offload(g, Device::cpu(), o);
  EXPECT_EQ(adapter::stats().compile_failures, failures + 1);
  const Placement& p = run->placement();
  EXPECT_EQ(targets(p), (std::vector<std::string>{"conv2d_0@0", "relu_1@0", "max_pool2d_2@0", "reshape_3@plugin",
                                                  "linear_4@plugin", "relu_5@plugin"}));
  EXPECT_NE(p.nodes[4].reason.find("compile failed"), std::string::npos) << p.nodes[4].reason;
  Tensor x = random_tensor({2, 3, 8, 8}, 4);
  expect_within_precision(testing::host_values(run->run({x})[0]), plugin_only(g, {x}, Device::cpu()), "fp32",
                          "after fallback");

  Flags::instance().set("OAR_FALLBACK", "error");
  try {
    adapter::offload(g, Device::cpu(), o);
    ADD_FAILURE() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("fake_npu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("OAR_FALLBACK=error"), std::string::npos) << e.what();
  }
  Flags::instance().set("OAR_FALLBACK", fallback);
}

TEST(AdapterOffload, BadDriverNamesAndOptionsAreTypedErrors) {
  auto g = cnn_with_reshape();
  OffloadOptions o;
  o.driver = "no_such_driver";
  try {
    adapter::offload(g, Device::cpu(), o);
    ADD_FAILURE() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("no adapter driver 'no_such_driver'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fake_npu"), std::string::npos) << "lists the loaded drivers: " << e.what();
  }
  o = fake_npu();
  o.options["OAR_FAKE_NPU_PRECISSION"] = "fp16";
  EXPECT_THROW(adapter::offload(g, Device::cpu(), o), ValueError);
  o = fake_npu();
  o.options["OAR_FAKE_NPU_PRECISION"] = "fp8";
  EXPECT_THROW(adapter::offload(g, Device::cpu(), o), ValueError);
  // Wrong inputs at run time: typed, naming the input.
  auto run = adapter::offload(g, Device::cpu(), fake_npu());
  EXPECT_THROW(run->run({random_tensor({3, 3, 8, 8}, 1)}), ShapeError);
  EXPECT_THROW(run->run({}), ValueError);
}

TEST(AdapterOffload, ReducedPrecisionStaysWithinItsTolerance) {
  auto g = cnn_with_reshape();
  Tensor x = random_tensor({2, 3, 8, 8}, 5);
  std::vector<double> want = plugin_only(g, {x}, Device::cpu());
  for (const char* precision : {"fp16", "int8"}) {
    OffloadOptions o = fake_npu();
    o.options["OAR_FAKE_NPU_PRECISION"] = precision;
    auto run = adapter::offload(g, Device::cpu(), o);
    EXPECT_NE(run->placement().driver.find(std::string("OAR_FAKE_NPU_PRECISION=") + precision), std::string::npos);
    expect_within_precision(testing::host_values(run->run({x})[0]), want, precision, "fake_npu");
  }
}

class AdapterCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("oar_adapter_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  OffloadOptions cached() {
    OffloadOptions o = fake_npu();
    o.cache_dir = dir_.string();
    return o;
  }
  std::vector<fs::path> entries() {
    std::vector<fs::path> out;
    for (auto& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file()) out.push_back(e.path());
    return out;
  }
  fs::path dir_;
};

TEST_F(AdapterCache, SecondLoadCompilesNothing) {
  auto g = cnn_with_reshape();
  Tensor x = random_tensor({2, 3, 8, 8}, 6);
  adapter::AdapterStats s0 = adapter::stats();
  auto first = adapter::offload(g, Device::cpu(), cached());
  adapter::AdapterStats s1 = adapter::stats();
  EXPECT_EQ(s1.compiles - s0.compiles, 2);
  EXPECT_EQ(s1.cache_hits - s0.cache_hits, 0);
  EXPECT_EQ(entries().size(), 2u);
  auto second = adapter::offload(cnn_with_reshape(), Device::cpu(), cached());
  adapter::AdapterStats s2 = adapter::stats();
  EXPECT_EQ(s2.compiles - s1.compiles, 0);
  EXPECT_EQ(s2.cache_hits - s1.cache_hits, 2);
  EXPECT_TRUE(second->placement().subgraphs[0].from_cache);
  EXPECT_NE(second->placement().explain().find("loaded from the cache"), std::string::npos);
  EXPECT_EQ(testing::host_values(second->run({x})[0]), testing::host_values(first->run({x})[0]));
  for (auto& e : fs::recursive_directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "a temporary file was left";
}

TEST_F(AdapterCache, OtherWeightsOptionsOrShapesMissTheCache) {
  auto g = cnn_with_reshape();
  adapter::offload(g, Device::cpu(), cached());
  adapter::AdapterStats s0 = adapter::stats();
  // Another weight value in the conv: its subgraph misses, the linear one hits.
  auto g2 = cnn_with_reshape();
  for (Value* v : g2->tensors())
    if (v->name == "w") v->tensor = random_tensor({4, 3, 3, 3}, 99);
  adapter::offload(g2, Device::cpu(), cached());
  adapter::AdapterStats s1 = adapter::stats();
  EXPECT_EQ(s1.compiles - s0.compiles, 1);
  EXPECT_EQ(s1.cache_hits - s0.cache_hits, 1);
  // Another option value, another batch size: everything compiles again.
  OffloadOptions o = cached();
  o.options["OAR_FAKE_NPU_PRECISION"] = "fp16";
  adapter::offload(g, Device::cpu(), o);
  adapter::offload(cnn_with_reshape(4), Device::cpu(), cached());
  adapter::AdapterStats s2 = adapter::stats();
  EXPECT_EQ(s2.compiles - s1.compiles, 4);
  EXPECT_EQ(s2.cache_hits - s1.cache_hits, 0);
}

TEST_F(AdapterCache, CorruptOrTruncatedEntriesAreRebuiltNeverTrusted) {
  auto g = cnn_with_reshape();
  Tensor x = random_tensor({2, 3, 8, 8}, 7);
  std::vector<double> want = testing::host_values(adapter::offload(g, Device::cpu(), cached())->run({x})[0]);
  std::vector<fs::path> files = entries();
  ASSERT_EQ(files.size(), 2u);
  // One entry with a byte flipped in its payload, the other cut in half.
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-5, std::ios::end);
    c = char(c ^ 0x5a);
    f.write(&c, 1);
  }
  fs::resize_file(files[1], fs::file_size(files[1]) / 2);
  adapter::AdapterStats s0 = adapter::stats();
  auto rebuilt = adapter::offload(g, Device::cpu(), cached());
  adapter::AdapterStats s1 = adapter::stats();
  EXPECT_EQ(s1.cache_rebuilds - s0.cache_rebuilds, 2);
  EXPECT_EQ(s1.compiles - s0.compiles, 2);
  EXPECT_EQ(testing::host_values(rebuilt->run({x})[0]), want);
  // Rebuilt entries are whole again.
  adapter::AdapterStats s2 = adapter::stats();
  adapter::offload(g, Device::cpu(), cached());
  EXPECT_EQ(adapter::stats().cache_hits - s2.cache_hits, 2);
}

}  // namespace
}  // namespace oar

namespace oar {
namespace {

// Runs of one offloaded graph from several threads at once give what serial runs give
// (a driver program runs on one thread at a time; the core takes turns on it).
TEST(AdapterOffload, ConcurrentRunsMatchSerialRuns) {
  for (const auto& d : adapter::drivers()) {
    if (!d.loaded || (d.name != "fake_npu" && d.name != "openvino")) continue;
    OffloadOptions o = fake_npu();
    o.driver = d.name;
    auto run = adapter::offload(cnn_with_reshape(), Device::cpu(), o);
    std::vector<Tensor> xs;
    std::vector<std::vector<double>> want;
    for (uint32_t i = 0; i < 4; ++i) {
      xs.push_back(random_tensor({2, 3, 8, 8}, 100 + i));
      want.push_back(testing::host_values(run->run({xs.back()})[0]));
    }
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (size_t t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int k = 0; k < 25; ++k) {
          size_t i = (t + size_t(k)) % xs.size();
          if (testing::host_values(run->run({xs[i]})[0]) != want[i]) ++mismatches;
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0) << d.name;
  }
}

}  // namespace
}  // namespace oar
