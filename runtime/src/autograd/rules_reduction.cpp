// Gradient rules of reductions (sum, mean, prod, var, max, min), written with
// catalog ops and view methods only, so the backward pass records a graph of
// its own and second derivatives work. Each rule first brings the output
// gradient back to the input's shape: the reduced axes are re-inserted as size
// 1 (a reshape, when keepdim was false) and the result is expanded.
// arg-reductions return indices and carry no gradient.
#include <algorithm>

#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

// The axes a reduction reduced: its normalized `dims`, or all axes when empty.
std::vector<int64_t> reduced_axes(const Tensor& x, const Attrs& a) {
  std::vector<int64_t> axes;
  const auto& dims = a.get_ints("dims");
  if (x.dim() == 0) return axes;  // a 0-d reduction is the identity
  for (int64_t d : dims) axes.push_back(normalize_axis(d, x.dim()));
  if (dims.empty())
    for (int64_t i = 0; i < x.dim(); ++i) axes.push_back(i);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// x's shape with the reduced axes set to 1 (the keepdim output shape).
Shape keepdim_shape(const Tensor& x, const std::vector<int64_t>& axes) {
  Shape s = x.shape();
  for (int64_t a : axes) s[size_t(a)] = 1;
  return s;
}

// A reduction output (or its gradient) viewed with the reduced axes kept.
Tensor keep(const Tensor& t, const Tensor& x, const Attrs& a) {
  Shape ks = keepdim_shape(x, reduced_axes(x, a));
  return t.shape() == ks ? t : t.reshape(ks);
}

// A reduction output (or its gradient) broadcast back over x's shape.
Tensor expand_back(const Tensor& t, const Tensor& x, const Attrs& a) { return keep(t, x, a).expand(x.shape()); }

// Number of elements each output element was reduced over.
int64_t group_size(const Tensor& x, const Attrs& a) {
  int64_t n = 1;
  for (int64_t ax : reduced_axes(x, a)) n *= x.shape()[size_t(ax)];
  return n;
}

// sum over the same axes as the reduction, keeping them (for per-group counts).
Tensor sum_keep(const Tensor& t, const Tensor& x, const Attrs& a) {
  return op("sum", {t}, {{"dims", reduced_axes(x, a)}, {"keepdim", true}});
}

std::vector<Tensor> sum_rule(const GradContext& c) { return {expand_back(c.grad_or_zeros(0), c.inputs.meta(0), c.attrs)}; }

std::vector<Tensor> mean_rule(const GradContext& c) {
  Tensor g = c.grad_or_zeros(0);
  return {div(expand_back(g, c.inputs.meta(0), c.attrs), scalar_like(g, double(group_size(c.inputs.meta(0), c.attrs))))};
}

// d prod / d x_i = product of the other elements of x_i's group. Away from
// zeros that is y / x_i; at a zero it is the product of the group's nonzero
// elements when that zero is the group's only one, else 0. Dividing by x with
// its zeros replaced by 1 keeps NaNs out of the branch where() discards (their
// gradient would otherwise be 0 * NaN). Second derivatives are exact where a
// group holds at most one zero (the lone-zero branch is constant otherwise).
std::vector<Tensor> prod_rule(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Attrs& a = c.attrs;
  Tensor g = expand_back(c.grad_or_zeros(0), x, a);
  Tensor y = expand_back(c.outputs[0], x, a);
  Tensor is_zero = op("eq", {x, scalar_like(x, 0.0)});
  Tensor x_safe = op("where", {is_zero, ones_like(x), x});
  Tensor others_nonzero = div(y, x_safe);
  Tensor zeros_in_group = sum_keep(as_dtype_of(is_zero, x), x, a);
  Tensor nonzero_prod = op("prod", {x_safe}, {{"dims", reduced_axes(x, a)}, {"keepdim", true}});
  Tensor lone_zero = op("eq", {zeros_in_group, scalar_like(x, 1.0)});
  Tensor at_zero = op("where", {lone_zero, nonzero_prod, zeros_like(nonzero_prod)});
  Tensor others = op("where", {is_zero, at_zero.expand(x.shape()), others_nonzero});
  return {mul(g, others)};
}

// var = sum((x - mean)^2) / (N - correction), so d var / d x = 2 (x - mean) / (N - correction).
std::vector<Tensor> var_rule(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Attrs& a = c.attrs;
  Tensor g = expand_back(c.grad_or_zeros(0), x, a);
  Tensor mu = op("mean", {x}, {{"dims", reduced_axes(x, a)}, {"keepdim", true}});
  double denom = double(group_size(x, a) - a.get_int("correction"));
  Tensor scale = scalar_like(x, 2.0 / denom);
  return {mul(g, mul(sub(x, mu), scale))};
}

// max / min: the gradient goes to the elements equal to the result, split
// evenly among ties (as PyTorch's amax / amin).
std::vector<Tensor> extremum_rule(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Attrs& a = c.attrs;
  Tensor g = keep(c.grad_or_zeros(0), x, a);
  Tensor hit = as_dtype_of(op("eq", {x, keep(c.outputs[0], x, a).expand(x.shape())}), g);
  Tensor share = div(g, sum_keep(hit, x, a));
  return {mul(share.expand(x.shape()), hit)};
}

}  // namespace

void register_reduction_grad_rules() {
  register_grad_rule("sum", sum_rule);
  register_grad_rule("mean", mean_rule);
  register_grad_rule("prod", prod_rule);
  register_grad_rule("var", var_rule);
  register_grad_rule("max", extremum_rule);
  register_grad_rule("min", extremum_rule);
}

}  // namespace oar::autograd
