// Elementwise ops against double-precision reference math, on every device,
// every registered dtype, with broadcast and non-contiguous inputs.
#include <functional>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

struct UnaryCase {
  const char* op;
  std::function<double(double)> ref;
  double lo, hi;
  bool integer_ok;  // also defined on integer dtypes (same dtype result)
  Attrs attrs;
};

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

std::vector<UnaryCase> unary_cases() {
  return {
      {"exp", [](double x) { return std::exp(x); }, -4, 4, false, {}},
      {"log", [](double x) { return std::log(x); }, 0.05, 10, false, {}},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0, 10, false, {}},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.1, 10, false, {}},
      {"sin", [](double x) { return std::sin(x); }, -4, 4, false, {}},
      {"cos", [](double x) { return std::cos(x); }, -4, 4, false, {}},
      {"tanh", [](double x) { return std::tanh(x); }, -4, 4, false, {}},
      {"sigmoid", sigmoid_ref, -8, 8, false, {}},
      {"silu", [](double x) { return x * sigmoid_ref(x); }, -6, 6, false, {}},
      {"gelu", gelu_ref, -4, 4, false, {}},
      {"gelu", gelu_tanh_ref, -4, 4, false, {{"approximate", std::string("tanh")}}},
      {"leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }, -4, 4, false, {{"negative_slope", 0.2}}},
      {"neg", [](double x) { return -x; }, -50, 50, true, {}},
      {"abs", [](double x) { return std::abs(x); }, -50, 50, true, {}},
      {"relu", [](double x) { return x > 0 ? x : 0; }, -50, 50, true, {}},
      {"square", [](double x) { return x * x; }, -10, 10, true, {}},
      {"clamp", [](double x) { return std::min(std::max(x, -2.0), 3.0); }, -10, 10, true,
       {{"min", -2.0}, {"max", 3.0}}},
      // declared only in unary_ops.def
      {"floor", [](double x) { return std::floor(x); }, -10, 10, false, {}},
      {"ceil", [](double x) { return std::ceil(x); }, -10, 10, false, {}},
      {"round", [](double x) { return std::nearbyint(x); }, -10, 10, false, {}},  // half to even
      {"sign", [](double x) { return double((x > 0) - (x < 0)); }, -10, 10, true, {}},
      {"erf", [](double x) { return std::erf(x); }, -3, 3, false, {}},
      {"tan", [](double x) { return std::tan(x); }, -1.2, 1.2, false, {}},
      {"asin", [](double x) { return std::asin(x); }, -0.99, 0.99, false, {}},
      {"acos", [](double x) { return std::acos(x); }, -0.99, 0.99, false, {}},
      {"atan", [](double x) { return std::atan(x); }, -5, 5, false, {}},
      {"sinh", [](double x) { return std::sinh(x); }, -3, 3, false, {}},
      {"cosh", [](double x) { return std::cosh(x); }, -3, 3, false, {}},
      {"asinh", [](double x) { return std::asinh(x); }, -5, 5, false, {}},
      {"acosh", [](double x) { return std::acosh(x); }, 1.01, 5, false, {}},
      {"atanh", [](double x) { return std::atanh(x); }, -0.95, 0.95, false, {}},
  };
}

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
const DType kIntTypes[] = {DType::i8, DType::i32, DType::i64};

}  // namespace

TEST(ElementwiseUnary, MatchesReferenceOnEveryDtypeAndLayout) {
  for (Device dev : devices()) {
    for (const auto& c : unary_cases()) {
      std::vector<DType> dtypes(std::begin(kFloatTypes), std::end(kFloatTypes));
      if (c.integer_ok) dtypes.insert(dtypes.end(), std::begin(kIntTypes), std::end(kIntTypes));
      for (DType dt : dtypes) {
        SCOPED_TRACE(str(c.op, " ", dtype_name(dt), " on ", dev.str()));
        auto values = random_values(6 * 5, c.lo, c.hi, 7, dt);
        for (auto& v : values) v = round_to(v, dt);
        Tensor x = make_tensor(values, {6, 5}, dt, dev);
        // contiguous, transposed and strided-slice views of the same data
        std::vector<Tensor> inputs = {x, x.t(), x.slice(0, 0, 6, 2)};
        for (const Tensor& in : inputs) {
          Tensor y = call1(c.op, {in}, c.attrs);
          ASSERT_EQ(y.shape(), in.shape());
          ASSERT_EQ(y.dtype(), dt);
          auto xin = host_values(in);
          std::vector<double> want(xin.size());
          for (size_t i = 0; i < xin.size(); ++i) {
            double r = c.ref(xin[i]);
            want[i] = is_integral(dt) ? r : round_to(r, dt);
          }
          double tol = tolerance(dt);
          expect_close(host_values(y), want, tol, tol, c.op);
        }
      }
    }
  }
}

TEST(ElementwiseUnary, IntegerInputsOfFloatOpsComputeInF32) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({0, 1, 2}, {3}, DType::i64, dev);
    Tensor y = call1("exp", {x});
    EXPECT_EQ(y.dtype(), DType::f32);
    expect_close(host_values(y), {1, std::exp(1.0), std::exp(2.0)}, 1e-6, 0, "exp(i64)");
  }
}

// A 0-d CPU tensor joins tensors on another device (PyTorch's rule): it is
// copied there, and its gradient comes back to the CPU.
TEST(ElementwiseBinary, ZeroDimCpuTensorJoinsAnotherDevice) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({1, 2, 3}, {3}, DType::f32, dev);
    Tensor s = make_tensor({2}, {}, DType::f32, Device::cpu());
    s.set_requires_grad(true);
    Tensor y = call1("mul", {x, s});
    EXPECT_EQ(y.device(), dev);
    EXPECT_EQ(host_values(y), (std::vector<double>{2, 4, 6})) << dev.str();
    call1("sum", {y}).backward();
    EXPECT_EQ(s.grad().device(), Device::cpu());
    EXPECT_EQ(host_values(s.grad()), (std::vector<double>{6})) << dev.str();
    if (dev != Device::cpu()) {  // a 1-element tensor with a dimension is not a scalar: still refused
      EXPECT_THROW(call1("mul", {x, make_tensor({2}, {1}, DType::f32, Device::cpu())}), DeviceError);
    }
  }
}

TEST(ElementwiseUnary, ClampOnIntegersWithInfiniteBoundsIsIdentity) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({-100, 0, 100}, {3}, DType::i8, dev);
    EXPECT_EQ(host_values(call1("clamp", {x})), (std::vector<double>{-100, 0, 100}));
    EXPECT_EQ(host_values(call1("clamp", {x}, {{"min", -5.0}})), (std::vector<double>{-5, 0, 100}));
  }
}

namespace {
struct BinaryCase {
  const char* op;
  std::function<double(double, double)> ref;
  bool integer_ok;
  bool bool_result;
};
std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](double a, double b) { return a + b; }, true, false},
      {"sub", [](double a, double b) { return a - b; }, true, false},
      {"mul", [](double a, double b) { return a * b; }, true, false},
      {"div", [](double a, double b) { return a / b; }, false, false},
      {"pow", [](double a, double b) { return std::pow(std::abs(a), b); }, false, false},
      {"maximum", [](double a, double b) { return std::max(a, b); }, true, false},
      {"minimum", [](double a, double b) { return std::min(a, b); }, true, false},
      {"fmod", [](double a, double b) { return std::fmod(a, b); }, false, false},
      {"atan2", [](double a, double b) { return std::atan2(a, b); }, false, false},
      {"hypot", [](double a, double b) { return std::hypot(a, b); }, false, false},
      {"copysign", [](double a, double b) { return std::copysign(a, b); }, false, false},
      {"logaddexp", [](double a, double b) { return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b))); },
       false, false},
      {"eq", [](double a, double b) { return double(a == b); }, true, true},
      {"ne", [](double a, double b) { return double(a != b); }, true, true},
      {"lt", [](double a, double b) { return double(a < b); }, true, true},
      {"le", [](double a, double b) { return double(a <= b); }, true, true},
      {"gt", [](double a, double b) { return double(a > b); }, true, true},
      {"ge", [](double a, double b) { return double(a >= b); }, true, true},
      {"logical_and", [](double a, double b) { return double(a != 0 && b != 0); }, true, true},
      {"logical_or", [](double a, double b) { return double(a != 0 || b != 0); }, true, true},
      {"logical_xor", [](double a, double b) { return double((a != 0) != (b != 0)); }, true, true},
  };
}
}  // namespace

TEST(ElementwiseBinary, BroadcastAndStridedMatchReference) {
  for (Device dev : devices()) {
    for (const auto& c : binary_cases()) {
      std::vector<DType> dtypes(std::begin(kFloatTypes), std::end(kFloatTypes));
      if (c.integer_ok) dtypes.insert(dtypes.end(), std::begin(kIntTypes), std::end(kIntTypes));
      for (DType dt : dtypes) {
        SCOPED_TRACE(str(c.op, " ", dtype_name(dt), " on ", dev.str()));
        bool is_pow = std::string(c.op) == "pow";
        auto av = random_values(4 * 3, is_pow ? 0.5 : -8, 8, 11, dt);
        auto bv = random_values(3, is_pow ? -2 : 1, is_pow ? 2 : 8, 12, dt);
        for (auto& v : av) v = round_to(v, dt);
        for (auto& v : bv) v = round_to(v, dt);
        if (c.integer_ok && !is_floating(dt)) av[0] = bv[0];  // exercise equality
        Tensor a = make_tensor(av, {4, 3}, dt, dev);
        Tensor b = make_tensor(bv, {3}, dt, dev);
        // [4,3] op [3] (broadcast), and [3,4] (transposed a) op [3,1] (column broadcast)
        Tensor y1 = call1(c.op, {a, b});
        Tensor y2 = call1(c.op, {a.t(), b.unsqueeze(1)});
        ASSERT_EQ(y1.shape(), (Shape{4, 3}));
        ASSERT_EQ(y2.shape(), (Shape{3, 4}));
        EXPECT_EQ(y1.dtype(), c.bool_result ? DType::boolean : dt);
        std::vector<double> w1, w2;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 3; ++j) w1.push_back(c.ref(av[i * 3 + j], bv[j]));
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 4; ++i) w2.push_back(c.ref(av[i * 3 + j], bv[j]));
        if (!c.bool_result && is_floating(dt))
          for (auto* w : {&w1, &w2})
            for (auto& v : *w) v = round_to(v, dt);
        double tol = c.bool_result ? 0 : tolerance(dt);
        expect_close(host_values(y1), w1, tol, tol, "row broadcast");
        expect_close(host_values(y2), w2, tol, tol, "column broadcast, transposed");
      }
    }
  }
}

TEST(ElementwiseBinary, TypePromotion) {
  for (Device dev : devices()) {
    Tensor i = make_tensor({1, 2, 3}, {3}, DType::i32, dev);
    Tensor l = make_tensor({1, 1, 1}, {3}, DType::i64, dev);
    Tensor f = make_tensor({0.5, 0.5, 0.5}, {3}, DType::f32, dev);
    Tensor h = make_tensor({0.5, 0.5, 0.5}, {3}, DType::f16, dev);
    Tensor bh = make_tensor({0.5, 0.5, 0.5}, {3}, DType::bf16, dev);
    Tensor u = make_tensor({200, 1, 2}, {3}, DType::u8, dev);
    Tensor s = make_tensor({-1, 1, 2}, {3}, DType::i8, dev);
    EXPECT_EQ(call1("add", {i, l}).dtype(), DType::i64);
    EXPECT_EQ(call1("add", {i, f}).dtype(), DType::f32);
    EXPECT_EQ(call1("add", {h, bh}).dtype(), DType::f32);
    EXPECT_EQ(call1("div", {i, l}).dtype(), DType::f32);
    Tensor us = call1("add", {u, s});
    EXPECT_EQ(us.dtype(), DType::i32);
    EXPECT_EQ(host_values(us), (std::vector<double>{199, 2, 4}));
    expect_close(host_values(call1("div", {i, make_tensor({2, 2, 2}, {3}, DType::i64, dev)})),
                 {0.5, 1, 1.5}, 0, 0, "true division of integers");
  }
}

TEST(ElementwiseBinary, NanPropagatesThroughMaximum) {
  for (Device dev : devices()) {
    Tensor a = make_tensor({NAN, 1, 5}, {3}, DType::f32, dev);
    Tensor b = make_tensor({0, NAN, 2}, {3}, DType::f32, dev);
    auto v = host_values(call1("maximum", {a, b}));
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_TRUE(std::isnan(v[1]));
    EXPECT_EQ(v[2], 5);
  }
}

TEST(ElementwiseOther, WhereLogicalNotCastCopy) {
  for (Device dev : devices()) {
    Tensor cond = make_tensor({1, 0, 1}, {3}, DType::boolean, dev);
    Tensor a = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f64, dev);
    Tensor b = make_tensor({-1}, {1}, DType::i32, dev);
    Tensor w = call1("where", {cond, a, b});
    EXPECT_EQ(w.dtype(), DType::f64);
    EXPECT_EQ(host_values(w), (std::vector<double>{1, -1, 3, 4, -1, 6}));
    EXPECT_EQ(host_values(call1("logical_not", {make_tensor({0, 2, -1}, {3}, DType::i32, dev)})),
              (std::vector<double>{1, 0, 0}));
    // cast: every pair of dtypes through a value all of them hold
    for (DType from : all_dtypes)
      for (DType to : all_dtypes) {
        Tensor x = make_tensor({0, 1, 1}, {3}, from, dev);
        Tensor y = x.to(to);
        EXPECT_EQ(y.dtype(), to);
        EXPECT_EQ(host_values(y), (std::vector<double>{0, 1, 1})) << dtype_name(from) << "->" << dtype_name(to);
      }
    // float -> int truncates toward zero; float -> bool is != 0
    Tensor f = make_tensor({-2.7, 2.7, 0.25}, {3}, DType::f32, dev);
    EXPECT_EQ(host_values(f.to(DType::i32)), (std::vector<double>{-2, 2, 0}));
    EXPECT_EQ(host_values(f.to(DType::boolean)), (std::vector<double>{1, 1, 1}));
    // copy_ into a strided destination with broadcast
    Tensor dst = Tensor::zeros({3, 2}, DType::f32, dev);
    Tensor col = dst.t();  // [2,3] view
    col.copy_(make_tensor({7, 8, 9}, {3}, DType::i64, dev));
    EXPECT_EQ(host_values(dst), (std::vector<double>{7, 7, 8, 8, 9, 9}));
  }
}

TEST(ElementwiseBackward, ActivationGradientsMatchFiniteDifferences) {
  struct Case {
    const char* fwd;
    const char* bwd;
    bool uses_output;
    Attrs attrs;
  };
  const Case cases[] = {{"sigmoid", "sigmoid_backward", true, {}},
                        {"tanh", "tanh_backward", true, {}},
                        {"silu", "silu_backward", false, {}},
                        {"gelu", "gelu_backward", false, {}},
                        {"gelu", "gelu_backward", false, {{"approximate", std::string("tanh")}}},
                        {"relu", "relu_backward", false, {}},
                        {"leaky_relu", "leaky_relu_backward", false, {{"negative_slope", 0.1}}}};
  for (Device dev : devices()) {
    auto xs = random_values(16, -3, 3, 5, DType::f64);
    for (auto& x : xs)
      if (std::abs(x) < 1e-3) x = 0.5;  // keep away from relu's kink
    Tensor x = make_tensor(xs, {16}, DType::f64, dev);
    auto gs = random_values(16, -1, 1, 6, DType::f64);
    Tensor g = make_tensor(gs, {16}, DType::f64, dev);
    for (const auto& c : cases) {
      SCOPED_TRACE(c.bwd);
      Tensor saved = c.uses_output ? call1(c.fwd, {x}, c.attrs) : x;
      auto got = host_values(call1(c.bwd, {g, saved}, c.attrs));
      const double h = 1e-6;
      std::vector<double> want(16);
      for (int i = 0; i < 16; ++i) {
        auto yp = host_values(call1(c.fwd, {make_tensor({xs[i] + h}, {1}, DType::f64, dev)}, c.attrs));
        auto ym = host_values(call1(c.fwd, {make_tensor({xs[i] - h}, {1}, DType::f64, dev)}, c.attrs));
        want[i] = gs[i] * (yp[0] - ym[0]) / (2 * h);
      }
      expect_close(got, want, 1e-6, 1e-7, c.bwd);
    }
  }
}

TEST(ElementwiseErrors, TypedErrorsForBadInput) {
  for (Device dev : devices()) {
    Tensor a = Tensor::zeros({2, 3}, DType::f32, dev);
    Tensor b = Tensor::zeros({4}, DType::f32, dev);
    EXPECT_THROW(call1("add", {a, b}), ShapeError);
    EXPECT_THROW(call1("neg", {Tensor::zeros({2}, DType::boolean, dev)}), DTypeError);
    EXPECT_THROW(call1("where", {a, a, a}), DTypeError);
    EXPECT_THROW(call1("add", {a}), ValueError);
    EXPECT_THROW(call1("add", {a, Tensor()}), ValueError);
    EXPECT_THROW(call1("nonexistent_op", {a}), NotImplementedError);
    EXPECT_THROW(call1("leaky_relu", {a}, {{"slope", 0.1}}), ValueError);
    EXPECT_THROW(call1("clamp", {a}, {{"min", 2.0}, {"max", 1.0}}), ValueError);
    EXPECT_THROW(call1("gelu", {a}, {{"approximate", std::string("fast")}}), ValueError);
    EXPECT_THROW(call1("cast", {a}, {{"dtype", std::string("float128")}}), DTypeError);
    try {
      call1("ad", {a, a});
      FAIL() << "expected NotImplementedError";
    } catch (const NotImplementedError& e) {
      EXPECT_NE(std::string(e.what()).find("did you mean 'add'"), std::string::npos) << e.what();
    }
  }
}
