// In-place writes under autograd, through the C++ API: version counters,
// copy_ into a slice recorded as CopySlices, update_ taking the result's
// memory (saved values stay intact) or copying when the memory is seen
// elsewhere, the "modified by an inplace operation" error, and leaves refused;
// on every device, against hand-derived gradients.
#include "gradcheck.h"

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
