// Elementwise recipes: arithmetic with NumPy broadcasting (oar's rule too),
// activations and clamp. Inputs arrive converted to the output's type, which
// is how oar promotes ("integers computed as f32" included).
#include <openvino/op/add.hpp>
#include <openvino/op/divide.hpp>
#include <openvino/op/exp.hpp>
#include <openvino/op/gelu.hpp>
#include <openvino/op/log.hpp>
#include <openvino/op/maximum.hpp>
#include <openvino/op/minimum.hpp>
#include <openvino/op/multiply.hpp>
#include <openvino/op/prelu.hpp>
#include <openvino/op/relu.hpp>
#include <openvino/op/sigmoid.hpp>
#include <openvino/op/sqrt.hpp>
#include <openvino/op/subtract.hpp>
#include <openvino/op/swish.hpp>
#include <openvino/op/tanh.hpp>

#include <cmath>
#include <limits>

#include "model_builder.h"

namespace oar_openvino {

namespace {

template <class Node>
OpBuilder binary() {
  return [](const OpCall& c) -> std::vector<Value> { return {std::make_shared<Node>(c.in(0), c.in(1))}; };
}

template <class Node>
OpBuilder unary() {
  return [](const OpCall& c) -> std::vector<Value> { return {std::make_shared<Node>(c.in(0))}; };
}

// Clamp bounds for an integer tensor: x >= lo  <=>  x >= ceil(lo) (and floor for
// the upper bound), kept inside the type's range.
double integer_bound(double bound, bool lower, ov::element::Type type) {
  const double limit = type == ov::element::i32 ? 2147483647.0 : 9.2e18;
  const double b = lower ? std::ceil(bound) : std::floor(bound);
  return b < -limit ? -limit : (b > limit ? limit : b);
}

std::vector<Value> clamp(const OpCall& c) {
  const double inf = std::numeric_limits<double>::infinity();
  const double lo = oar_adapter_sdk::attr_float(c.op, "min", -inf);
  const double hi = oar_adapter_sdk::attr_float(c.op, "max", inf);
  const ov::element::Type t = c.type();
  Value y = c.in(0);
  // min(max(x, min), max) as oar computes it (so min > max gives max).
  if (lo > -inf)
    y = std::make_shared<ov::op::v1::Maximum>(y, scalar(t, t.is_integral() ? integer_bound(lo, true, t) : lo));
  if (hi < inf)
    y = std::make_shared<ov::op::v1::Minimum>(y, scalar(t, t.is_integral() ? integer_bound(hi, false, t) : hi));
  return {y};
}

std::vector<Value> relu(const OpCall& c) {
  if (c.type().is_integral()) return {std::make_shared<ov::op::v1::Maximum>(c.in(0), scalar(c.type(), 0))};
  return {std::make_shared<ov::op::v0::Relu>(c.in(0))};
}

std::vector<Value> gelu(const OpCall& c) {
  const std::string approximate = oar_adapter_sdk::attr_string(c.op, "approximate", "none");
  const auto mode = approximate == "tanh" ? ov::op::GeluApproximationMode::TANH : ov::op::GeluApproximationMode::ERF;
  return {std::make_shared<ov::op::v7::Gelu>(c.in(0), mode)};
}

std::vector<Value> leaky_relu(const OpCall& c) {
  const double slope = oar_adapter_sdk::attr_float(c.op, "negative_slope", 0.01);
  return {std::make_shared<ov::op::v0::PRelu>(c.in(0), scalar(c.type(), slope))};
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t["add"] = binary<ov::op::v1::Add>();
  t["sub"] = binary<ov::op::v1::Subtract>();
  t["mul"] = binary<ov::op::v1::Multiply>();
  t["div"] = binary<ov::op::v1::Divide>();
  t["relu"] = relu;
  t["sigmoid"] = unary<ov::op::v0::Sigmoid>();
  t["tanh"] = unary<ov::op::v0::Tanh>();
  t["exp"] = unary<ov::op::v0::Exp>();
  t["log"] = unary<ov::op::v0::Log>();
  t["sqrt"] = unary<ov::op::v0::Sqrt>();
  t["silu"] = unary<ov::op::v4::Swish>();  // Swish with beta 1 is x * sigmoid(x)
  t["gelu"] = gelu;
  t["leaky_relu"] = leaky_relu;
  t["clamp"] = clamp;
}

}  // namespace oar_openvino
