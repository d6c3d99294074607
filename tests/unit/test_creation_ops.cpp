// fill/arange and the seeded random ops: values, reproducibility under
// manual_seed, distribution moments, and dropout's mask/scale contract.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

TEST(Creation, FillAndArange) {
  for (Device dev : devices()) {
    for (DType dt : all_dtypes) {
      Tensor t = Tensor::full({2, 3}, 1.0, dt, dev);
      EXPECT_EQ(t.dtype(), dt);
      EXPECT_EQ(host_values(t), std::vector<double>(6, 1.0));
    }
    EXPECT_EQ(host_values(Tensor::zeros({4}, DType::i64, dev)), std::vector<double>(4, 0.0));
    CallOptions on;
    on.device = dev;
    Tensor a = call1("arange", {}, {{"end", 5.0}}, on);
    EXPECT_EQ(a.dtype(), DType::i64);
    EXPECT_EQ(host_values(a), (std::vector<double>{0, 1, 2, 3, 4}));
    Tensor b = call1("arange", {}, {{"start", 1.0}, {"end", 0.0}, {"step", -0.25}, {"dtype", DType::f32}}, on);
    EXPECT_EQ(host_values(b), (std::vector<double>{1, 0.75, 0.5, 0.25}));
    EXPECT_THROW(call1("arange", {}, {{"end", 5.0}, {"step", 0.0}}, on), ValueError);
    EXPECT_THROW(call1("arange", {}, {{"end", -5.0}}, on), ValueError);
    EXPECT_THROW(Tensor::zeros({2, -1}, DType::f32, dev), ShapeError);
    EXPECT_THROW(call1("fill", {}, {{"value", 1.0}}, on), ValueError);  // missing shape
  }
}

TEST(Random, SeededStreamsAreReproducibleAndDeviceIndependent) {
  std::vector<std::vector<double>> per_device;
  for (Device dev : devices()) {
    CallOptions on;
    on.device = dev;
    manual_seed(1234);
    auto u1 = host_values(call1("uniform", {}, {{"shape", Shape{1000}}}, on));
    auto n1 = host_values(call1("normal", {}, {{"shape", Shape{1000}}}, on));
    manual_seed(1234);
    auto u2 = host_values(call1("uniform", {}, {{"shape", Shape{1000}}}, on));
    auto n2 = host_values(call1("normal", {}, {{"shape", Shape{1000}}}, on));
    EXPECT_EQ(u1, u2);
    EXPECT_EQ(n1, n2);
    EXPECT_NE(u1, host_values(call1("uniform", {}, {{"shape", Shape{1000}}}, on)));  // stream advances
    per_device.push_back(u1);
    // explicit seed/offset reproduce exactly
    auto e1 = host_values(call1("normal", {}, {{"shape", Shape{8}}, {"seed", int64_t(7)}, {"offset", int64_t(0)}}, on));
    auto e2 = host_values(call1("normal", {}, {{"shape", Shape{8}}, {"seed", int64_t(7)}, {"offset", int64_t(0)}}, on));
    EXPECT_EQ(e1, e2);
  }
  for (size_t i = 1; i < per_device.size(); ++i) EXPECT_EQ(per_device[i], per_device[0]);
}

TEST(Random, DistributionMoments) {
  for (Device dev : devices()) {
    CallOptions on;
    on.device = dev;
    manual_seed(42);
    const int64_t n = 200000;
    for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
      auto u = host_values(call1("uniform", {}, {{"shape", Shape{n}}, {"low", -2.0}, {"high", 4.0}, {"dtype", dt}}, on));
      double m = 0, lo = 1e9, hi = -1e9;
      for (double v : u) m += v, lo = std::min(lo, v), hi = std::max(hi, v);
      m /= double(n);
      EXPECT_NEAR(m, 1.0, 0.03) << dtype_name(dt);
      EXPECT_GE(lo, -2.0);
      EXPECT_LE(hi, 4.0);
      auto g = host_values(call1("normal", {}, {{"shape", Shape{n}}, {"mean", 3.0}, {"std", 2.0}, {"dtype", dt}}, on));
      double gm = 0, gv = 0;
      for (double v : g) gm += v;
      gm /= double(n);
      for (double v : g) gv += (v - gm) * (v - gm);
      gv /= double(n - 1);
      EXPECT_NEAR(gm, 3.0, 0.03) << dtype_name(dt);
      EXPECT_NEAR(gv, 4.0, 0.08) << dtype_name(dt);
    }
    Tensor p = Tensor::full({n}, 0.3, DType::f32, dev);
    auto b = host_values(call1("bernoulli", {p}));
    double ones = 0;
    for (double v : b) {
      ASSERT_TRUE(v == 0 || v == 1);
      ones += v;
    }
    EXPECT_NEAR(ones / double(n), 0.3, 0.01);
    EXPECT_THROW(call1("bernoulli", {Tensor::full({3}, 1.5, DType::f32, dev)}), ValueError);
    EXPECT_THROW(call1("uniform", {}, {{"shape", Shape{3}}, {"dtype", DType::i32}}, on), DTypeError);
    EXPECT_THROW(call1("normal", {}, {{"shape", Shape{3}}, {"std", -1.0}}, on), ValueError);
  }
}

TEST(Random, DropoutMaskAndScale) {
  for (Device dev : devices()) {
    for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      Tensor x = Tensor::full({10000}, 2.0, dt, dev);
      auto outs = call(std::string("dropout"), {x}, {{"p", 0.25}});
      ASSERT_EQ(outs.size(), 2u);
      auto y = host_values(outs[0]);
      auto mask = host_values(outs[1]);
      double kept = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_TRUE(mask[i] == 0 || mask[i] == 1);
        EXPECT_NEAR(y[i], mask[i] * 2.0 / 0.75, tolerance(dt) * 3);
        kept += mask[i];
      }
      EXPECT_NEAR(kept / 10000.0, 0.75, 0.03);
    }
    EXPECT_THROW(call(std::string("dropout"), {Tensor::ones({3}, DType::f32, dev)}, {{"p", 1.0}}), ValueError);
  }
}
