// The gradient column of kernel_primitives' unary_ops.def: every row that has
// one is an op whose rule the core built from that text. Each is checked here
// against central finite differences in f64, first and second order, on every
// device; a new row with a gradient is checked without touching this file.
#include <cmath>

#include "gradcheck.h"
#include "oar/op_registry.h"

using namespace oar;
using namespace oar::testing;

namespace {

struct DefGradient {
  const char* op;
  const char* text;
};

const std::vector<DefGradient>& def_gradients() {
  static const std::vector<DefGradient> rows = [] {
    std::vector<DefGradient> all;
#define OAR_KP_UNARY(name, kind, p0_attr, p1_attr, expr, ...) all.push_back({#name, "" __VA_ARGS__});
#include "oar/kp/unary_ops.def"
#undef OAR_KP_UNARY
    std::vector<DefGradient> with_text;
    for (const auto& r : all)
      if (*r.text) with_text.push_back(r);
    return with_text;
  }();
  return rows;
}

// Inputs away from every kink of the rows (0 for abs/relu/sign, +-0.5 for
// round): |x| in [0.15, 0.45]; an op undefined there (log of a negative,
// acosh below 1) gets x in [1.15, 1.45] instead, where every row is smooth.
Tensor smooth_input(const std::string& op, uint32_t seed, Device dev) {
  std::vector<double> v = random_values(6, 0.15, 0.45, seed, DType::f64);
  for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
  Tensor x = make_tensor(v, {2, 3}, DType::f64, dev);
  bool finite = true;
  for (double y : host_values(call1(op, {x}))) finite &= std::isfinite(y);
  if (finite) return x;
  for (auto& e : v) e = std::fabs(e) + 1.0;
  return make_tensor(v, {2, 3}, DType::f64, dev);
}

TEST(FunctorGradients, EveryDefRowWithAGradientIsACatalogOpWithThatRule) {
  ASSERT_GE(def_gradients().size(), 30u);
  for (const auto& r : def_gradients()) {
    const OpSchema* op = OpRegistry::instance().find(r.op);
    ASSERT_NE(op, nullptr) << r.op << " has a gradient column but is not a catalog op";
    EXPECT_NE(autograd::find_grad_rule(*op), nullptr) << r.op;
  }
}

TEST(FunctorGradients, FirstOrderMatchesFiniteDifferences) {
  for (Device dev : devices())
    for (const auto& r : def_gradients()) {
      std::string name = r.op;
      Tensor x = smooth_input(name, 5, dev);
      gradcheck([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{call1(name, {a[0]})}; }, {x}, {true},
                dev.str() + " " + name + ": d/dx = " + r.text);
    }
}

TEST(FunctorGradients, SecondOrderMatchesFiniteDifferences) {
  for (Device dev : devices())
    for (const auto& r : def_gradients()) {
      std::string name = r.op;
      Tensor x = smooth_input(name, 6, dev);
      std::string what = dev.str() + " " + name + ": d/dx = " + r.text;
      Tensor leaf = x.detach().clone();
      leaf.set_requires_grad(true);
      Tensor first = autograd::grad({call1("sum", {call1(name, {leaf})})}, {leaf}, {}, false, true)[0];
      if (first.requires_grad()) {
        gradgradcheck([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{call1(name, {a[0]})}; }, {x},
                      {true}, what);
        continue;
      }
      // A gradient with no history does not depend on x (neg, floor, ...):
      // the second derivative is zero, so it must equal the gradient elsewhere.
      Tensor other = call1("mul", {leaf.detach(), Tensor::full({}, 0.9, DType::f64, dev)});
      other.set_requires_grad(true);
      Tensor again = autograd::grad({call1("sum", {call1(name, {other})})}, {other})[0];
      expect_close(host_values(again), host_values(first), 0, 0, what + " (constant gradient)");
    }
}

// Attributes reach the rule: clamp's bounds (a variable of the expression)
// and leaky_relu's slope (passed on to leaky_relu_backward).
TEST(FunctorGradients, AttributesReachTheRule) {
  Tensor x = make_tensor({-2.0, -0.5, 0.25, 0.75, 3.0}, {5}, DType::f64, Device::cpu());
  x.set_requires_grad(true);
  call1("sum", {call1("clamp", {x}, {{"min", -1.0}, {"max", 0.5}})}).backward();
  EXPECT_EQ(host_values(x.grad()), (std::vector<double>{0, 1, 1, 0, 0}));
  Tensor z = make_tensor({-2.0, 3.0}, {2}, DType::f64, Device::cpu());
  z.set_requires_grad(true);
  call1("sum", {call1("leaky_relu", {z}, {{"negative_slope", 0.25}})}).backward();
  EXPECT_EQ(host_values(z.grad()), (std::vector<double>{0.25, 1}));
}

// softsign is declared only by its .def line (test_single_source.cpp); its
// gradient 1 / (1 + |x|)^2 comes from the same line.
TEST(FunctorGradients, SoftsignGradientValues) {
  Tensor x = make_tensor({-3.0, -0.5, 0.0, 2.0}, {4}, DType::f32, Device::cpu());
  x.set_requires_grad(true);
  call1("sum", {call1("softsign", {x})}).backward();
  std::vector<double> want;
  for (double v : {-3.0, -0.5, 0.0, 2.0}) want.push_back(1.0 / ((1 + std::fabs(v)) * (1 + std::fabs(v))));
  expect_close(host_values(x.grad()), want, 1e-6, 1e-7, "softsign'");
}

}  // namespace
