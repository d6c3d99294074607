// Gradient rules of elementwise ops, written with ops (so they differentiate
// again). Broadcasting and dtype promotion are undone by the engine.
#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

// d/dx for unary ops whose derivative is a function of x and/or y.
// Which saved values a unary rule reads; the others it may use for their
// dtype or shape only, so an in-place write to them is no error.
enum class Reads { kInput, kOutput, kNeither };

void unary(const char* name, Reads reads,
           std::function<Tensor(const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&)> f) {
  register_grad_rule(name, [f, reads](const GradContext& c) -> std::vector<Tensor> {
    const Tensor& x = reads == Reads::kInput ? c.inputs[0] : c.inputs.meta(0);
    const Tensor& y = reads == Reads::kOutput ? c.outputs[0] : c.outputs.meta(0);
    return {f(c.grad_or_zeros(0), x, y, c.attrs)};
  });
}

}  // namespace

void register_elementwise_grad_rules() {
  // Promotion happened inside dispatch: compute in the output's dtype.
  auto xf = [](const Tensor& x, const Tensor& y) { return x.dtype() == y.dtype() ? x : x.to(y.dtype()); };
  unary("exp", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) { return mul(g, y); });
  unary("log", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) { return div(g, xf(x, y)); });
  unary("sqrt", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) {
    return div(g, mul(scalar_like(y, 2.0), y));
  });
  unary("rsqrt", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) {
    return mul(g, mul(scalar_like(y, -0.5), mul(y, mul(y, y))));
  });
  unary("sin", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    return mul(g, op("cos", {xf(x, y)}));
  });
  unary("cos", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    return neg(mul(g, op("sin", {xf(x, y)})));
  });
  unary("tanh", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) {
    return op("tanh_backward", {g, y});
  });
  unary("sigmoid", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) {
    return op("sigmoid_backward", {g, y});
  });
  unary("silu", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    return op("silu_backward", {g, xf(x, y)});
  });
  unary("gelu", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs& a) {
    return op("gelu_backward", {g, xf(x, y)}, {{"approximate", a.get_string("approximate")}});
  });
  unary("leaky_relu", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs& a) {
    return op("leaky_relu_backward", {g, xf(x, y)}, {{"negative_slope", a.get_float("negative_slope")}});
  });
  unary("relu", Reads::kInput, [](const Tensor& g, const Tensor& x, const Tensor&, const Attrs&) {
    return op("relu_backward", {g, x});
  });
  unary("square", Reads::kInput, [](const Tensor& g, const Tensor& x, const Tensor&, const Attrs&) {
    return mul(g, mul(scalar_like(g, 2.0), x));
  });
  unary("neg", Reads::kNeither, [](const Tensor& g, const Tensor&, const Tensor&, const Attrs&) { return neg(g); });
  unary("abs", Reads::kInput, [](const Tensor& g, const Tensor& x, const Tensor&, const Attrs&) {
    Tensor zero = scalar_like(x, 0.0);
    Tensor sign = sub(as_dtype_of(op("gt", {x, zero}), g), as_dtype_of(op("lt", {x, zero}), g));
    return mul(g, sign);
  });
  unary("clamp", Reads::kInput, [](const Tensor& g, const Tensor& x, const Tensor&, const Attrs& a) {
    Tensor inside = op("logical_and", {op("ge", {x, scalar_like(x, a.get_float("min"))}),
                                        op("le", {x, scalar_like(x, a.get_float("max"))})});
    return op("where", {inside, g, zeros_like(g)});
  });
  unary("copy", Reads::kNeither, [](const Tensor& g, const Tensor&, const Tensor&, const Attrs&) { return g; });
  // Piecewise constant: zero gradient almost everywhere, as PyTorch.
  for (const char* name : {"floor", "ceil", "round", "sign"})
    unary(name, Reads::kNeither, [](const Tensor& g, const Tensor&, const Tensor&, const Attrs&) { return zeros_like(g); });
  unary("erf", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);  // 2 / sqrt(pi) * e^(-x^2)
    return mul(g, mul(scalar_like(y, 1.1283791670955126), op("exp", {neg(mul(xx, xx))})));
  });
  unary("tan", Reads::kOutput, [](const Tensor& g, const Tensor&, const Tensor& y, const Attrs&) {
    return mul(g, add(scalar_like(y, 1.0), mul(y, y)));
  });
  unary("asin", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return mul(g, op("rsqrt", {sub(scalar_like(y, 1.0), mul(xx, xx))}));
  });
  unary("acos", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return neg(mul(g, op("rsqrt", {sub(scalar_like(y, 1.0), mul(xx, xx))})));
  });
  unary("atan", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return div(g, add(scalar_like(y, 1.0), mul(xx, xx)));
  });
  unary("sinh", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    return mul(g, op("cosh", {xf(x, y)}));
  });
  unary("cosh", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    return mul(g, op("sinh", {xf(x, y)}));
  });
  unary("asinh", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return mul(g, op("rsqrt", {add(mul(xx, xx), scalar_like(y, 1.0))}));
  });
  unary("acosh", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return mul(g, op("rsqrt", {sub(mul(xx, xx), scalar_like(y, 1.0))}));
  });
  unary("atanh", Reads::kInput, [xf](const Tensor& g, const Tensor& x, const Tensor& y, const Attrs&) {
    Tensor xx = xf(x, y);
    return div(g, sub(scalar_like(y, 1.0), mul(xx, xx)));
  });
  // cast: the engine casts the gradient back to the input's dtype
  register_grad_rule("cast", [](const GradContext& c) -> std::vector<Tensor> {
    if (!is_floating(c.inputs.meta(0).dtype())) return {Tensor()};
    return {c.grad_or_zeros(0)};
  });

  register_grad_rule("add", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    return {g, g};
  });
  register_grad_rule("sub", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    return {g, c.needs(1) ? neg(g) : Tensor()};
  });
  register_grad_rule("mul", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    return {c.needs(0) ? mul(g, c.inputs[1]) : Tensor(), c.needs(1) ? mul(g, c.inputs[0]) : Tensor()};
  });
  register_grad_rule("div", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    const Tensor& b = c.inputs[1];
    return {c.needs(0) ? div(g, b) : Tensor(), c.needs(1) ? neg(div(mul(g, c.outputs[0]), b)) : Tensor()};
  });
  register_grad_rule("pow", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    // Saved values are read only for the gradients asked for (in-place rules).
    const Tensor &a = c.inputs[0], &b = c.inputs[1];
    Tensor ga, gb;
    // d/da = b * a^(b-1); d/db = y * log(a) (0 where a == 0, as PyTorch)
    if (c.needs(0)) ga = mul(g, mul(b, op("pow", {a, sub(b, scalar_like(b, 1.0))})));
    if (c.needs(1)) {
      const Tensor& y = c.outputs[0];
      Tensor safe = op("where", {op("eq", {a, scalar_like(a, 0.0)}), ones_like(y), a});
      gb = mul(g, mul(y, op("log", {safe})));
    }
    return {ga, gb};
  });
  for (const char* name : {"maximum", "minimum"})
    register_grad_rule(name, [name](const GradContext& c) -> std::vector<Tensor> {
      Tensor g = c.grad_or_zeros(0);
      const Tensor &a = c.inputs[0], &b = c.inputs[1];
      // ties split the gradient evenly, as PyTorch does
      Tensor a_wins = as_dtype_of(op(std::string(name) == "maximum" ? "gt" : "lt", {a, b}), g);
      Tensor tie = as_dtype_of(op("eq", {a, b}), g);
      Tensor wa = add(a_wins, mul(tie, scalar_like(g, 0.5)));
      Tensor wb = sub(ones_like(wa), wa);
      return {c.needs(0) ? mul(g, wa) : Tensor(), c.needs(1) ? mul(g, wb) : Tensor()};
    });
  register_grad_rule("fmod", [](const GradContext& c) -> std::vector<Tensor> {
    // fmod(a, b) = a - b * trunc(a / b): d/da = 1, d/db = -trunc(a / b)
    Tensor g = c.grad_or_zeros(0);
    Tensor gb;
    if (c.needs(1)) {
      Tensor q = div(c.inputs[0], c.inputs[1]);
      Tensor trunc = op("where", {op("lt", {q, scalar_like(q, 0.0)}), op("ceil", {q}), op("floor", {q})});
      gb = neg(mul(g, trunc));
    }
    return {g, gb};
  });
  register_grad_rule("where", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    Tensor z = zeros_like(g);
    return {Tensor(), c.needs(1) ? op("where", {c.inputs[0], g, z}) : Tensor(),
            c.needs(2) ? op("where", {c.inputs[0], z, g}) : Tensor()};
  });
  // backward helpers are differentiable too (second derivatives of activations)
  register_grad_rule("relu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {c.needs(0) ? op("relu_backward", {c.grad_or_zeros(0), c.inputs[1]}) : Tensor(), Tensor()};
  });
  register_grad_rule("leaky_relu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {c.needs(0) ? op("leaky_relu_backward", {c.grad_or_zeros(0), c.inputs[1]},
                            {{"negative_slope", c.attrs.get_float("negative_slope")}})
                       : Tensor(),
            Tensor()};
  });
  register_grad_rule("sigmoid_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // out = g * y * (1 - y): d/dg = y(1-y), d/dy = g (1 - 2y)
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &g = c.inputs[0], &y = c.inputs[1];
    Tensor one = scalar_like(y, 1.0);
    return {c.needs(0) ? mul(gg, mul(y, sub(one, y))) : Tensor(),
            c.needs(1) ? mul(gg, mul(g, sub(one, mul(scalar_like(y, 2.0), y)))) : Tensor()};
  });
  register_grad_rule("tanh_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // out = g (1 - y^2): d/dg = 1 - y^2, d/dy = -2 g y
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &g = c.inputs[0], &y = c.inputs[1];
    return {c.needs(0) ? mul(gg, sub(scalar_like(y, 1.0), mul(y, y))) : Tensor(),
            c.needs(1) ? mul(gg, mul(scalar_like(y, -2.0), mul(g, y))) : Tensor()};
  });
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                           "logical_not"})
    register_non_differentiable(name);
}

}  // namespace oar::autograd
