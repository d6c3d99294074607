// One definition per op, for gradients: every op of the catalog declares how
// its outputs get a gradient (OpSchema::gradient), and these tests hold the
// declarations to the truth. An op declared differentiable by a rule must
// have one (a forgotten rule fails here, naming the op, not at backward());
// an op declared without one must really have none; fusions and views must
// really differentiate through their parts or Tensor methods.
#include <sstream>

#include "gradcheck.h"
#include "oar/autograd.h"
#include "oar/op_registry.h"

using namespace oar;
using namespace oar::testing;

namespace {

std::string join(const std::vector<std::string>& names) {
  std::ostringstream os;
  for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
  return os.str();
}

TEST(OpGradients, EveryOpDeclaredDifferentiableHasARule) {
  std::vector<std::string> missing;
  for (const auto& op : OpRegistry::instance().all())
    if (op->gradient == Gradient::kRule && autograd::find_grad_rule(*op) == nullptr) missing.push_back(op->name);
  EXPECT_TRUE(missing.empty()) << "ops declared differentiable (Gradient::kRule) without a gradient rule in "
                                  "runtime/src/autograd/ or a gradient column in unary_ops.def: "
                               << join(missing);
}

TEST(OpGradients, DeclaredAbsencesAreTrue) {
  std::vector<std::string> wrong;
  for (const auto& op : OpRegistry::instance().all()) {
    const std::string& n = op->name;
    bool has_rule = autograd::find_grad_rule(*op) != nullptr;
    switch (op->gradient) {
      case Gradient::kRule: break;
      case Gradient::kNone:
      case Gradient::kFirstOrderOnly:
        if (has_rule) wrong.push_back(n + " (declared without a rule, has one)");
        if (op->gradient == Gradient::kFirstOrderOnly && op->role != OpRole::kBackwardKernel)
          wrong.push_back(n + " (first-order-only but not a backward kernel)");
        break;
      case Gradient::kTensorMethod:
        if (has_rule || !op->view) wrong.push_back(n + " (gradient by Tensor method, but not a view or has a rule)");
        break;
      case Gradient::kDecomposition:
        if (has_rule || !op->decompose || (op->role != OpRole::kFusion && op->role != OpRole::kPublic))
          wrong.push_back(n + " (gradient by decomposition, but no decomposition, not a fusion or public composite, or has a rule)");
        break;
    }
  }
  EXPECT_TRUE(wrong.empty()) << join(wrong);
}

// Outputs of an op declared kNone carry no history even when inputs require grad.
TEST(OpGradients, NonDifferentiableOpsRecordNothing) {
  Tensor x = make_tensor({0.5, -1.5, 2.0}, {3}, DType::f32, Device::cpu());
  x.set_requires_grad(true);
  for (const char* name : {"gt", "argmax", "bernoulli"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(OpRegistry::instance().get(name).gradient, Gradient::kNone);
    Tensor in = std::string(name) == "bernoulli" ? call1("clamp", {x}, {{"min", 0.0}, {"max", 1.0}}) : x;
    std::vector<Tensor> args{in};
    if (std::string(name) == "gt") args.push_back(x);
    Tensor y = call1(name, args);
    EXPECT_FALSE(y.requires_grad());
  }
}

// Fusions appear eagerly too (oar.ops.linear_act, a graph run eagerly); with
// an input that requires grad they run as their parts, whose rules apply.
TEST(OpGradients, FusionsDifferentiateThroughTheirParts) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor(random_values(6, -1, 1, 3, DType::f64), {2, 3}, DType::f64, dev);
    Tensor w = make_tensor(random_values(12, -1, 1, 4, DType::f64), {4, 3}, DType::f64, dev);
    Tensor b = make_tensor(random_values(4, -1, 1, 5, DType::f64), {4}, DType::f64, dev);
    for (const char* act : {"relu", "sigmoid", "tanh"}) {
      std::string a = act;
      gradcheck([&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{call1("linear_act", in, {{"activation", a}})};
      }, {x, w, b}, {true, true, true}, "linear_act " + a);
    }
    Tensor img = make_tensor(random_values(2 * 2 * 4 * 4, -1, 1, 6, DType::f64), {2, 2, 4, 4}, DType::f64, dev);
    Tensor k = make_tensor(random_values(3 * 2 * 3 * 3, -1, 1, 7, DType::f64), {3, 2, 3, 3}, DType::f64, dev);
    gradcheck([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{call1("conv2d_act", {in[0], in[1], Tensor()}, {{"activation", std::string("tanh")}})};
    }, {img, k}, {true, true}, "conv2d_act tanh");
    // y = exp(x0 * x1), a program the fusion pass would write
    Tensor x1 = make_tensor(random_values(6, -1, 1, 8, DType::f64), {2, 3}, DType::f64, dev);
    gradcheck([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{
          call1("fused_elementwise", in, {{"program", std::string("mul 0x0p+0 0x0p+0 0 1;exp 0x0p+0 0x0p+0 2")}})};
    }, {x, x1}, {true, true}, "fused_elementwise");
  }
}

// Views have no rule: their Tensor method records the node.
TEST(OpGradients, ViewsRecordThroughTheirTensorMethod) {
  Tensor x = make_tensor(random_values(6, -1, 1, 9, DType::f64), {2, 3}, DType::f64, Device::cpu());
  gradcheck([](const std::vector<Tensor>& in) {
    Tensor p = call1("permute", {in[0]}, {{"dims", std::vector<int64_t>{1, 0}}});
    Tensor s = call1("slice", {p}, {{"dim", int64_t(0)}, {"start", int64_t(1)}, {"end", int64_t(3)}});
    return std::vector<Tensor>{call1("mul", {call1("reshape", {s}, {{"shape", std::vector<int64_t>{-1}}}), s.reshape({4})})};
  }, {x}, {true}, "permute, slice, reshape");
}

// to_device is no kernel either: Tensor::to records the copy back.
TEST(OpGradients, ToDeviceRecordsThroughTensorTo) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor(random_values(4, -1, 1, 13, DType::f64), {4}, DType::f64, Device::cpu());
    gradcheck([&](const std::vector<Tensor>& in) {
      Tensor there = call1("to_device", {in[0]}, {{"device", dev.str()}});
      EXPECT_EQ(there.device(), dev);
      return std::vector<Tensor>{call1("to_device", {call1("sin", {there})}, {{"device", std::string("cpu")}})};
    }, {x}, {true}, "to_device");
  }
}

// A backward kernel declared first-order-only (its rule calls it only with
// grad mode off) says so when a caller differentiates it directly.
TEST(OpGradients, FirstOrderOnlyKernelsRaiseNamingThemselves) {
  const OpSchema& op = OpRegistry::instance().get("layer_norm_backward");
  ASSERT_EQ(op.gradient, Gradient::kFirstOrderOnly);
  Tensor x = make_tensor(random_values(8, -1, 1, 10, DType::f32), {2, 4}, DType::f32, Device::cpu());
  std::vector<Tensor> fwd = call("layer_norm", {x, Tensor(), Tensor()});
  Tensor gy = make_tensor(random_values(8, -1, 1, 11, DType::f32), {2, 4}, DType::f32, Device::cpu());
  gy.set_requires_grad(true);
  Tensor gx = call("layer_norm_backward", {gy, x, Tensor(), fwd[1], fwd[2]})[0];
  ASSERT_TRUE(gx.requires_grad());
  try {
    call1("sum", {gx}).backward();
    FAIL() << "backward through layer_norm_backward did not raise";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("'layer_norm_backward' is a backward kernel"), std::string::npos) << e.what();
  }
}

// silu's and gelu's backward kernels are reached under create_graph, so they
// have rules: second derivatives against finite differences.
TEST(OpGradients, ActivationBackwardKernelsDifferentiate) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor(random_values(6, -3, 3, 12, DType::f64), {2, 3}, DType::f64, dev);
    for (const char* approximate : {"none", "tanh"}) {
      std::string a = approximate;
      gradgradcheck([&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{call1("gelu", {in[0]}, {{"approximate", a}})};
      }, {x}, {true}, "gelu " + a);
    }
    gradgradcheck([](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1("silu", {in[0]})}; }, {x},
                  {true}, "silu");
  }
}

}  // namespace
