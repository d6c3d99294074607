// Gradient rules of elementwise ops, written with ops (so they differentiate
// again). Broadcasting and dtype promotion are undone by the engine.
#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

void register_elementwise_grad_rules() {
  // d/dx psi^(n)(x) = psi^(n+1)(x): the order is an attribute, so these are by hand, not .def columns.
  register_grad_rule("trigamma", [](const GradContext& c) -> std::vector<Tensor> {
    return {mul(c.grad_or_zeros(0), op("polygamma", {c.inputs[0]}, {{"n", 2.0}}))};
  });
  register_grad_rule("polygamma", [](const GradContext& c) -> std::vector<Tensor> {
    return {mul(c.grad_or_zeros(0), op("polygamma", {c.inputs[0]}, {{"n", c.attrs.get_float("n") + 1}}))};
  });
  // The unary functor ops (exp, tanh, clamp, ...) take their rules from the
  // gradient column of unary_ops.def (rules_functor.cpp).
  register_grad_rule("copy", [](const GradContext& c) -> std::vector<Tensor> { return {c.grad_or_zeros(0)}; });
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
  register_grad_rule("atan2", [](const GradContext& c) -> std::vector<Tensor> {
    // d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    Tensor g = c.grad_or_zeros(0);
    const Tensor &a = c.inputs[0], &b = c.inputs[1];
    Tensor scale = div(g, add(mul(a, a), mul(b, b)));
    return {c.needs(0) ? mul(scale, b) : Tensor(), c.needs(1) ? neg(mul(scale, a)) : Tensor()};
  });
  register_grad_rule("hypot", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor scale = div(c.grad_or_zeros(0), c.outputs[0]);
    return {c.needs(0) ? mul(scale, c.inputs[0]) : Tensor(), c.needs(1) ? mul(scale, c.inputs[1]) : Tensor()};
  });
  register_grad_rule("copysign", [](const GradContext& c) -> std::vector<Tensor> {
    // y = +-a: the gradient keeps or flips g (0 at a == 0, as PyTorch); b gets none
    Tensor ga;
    if (c.needs(0)) {
      const Tensor& a = c.inputs[0];
      Tensor zero = op("eq", {a, scalar_like(a, 0.0)});
      Tensor flip = op("where", {zero, ones_like(a), a});
      ga = op("where", {zero, zeros_like(a), mul(c.grad_or_zeros(0), div(c.outputs[0], flip))});
    }
    return {ga, c.needs(1) ? zeros_like(c.inputs[1]) : Tensor()};
  });
  register_grad_rule("logaddexp", [](const GradContext& c) -> std::vector<Tensor> {
    // d/da = e^(a - y), d/db = e^(b - y)
    Tensor g = c.grad_or_zeros(0);
    const Tensor& y = c.outputs[0];
    return {c.needs(0) ? mul(g, op("exp", {sub(c.inputs[0], y)})) : Tensor(),
            c.needs(1) ? mul(g, op("exp", {sub(c.inputs[1], y)})) : Tensor()};
  });
  register_grad_rule("where", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    Tensor z = zeros_like(g);
    return {Tensor(), c.needs(1) ? op("where", {c.inputs[0], g, z}) : Tensor(),
            c.needs(2) ? op("where", {c.inputs[0], z, g}) : Tensor()};
  });
  // backward helpers are differentiable too (second derivatives of activations)
  register_grad_rule("relu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // the mask's derivative is zero, but connected: torch gives zeros, not None, to what only feeds it
    return {c.needs(0) ? op("relu_backward", {c.grad_or_zeros(0), c.inputs[1]}) : Tensor(),
            c.needs(1) ? zeros_like(c.inputs[1]) : Tensor()};
  });
  register_grad_rule("leaky_relu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {c.needs(0) ? op("leaky_relu_backward", {c.grad_or_zeros(0), c.inputs[1]},
                            {{"negative_slope", c.attrs.get_float("negative_slope")}})
                       : Tensor(),
            c.needs(1) ? zeros_like(c.inputs[1]) : Tensor()};
  });
  register_grad_rule("sigmoid_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // out = g * y * (1 - y): d/dg = y(1-y), d/dy = g (1 - 2y)
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &g = c.inputs[0], &y = c.inputs[1];
    Tensor one = scalar_like(y, 1.0);
    return {c.needs(0) ? mul(gg, mul(y, sub(one, y))) : Tensor(),
            c.needs(1) ? mul(gg, mul(g, sub(one, mul(scalar_like(y, 2.0), y)))) : Tensor()};
  });
  register_grad_rule("silu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // out = g * s (1 + x (1 - s)), s = sigmoid(x): d/dg = silu'(x), d/dx = g s (1 - s) (2 + x (1 - 2 s))
    Tensor gg = c.grad_or_zeros(0);
    const Tensor& x = c.inputs[1];
    Tensor gx;
    if (c.needs(1)) {
      Tensor s = op("sigmoid", {x}), one = scalar_like(x, 1.0);
      Tensor second = mul(mul(s, sub(one, s)), add(scalar_like(x, 2.0), mul(x, sub(one, mul(scalar_like(x, 2.0), s)))));
      gx = mul(gg, mul(c.inputs[0], second));
    }
    return {c.needs(0) ? op("silu_backward", {gg, x}) : Tensor(), gx};
  });
  register_grad_rule("gelu_backward", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor gg = c.grad_or_zeros(0);
    const Tensor& x = c.inputs[1];
    const std::string& approximate = c.attrs.get_string("approximate");
    Tensor gx;
    if (c.needs(1)) {
      Tensor one = scalar_like(x, 1.0), x2 = mul(x, x), second;
      if (approximate == "tanh") {
        // u = k (x + 0.044715 x^3), t = tanh(u): gelu'' = (1 - t^2) (u' - x t u'^2 + x u'' / 2)
        const double k = 0.7978845608028654;
        Tensor u = mul(scalar_like(x, k), add(x, mul(scalar_like(x, 0.044715), mul(x2, x))));
        Tensor t = op("tanh", {u});
        Tensor du = mul(scalar_like(x, k), add(one, mul(scalar_like(x, 3 * 0.044715), x2)));
        Tensor half_x_ddu = mul(scalar_like(x, 3 * 0.044715 * k), x2);  // x u'' / 2 = 3 k 0.044715 x^2
        second = mul(sub(one, mul(t, t)), add(sub(du, mul(mul(x, t), mul(du, du))), half_x_ddu));
      } else {
        // gelu'' = phi(x) (2 - x^2), phi the standard normal density
        Tensor phi = mul(scalar_like(x, 0.3989422804014327), op("exp", {mul(scalar_like(x, -0.5), x2)}));
        second = mul(phi, sub(scalar_like(x, 2.0), x2));
      }
      gx = mul(gg, mul(c.inputs[0], second));
    }
    return {c.needs(0) ? op("gelu_backward", {gg, x}, {{"approximate", approximate}}) : Tensor(), gx};
  });
  register_grad_rule("tanh_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // out = g (1 - y^2): d/dg = 1 - y^2, d/dy = -2 g y
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &g = c.inputs[0], &y = c.inputs[1];
    return {c.needs(0) ? mul(gg, sub(scalar_like(y, 1.0), mul(y, y))) : Tensor(),
            c.needs(1) ? mul(gg, mul(scalar_like(y, -2.0), mul(g, y))) : Tensor()};
  });
}

}  // namespace oar::autograd
