// In-place writes under autograd, through the C++ API: version counters,
// copy_ into a slice recorded as CopySlices, update_ taking the result's
// memory (saved values stay intact) or copying when the memory is seen
// elsewhere, the "modified by an inplace operation" error, leaves refused,
// as_strided's gradient, set_view_ and detach_, and grad_fn node hooks;
// on every device, against hand-derived gradients.
#include "gradcheck.h"
#include "oar/grad_fn.h"

using namespace oar;
using namespace oar::testing;

namespace {
Tensor leaf(const std::vector<double>& v, const Shape& shape, Device dev) {
  Tensor t = make_tensor(v, shape, DType::f64, dev);
  t.set_requires_grad(true);
  return t;
}
Tensor op(const char* name, const std::vector<Tensor>& in, const Attrs& a = {}) { return call1(name, in, a); }
}  // namespace

TEST(AutogradInplace, CopyIntoASliceRecordsIntoTheBase) {
  for (Device dev : devices()) {
    Tensor a = leaf({1, 2}, {2}, dev);
    Tensor buf = Tensor::zeros({2, 2}, DType::f64, dev);
    uint32_t v0 = buf.version();
    buf.select(0, 1).copy_(op("mul", {a, a}));  // buf[1] = a * a
    EXPECT_EQ(buf.version(), v0 + 1) << dev.str();
    ASSERT_TRUE(buf.requires_grad()) << dev.str();
    EXPECT_EQ(buf.grad_fn_name(), "CopySlicesBackward");
    Tensor w = make_tensor({1, 1, 3, 5}, {2, 2}, DType::f64, dev);
    op("sum", {op("mul", {buf, w})}).backward();
    EXPECT_EQ(host_values(a.grad()), (std::vector<double>{6, 20})) << dev.str();  // 2 a w[1]
  }
}

TEST(AutogradInplace, UpdateKeepsSavedValuesWhenNothingElseSeesTheMemory) {
  for (Device dev : devices()) {
    Tensor x = leaf({0.5, -1.0}, {2}, dev);
    Tensor y = op("exp", {x});      // exp's rule reads y
    y.update_(op("mul", {y, make_tensor({3}, {}, DType::f64, dev)}));
    op("sum", {y}).backward();      // d/dx 3 e^x
    std::vector<double> g = host_values(x.grad());
    EXPECT_NEAR(g[0], 3 * std::exp(0.5), 1e-12) << dev.str();
    EXPECT_NEAR(g[1], 3 * std::exp(-1.0), 1e-12) << dev.str();
  }
}

TEST(AutogradInplace, OverwrittenSavedValueIsRefusedAtBackward) {
  for (Device dev : devices()) {
    Tensor x = leaf({0.5, -1.0}, {2}, dev);
    Tensor y = op("exp", {x});
    Tensor view = y.slice(0, 0, 2);  // a view sees y's memory: the write must copy into it
    view.copy_(make_tensor({7, 8}, {2}, DType::f64, dev));
    try {
      op("sum", {y}).backward();
      ADD_FAILURE() << "backward used an overwritten value on " << dev.str();
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"), std::string::npos) << e.what();
    }
  }
}

TEST(AutogradInplace, LeafIsRefusedUnderGradModeOnly) {
  Tensor w = leaf({1, 2}, {2}, Device::cpu());
  EXPECT_THROW(w.copy_(make_tensor({0, 0}, {2}, DType::f64, Device::cpu())), ValueError);
  EXPECT_THROW(w.select(0, 0).copy_(make_tensor({0}, {}, DType::f64, Device::cpu())), ValueError);
  {
    autograd::NoGradGuard no_grad;
    w.copy_(make_tensor({5, 6}, {2}, DType::f64, Device::cpu()));
  }
  EXPECT_EQ(host_values(w), (std::vector<double>{5, 6}));
}

// as_strided differentiates through storage space: overlapping windows add up.
TEST(AutogradInplace, AsStridedGradientAddsOverlappingWindows) {
  for (Device dev : devices()) {
    Tensor x = leaf({1, 2, 3, 4, 5, 6}, {6}, dev);
    Tensor y = op("mul", {x, make_tensor({2}, {}, DType::f64, dev)});
    Tensor windows = y.as_strided({3, 3}, {1, 1}, 1);  // rows [1..3], [2..4], [3..5]
    EXPECT_EQ(host_values(windows), (std::vector<double>{4, 6, 8, 6, 8, 10, 8, 10, 12})) << dev.str();
    op("sum", {windows}).backward();
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{0, 2, 4, 6, 4, 2})) << dev.str();
    gradcheck([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].as_strided({2, 3}, {2, 1}, 0)}; },
              {leaf({0.5, -1, 2, 3, -4, 1.5}, {6}, dev)}, {true}, "as_strided on " + dev.str());
  }
}

// set_view_ (unsqueeze_, t_, ...): the tensor takes the view's geometry and its history.
TEST(AutogradInplace, SetViewKeepsTheGradientPathAndRefusesLeaves) {
  for (Device dev : devices()) {
    Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
    Tensor y = op("mul", {x, x});
    Tensor same = y;  // another handle on the same tensor sees the change
    y.set_view_(y.t());
    EXPECT_EQ(same.shape(), (Shape{3, 2}));
    EXPECT_EQ(y.grad_fn_name(), "TransposeBackward0");
    op("sum", {op("mul", {y, make_tensor({1, 10, 100, 1000, 1e4, 1e5}, {3, 2}, DType::f64, dev)})}).backward();
    // y[j][i] = x[i][j]^2 weighted by w[j][i]: dx[i][j] = 2 x[i][j] w[j][i]
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{2, 400, 6e4, 80, 1e4, 1.2e6})) << dev.str();
    EXPECT_THROW(x.set_view_(x.unsqueeze(0)), ValueError);
    EXPECT_THROW(y.set_view_(x.unsqueeze(0)), ValueError);  // not a view of y's memory
  }
}

TEST(AutogradInplace, DetachInPlaceCutsOnlyThatTensor) {
  for (Device dev : devices()) {
    Tensor x = leaf({1, 2}, {2}, dev);
    Tensor y = op("mul", {x, x});
    Tensor z = op("sum", {y});
    y.detach_();
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
    z.backward();  // recorded before the detach
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{2, 4})) << dev.str();
    Tensor w = op("mul", {x, x});
    EXPECT_THROW(w.select(0, 0).detach_(), ValueError);  // a tracked view: use detach()
  }
}

// grad_fn hooks: a pre-hook sees (and may replace) the outputs' gradients, a
// hook the inputs' gradients the node computed.
TEST(AutogradInplace, NodeHooksSeeAndReplaceGradients) {
  for (Device dev : devices()) {
    Tensor x = leaf({1, 2}, {2}, dev);
    Tensor y = op("mul", {x, make_tensor({3}, {}, DType::f64, dev)});
    std::vector<double> seen_out, seen_in;
    GradFn node = GradFn::of(y);
    node.register_prehook([&](const std::vector<Tensor>& go) {
      seen_out = host_values(go.at(0));
      return std::vector<Tensor>{op("mul", {go[0], make_tensor({2}, {}, DType::f64, dev)})};
    });
    node.register_hook([&](const std::vector<Tensor>& gi, const std::vector<Tensor>&) {
      seen_in = host_values(gi.at(0));
      return std::vector<Tensor>{};  // keep
    });
    op("sum", {y}).backward();
    EXPECT_EQ(seen_out, (std::vector<double>{1, 1}));
    EXPECT_EQ(seen_in, (std::vector<double>{6, 6}));
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{6, 6})) << dev.str();
  }
}
