// Gradient rules of the scan family (cumsum, cumprod, cummax/cummin,
// logcumsumexp) and sort, written with catalog ops so they differentiate
// again where their parts do. Positional outputs (indices) take no gradient.
#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

// g scattered back to the positions `indices` name along dim (summing repeats):
// the gradient of every op whose values are picked from x (sort, cummax).
Tensor scatter_back(const GradContext& c, const Tensor& indices) {
  Tensor g = c.grad_or_zeros(0);
  Tensor zeros = Tensor::zeros(c.inputs.meta(0).shape(), g.dtype(), g.device());
  if (g.dim() == 0) return g;
  return op("scatter_add", {zeros, indices, g}, {{"dim", c.attrs.get_int("dim")}});
}

}  // namespace

void register_scan_grad_rules() {
  // The gradient of a running sum is the running sum of g from the other end.
  register_grad_rule("cumsum", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("cumsum", {c.grad_or_zeros(0)},
               {{"dim", c.attrs.get_int("dim")}, {"reverse", !c.attrs.get_bool("reverse")}})};
  });
  register_grad_rule("cumprod", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("cumprod_backward", {c.grad_or_zeros(0), c.inputs[0]}, {{"dim", c.attrs.get_int("dim")}})};
  });
  register_grad_rule("logcumsumexp", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("logcumsumexp_backward", {c.grad_or_zeros(0), c.inputs[0], c.outputs[0]},
               {{"dim", c.attrs.get_int("dim")}})};
  });
  for (const char* name : {"cummax", "cummin", "sort"})
    register_grad_rule(name, [](const GradContext& c) -> std::vector<Tensor> {
      return {scatter_back(c, c.outputs[1])};
    });
}

}  // namespace oar::autograd
