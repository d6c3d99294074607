// The autograd engine: leaf accumulation, graph freeing and retain_graph,
// no_grad, detach, hooks, retain_grad, grad() with create_graph (double grad,
// e.g. a gradient penalty), typed errors; and gradchecks of every elementwise
// rule on every device.
#include "gradcheck.h"
#include "oar/grad_fn.h"

using namespace oar;
using namespace oar::testing;

namespace {
Tensor leaf(const std::vector<double>& v, const Shape& shape, Device dev = Device::cpu(), DType dt = DType::f64) {
  Tensor t = make_tensor(v, shape, dt, dev);
  t.set_requires_grad(true);
  return t;
}
Tensor op(const char* name, const std::vector<Tensor>& in, const Attrs& a = {}) { return call1(name, in, a); }
}  // namespace

TEST(AutogradEngine, BackwardAccumulatesIntoLeaves) {
  for (Device dev : devices()) {
    Tensor x = leaf({1, 2, 3}, {3}, dev);
    Tensor w = leaf({0.5}, {1}, dev);
    Tensor y = op("sum", {op("mul", {op("mul", {x, x}), w})});  // sum(w x^2)
    EXPECT_FALSE(y.is_leaf());
    EXPECT_EQ(y.grad_fn_name(), "sumBackward");
    y.backward();
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{1, 2, 3}));  // 2 w x
    EXPECT_EQ(host_values(w.grad()), (std::vector<double>{14}));       // sum x^2, broadcast undone
    // a second graph accumulates
    op("sum", {x}).backward();
    EXPECT_EQ(host_values(x.grad()), (std::vector<double>{2, 3, 4}));
    // a tensor used twice gets both contributions
    Tensor z = leaf({3}, {1}, dev);
    op("sum", {op("add", {op("mul", {z, z}), z})}).backward();
    EXPECT_EQ(host_values(z.grad()), (std::vector<double>{7}));
  }
}

TEST(AutogradEngine, GradFnWalksTheGraphDownToTheLeaves) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor c = make_tensor({2, 2, 2}, {3}, DType::f64, Device::cpu());  // needs no gradient
  Tensor y = op("sum", {op("mul", {x, c})});
  GradFn sum = GradFn::of(y);
  ASSERT_TRUE(sum.defined());
  EXPECT_EQ(sum.name(), "sumBackward");
  auto below = sum.next_functions();
  ASSERT_EQ(below.size(), 1u);
  GradFn mul = below[0].first;
  EXPECT_EQ(mul.name(), "mulBackward");
  auto inputs = mul.next_functions();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].first.name(), "AccumulateGrad");
  EXPECT_EQ(inputs[0].first.variable().impl_ptr(), x.impl_ptr());  // the leaf itself
  EXPECT_FALSE(inputs[1].first.defined());                          // c: no edge
  EXPECT_FALSE(mul.variable().defined());
  EXPECT_FALSE(GradFn::of(x).defined());
  EXPECT_FALSE(GradFn::of(c).defined());
  EXPECT_EQ(GradFn::of(y).id(), sum.id());
}

TEST(AutogradEngine, RetainGraphAndSecondBackwardError) {
  Tensor x = leaf({2}, {1});
  Tensor y = op("sum", {op("exp", {x})});
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_NEAR(host_values(x.grad())[0], 2 * std::exp(2.0), 1e-12);
  EXPECT_THROW(y.backward(), ValueError);
}

TEST(AutogradEngine, NoGradDetachAndRequiresGrad) {
  Tensor x = leaf({1, 2}, {2});
  {
    autograd::NoGradGuard guard;
    Tensor y = op("mul", {x, x});
    EXPECT_FALSE(y.requires_grad());
  }
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.storage() == x.storage());
  EXPECT_FALSE(op("mul", {d, d}).requires_grad());
  EXPECT_THROW(Tensor::zeros({2}, DType::i64).set_requires_grad(true), DTypeError);
  Tensor y = op("mul", {x, x});
  EXPECT_THROW(y.set_requires_grad(false), ValueError);
  // integer and bool outputs carry no gradient
  EXPECT_FALSE(op("gt", {x, x}).requires_grad());
  EXPECT_FALSE(op("argmax", {x}).requires_grad());
  // errors from backward
  EXPECT_THROW(op("mul", {x, x}).backward(), ValueError);  // not a scalar, no gradient given
  EXPECT_THROW(d.backward(), ValueError);                   // does not require grad
  EXPECT_THROW(op("mul", {x, x}).backward(Tensor::ones({3}, DType::f64)), ShapeError);
}

TEST(AutogradEngine, HooksAndRetainGrad) {
  Tensor x = leaf({1, 2}, {2});
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    seen = host_values(g);
    return call1("mul", {g, Tensor::full({}, 10.0, DType::f64)});
  });
  Tensor h = op("mul", {x, x});
  h.retain_grad();
  h.register_hook([](const Tensor& g) { return call1("add", {g, Tensor::full({}, 1.0, DType::f64)}); });
  op("sum", {h}).backward();
  EXPECT_EQ(host_values(h.grad()), (std::vector<double>{2, 2}));  // after its hook: 1 + 1
  EXPECT_EQ(seen, (std::vector<double>{4, 8}));                   // 2 x * 2
  EXPECT_EQ(host_values(x.grad()), (std::vector<double>{40, 80})); // leaf hook scaled by 10
  EXPECT_THROW(Tensor::zeros({1}, DType::f64).register_hook([](const Tensor& g) { return g; }), ValueError);
}

TEST(AutogradEngine, GradFunctionAndGradientPenalty) {
  for (Device dev : devices()) {
    // f(x) = sum(x^3); df/dx = 3x^2; penalty P = sum((3x^2)^2) = 9 sum x^4; dP/dx = 36 x^3
    Tensor x = leaf({1, -2, 0.5}, {3}, dev);
    Tensor f = op("sum", {op("mul", {op("mul", {x, x}), x})});
    auto g = autograd::grad({f}, {x}, {}, false, /*create_graph=*/true);
    EXPECT_FALSE(x.grad().defined());  // grad() leaves .grad alone
    expect_close(host_values(g[0]), {3, 12, 0.75}, 1e-12, 1e-12, "first derivative");
    EXPECT_TRUE(g[0].requires_grad());
    Tensor penalty = op("sum", {op("mul", {g[0], g[0]})});
    penalty.backward();
    expect_close(host_values(x.grad()), {36, -288, 4.5}, 1e-12, 1e-12, "gradient penalty");
    // unused inputs
    Tensor u = leaf({1}, {1}, dev);
    Tensor f2 = op("sum", {op("mul", {x, x})});
    EXPECT_THROW(autograd::grad({f2}, {u}, {}, true), ValueError);
    auto r = autograd::grad({f2}, {x, u}, {}, false, false, /*allow_unused=*/true);
    EXPECT_FALSE(r[1].defined());
  }
}

TEST(AutogradEngine, ViewsAndDeviceCopiesAreDifferentiable) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = op("sum", {op("mul", {x.t().slice(0, 1, 3), x.t().select(0, 0).unsqueeze(0).expand({2, 2})})});
  // y = sum_{i in 1..2, j} x[j][i] * x[j][0]
  y.backward();
  // d/dx[j][0] = sum_i x[j][i] (i=1,2) ; d/dx[j][i] = x[j][0] for i = 1,2
  EXPECT_EQ(host_values(x.grad()), (std::vector<double>{5, 1, 1, 11, 4, 4}));
  Tensor z = leaf({1, 2}, {2});
  Tensor moved = z.to(DType::f32).reshape({1, 2}).permute({1, 0}).to(Device::cpu());
  op("sum", {op("mul", {moved, moved})}).backward();
  EXPECT_EQ(host_values(z.grad()), (std::vector<double>{2, 4}));
  EXPECT_EQ(z.grad().dtype(), DType::f64);
}

TEST(AutogradElementwise, GradcheckEveryRule) {
  struct Case {
    const char* op;
    double lo, hi;
    Attrs attrs;
  };
  const Case unary[] = {{"exp", -2, 2, {}},     {"log", 0.5, 3, {}},      {"sqrt", 0.5, 3, {}},
                        {"rsqrt", 0.5, 3, {}},  {"sin", -3, 3, {}},       {"cos", -3, 3, {}},
                        {"tanh", -2, 2, {}},    {"sigmoid", -3, 3, {}},   {"silu", -3, 3, {}},
                        {"gelu", -3, 3, {}},    {"gelu", -3, 3, {{"approximate", std::string("tanh")}}},
                        {"leaky_relu", -3, 3, {{"negative_slope", 0.1}}}, {"relu", -3, 3, {}},
                        {"square", -3, 3, {}},  {"neg", -3, 3, {}},       {"abs", -3, 3, {}},
                        {"clamp", -3, 3, {{"min", -1.0}, {"max", 1.5}}},  {"copy", -3, 3, {}},
                        {"erf", -2, 2, {}},     {"tan", -1, 1, {}},       {"asin", -0.8, 0.8, {}},
                        {"acos", -0.8, 0.8, {}}, {"atan", -3, 3, {}},     {"sinh", -2, 2, {}},
                        {"cosh", -2, 2, {}},    {"asinh", -3, 3, {}},     {"acosh", 1.2, 3, {}},
                        {"atanh", -0.8, 0.8, {}}, {"floor", 0.1, 0.9, {}}, {"ceil", 0.1, 0.9, {}},
                        {"round", 0.55, 0.95, {}}, {"sign", 0.2, 3, {}}};
  for (Device dev : devices()) {
    for (const auto& c : unary) {
      auto v = random_values(6, c.lo, c.hi, 21, DType::f64);
      for (auto& e : v)
        if (std::abs(e) < 0.05 || std::abs(e - 1.5) < 0.05 || std::abs(e + 1) < 0.05) e += 0.2;  // avoid kinks
      Tensor x = make_tensor(v, {2, 3}, DType::f64, dev);
      Attrs attrs = c.attrs;
      std::string name = c.op;
      gradcheck([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{call1(name, {a[0]}, attrs)}; }, {x},
                {true}, name);
    }
    const char* binary[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod"};
    for (const char* name : binary) {
      Tensor a = make_tensor(random_values(6, 0.5, 2, 31, DType::f64), {2, 3}, DType::f64, dev);
      Tensor b = make_tensor(random_values(3, 0.5, 2, 32, DType::f64), {3}, DType::f64, dev);  // broadcast
      std::string n = name;
      gradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1(n, {in[0], in[1]})}; }, {a, b},
                {true, true}, n);
    }
    Tensor cond = make_tensor({1, 0, 1}, {3}, DType::boolean, dev);
    Tensor a = make_tensor(random_values(6, -1, 1, 41, DType::f64), {2, 3}, DType::f64, dev);
    Tensor b = make_tensor(random_values(3, -1, 1, 42, DType::f64), {3}, DType::f64, dev);
    gradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1("where", {in[0], in[1], in[2]})}; },
              {cond, a, b}, {false, true, true}, "where");
    // mixed dtypes: the gradient comes back in each input's dtype
    Tensor f = make_tensor({1, 2}, {2}, DType::f32, dev);
    f.set_requires_grad(true);
    Tensor d = make_tensor({3, 4}, {2}, DType::f64, dev);
    d.set_requires_grad(true);
    call1("sum", {call1("mul", {f, d})}).backward();
    EXPECT_EQ(f.grad().dtype(), DType::f32);
    EXPECT_EQ(host_values(f.grad()), (std::vector<double>{3, 4}));
  }
}

TEST(AutogradElementwise, SecondDerivatives) {
  const char* ops[] = {"exp", "log", "sin", "tanh", "sigmoid", "mul", "div", "pow"};
  for (const char* name : ops) {
    bool binary = std::string(name) == "mul" || std::string(name) == "div" || std::string(name) == "pow";
    Tensor a = make_tensor(random_values(4, 0.5, 2, 51, DType::f64), {4}, DType::f64, Device::cpu());
    Tensor b = make_tensor(random_values(4, 0.5, 2, 52, DType::f64), {4}, DType::f64, Device::cpu());
    std::string n = name;
    if (binary)
      gradgradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1(n, {in[0], in[1]})}; },
                    {a, b}, {true, true}, n);
    else
      gradgradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1(n, {in[0]})}; }, {a},
                    {true}, n);
  }
}
