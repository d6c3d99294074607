// ONNX models from Debian's libonnx-testdata (the PyTorch-converted layer
// models and PyTorch operator models: Debian ships the "real" model zoo only as
// download URLs) imported, offloaded to every adapter driver present, and
// compared with the expected outputs the test data carries and with the
// plugin-only run, within the driver's precision (precision_tolerances.txt).
// The digits CNN (the main job's network) runs the same way.
#include <gtest/gtest.h>

#include <filesystem>

#include "oar/adapter/offload.h"
#include "oar/inference.h"
#include "oar/jit.h"
#include "oar/nn.h"
#include "oar/onnx/node_test.h"
#include "oar/onnx/onnx.h"
#include "precision_tolerances.h"
#include "test_util.h"

namespace oar {
namespace {

namespace fs = std::filesystem;
const char* kData = "/usr/share/libonnx-testdata/data";

std::vector<std::string> loaded_drivers() {
  std::vector<std::string> out;
  for (const auto& d : adapter::drivers())
    if (d.loaded && (d.name == "fake_npu" || d.name == "openvino")) out.push_back(d.name);
  return out;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& precision, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = testing::host_values(got), w = testing::host_values(want);
  const testing::PrecisionTolerance& tol = testing::precision_tolerance(precision);
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tol.atol + tol.rtol * scale) << what << " at " << i;
}

struct ModelCase {
  const char* dir;       // under kData
  bool offloadable;      // openvino must take at least one node
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.dir; }

class AdapterOnnxModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(AdapterOnnxModels, OffloadedMatchesExpectedAndPluginOnly) {
  const std::string dir = std::string(kData) + "/" + GetParam().dir;
  if (!fs::exists(dir + "/model.onnx")) GTEST_SKIP() << dir << " is not installed (Debian libonnx-testdata)";
  std::vector<Tensor> inputs = onnx::load_node_test_tensors(dir, "input_");
  std::vector<Tensor> expected = onnx::load_node_test_tensors(dir, "output_");
  std::shared_ptr<graph::Graph> g = onnx::import_model(dir + "/model.onnx");
  inference::Predictor plain(std::shared_ptr<graph::Graph>(onnx::import_model(dir + "/model.onnx")), Device::cpu());
  std::vector<Tensor> reference = plain.run(inputs);
  std::vector<std::string> drivers = loaded_drivers();
  ASSERT_FALSE(drivers.empty()) << "fake_npu is always built";
  for (const std::string& driver : drivers) {
    adapter::OffloadOptions o;
    o.driver = driver;
    o.min_nodes = 1;
    o.min_macs = 0;
    inference::Predictor p(std::shared_ptr<graph::Graph>(onnx::import_model(dir + "/model.onnx")), Device::cpu(), o);
    ASSERT_NE(p.placement(), nullptr);
    if (driver == "openvino" && GetParam().offloadable) {
      EXPECT_GT(p.placement()->offloaded_nodes(), 0u) << p.placement()->explain();
    }
    std::vector<Tensor> out = p.run(inputs);
    ASSERT_EQ(out.size(), expected.size());
    for (size_t i = 0; i < out.size(); ++i) {
      expect_close(out[i], expected[i].to(out[i].dtype()), "fp32", str(GetParam().dir, " on ", driver, " vs expected"));
      expect_close(out[i], reference[i], "fp32", str(GetParam().dir, " on ", driver, " vs plugin only"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Debian, AdapterOnnxModels,
    ::testing::Values(ModelCase{"pytorch-converted/test_Conv2d", true},
                      ModelCase{"pytorch-converted/test_Conv2d_depthwise", true},
                      ModelCase{"pytorch-converted/test_Conv2d_depthwise_padded", true},
                      ModelCase{"pytorch-converted/test_Conv2d_groups", true},
                      ModelCase{"pytorch-converted/test_Conv2d_no_bias", true},
                      ModelCase{"pytorch-converted/test_Conv2d_padding", true},
                      ModelCase{"pytorch-converted/test_Conv2d_strided", true},
                      ModelCase{"pytorch-converted/test_Conv2d_dilated", true},
                      ModelCase{"pytorch-converted/test_MaxPool2d", true},
                      ModelCase{"pytorch-converted/test_AvgPool2d", true},
                      ModelCase{"pytorch-converted/test_AvgPool2d_stride", true},
                      ModelCase{"pytorch-converted/test_BatchNorm2d_eval", true},
                      ModelCase{"pytorch-converted/test_BatchNorm2d_momentum_eval", true},
                      ModelCase{"pytorch-converted/test_Linear", true},
                      ModelCase{"pytorch-converted/test_Linear_no_bias", true},
                      ModelCase{"pytorch-converted/test_LogSoftmax", true},
                      ModelCase{"pytorch-converted/test_Softmax", true},
                      ModelCase{"pytorch-converted/test_ReLU", true},
                      ModelCase{"pytorch-converted/test_Sigmoid", true},
                      ModelCase{"pytorch-converted/test_Tanh", true},
                      ModelCase{"pytorch-converted/test_LeakyReLU", true},
                      ModelCase{"pytorch-converted/test_ZeroPad2d", false},
                      ModelCase{"pytorch-operator/test_operator_conv", true},
                      ModelCase{"pytorch-operator/test_operator_maxpool", true},
                      ModelCase{"pytorch-operator/test_operator_addmm", true},
                      ModelCase{"pytorch-operator/test_operator_mm", true},
                      ModelCase{"pytorch-operator/test_operator_basic", true},
                      ModelCase{"pytorch-operator/test_operator_flatten", false},
                      ModelCase{"pytorch-operator/test_operator_permute2", false},  // an identity permutation: no node left
                      ModelCase{"pytorch-operator/test_operator_reduced_mean_keepdim", true},
                      ModelCase{"pytorch-operator/test_operator_concat2", true},
                      ModelCase{"simple/test_single_relu_model", true}),
    [](const ::testing::TestParamInfo<ModelCase>& info) {
      std::string name = fs::path(info.param.dir).filename().string();
      return name.substr(5);  // drop "test_"
    });

// The main job's network (examples/train_digits.py: conv-bn-relu-pool x2,
// flatten, linear-relu, dropout, linear), in eval mode, through the Predictor.
TEST(AdapterDigits, DigitsCnnOffloadedMatchesPluginOnly) {
  manual_seed(0);
  nn::Sequential net(nn::Conv2d(1, 16, 3, 1, 1), nn::BatchNorm2d(16), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(16, 32, 3, 1, 1), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                     nn::Linear(32 * 2 * 2, 64), nn::ReLU(), nn::Dropout(0.1), nn::Linear(64, 10));
  net->eval();
  Tensor x = Tensor::from_vector<float>(
      [] {
        std::vector<float> v;
        for (double d : testing::random_values(32 * 64, 0, 1, 3)) v.push_back(float(d));
        return v;
      }(),
      {32, 1, 8, 8}, Device::cpu());
  fs::path path = fs::temp_directory_path() / ("oar_adapter_digits_" + std::to_string(::getpid()) + ".oarg");
  std::unique_ptr<graph::Graph> traced =
      jit::trace_graph([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{net->forward(in[0])}; }, {x});
  jit::save(*traced, path.string());
  inference::Predictor plain(path.string(), Device::cpu());
  Tensor want = plain.run({x})[0];
  for (const std::string& driver : loaded_drivers()) {
    adapter::OffloadOptions o;
    o.driver = driver;
    inference::Predictor p(path.string(), Device::cpu(), o);
    const adapter::Placement& pl = *p.placement();
    // fake_npu takes everything but the flatten (a reshape); openvino everything.
    EXPECT_EQ(pl.offloaded_nodes(), driver == "openvino" ? pl.nodes.size() : pl.nodes.size() - 1) << pl.explain();
    expect_close(p.run({x})[0], want, "fp32", "digits on " + driver);
  }
  fs::remove(path);
}

}  // namespace
}  // namespace oar
