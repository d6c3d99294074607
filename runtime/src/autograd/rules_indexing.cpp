// Gradient rules of indexing, joining/splitting and padding ops, written with
// catalog ops and view methods only so they differentiate again (double
// grad). Each gather-like op's gradient is the matching scatter-like op into
// zeros and vice versa; joins slice their gradient, splits join theirs. Index
// inputs get no gradient. Creation and random ops carry no gradient at all.
// (embedding and embedding_backward live with the nn rules, rules_nn.cpp.)
#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

Tensor zeros_shaped(const Shape& shape, const Tensor& like) {
  return Tensor::zeros(shape, like.dtype(), like.device());
}

Attrs dim_attrs(const Attrs& a) { return {{"dim", a.get_int("dim")}}; }

// t zero-padded at the end of every dim up to `shape` (t fits inside it).
Tensor pad_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  std::vector<int64_t> pads;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t d = shape.size() - 1 - k;  // pads list the last dim first
    pads.push_back(0);
    pads.push_back(shape[d] - t.shape()[d]);
  }
  return op("pad", {t}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.0}});
}

// A 1-D empty tensor that concat skipped (its rank differs from the result's).
bool skipped_by_concat(const Tensor& t, const Tensor& out) { return t.dim() == 1 && t.numel() == 0 && out.dim() != 1; }

void register_gather_scatter() {
  // y = x[..index..]: the gradient scatters back, summing repeated indices.
  register_grad_rule("gather", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    if (!c.needs(0)) return {Tensor(), Tensor()};
    return {op("scatter_add", {zeros_shaped(c.inputs.meta(0).shape(), g), c.inputs[1], g}, dim_attrs(c.attrs)), Tensor()};
  });
  register_grad_rule("index_select", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    if (!c.needs(0)) return {Tensor(), Tensor()};
    return {op("index_add", {zeros_shaped(c.inputs.meta(0).shape(), g), c.inputs[1], g}, dim_attrs(c.attrs)), Tensor()};
  });
  // y = x + scatter(src): src entries beyond index's extent are unused (zero gradient).
  register_grad_rule("scatter_add", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    Tensor gsrc;
    if (c.needs(2)) gsrc = pad_to(op("gather", {g, c.inputs[1]}, dim_attrs(c.attrs)), c.inputs.meta(2).shape());
    return {c.needs(0) ? g : Tensor(), Tensor(), gsrc};
  });
  register_grad_rule("index_add", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    Tensor gsrc;
    if (c.needs(2)) {
      gsrc = op("index_select", {g, c.inputs[1]}, dim_attrs(c.attrs));
      double alpha = c.attrs.get_float("alpha");
      if (alpha != 1.0) gsrc = mul(gsrc, scalar_like(gsrc, alpha));
    }
    return {c.needs(0) ? g : Tensor(), Tensor(), gsrc};
  });
}

void register_join_split() {
  register_grad_rule("concat", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    const Tensor& out = c.outputs.meta(0);
    int64_t dim = normalize_axis(c.attrs.get_int("dim"), out.dim());
    std::vector<Tensor> grads(c.inputs.size());
    int64_t offset = 0;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Tensor& x = c.inputs.meta(i);
      if (skipped_by_concat(x, out)) continue;
      int64_t n = x.shape()[size_t(dim)];
      if (c.needs(i)) grads[i] = g.narrow(dim, offset, n);
      offset += n;
    }
    return grads;
  });
  register_grad_rule("stack", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    int64_t dim = normalize_axis(c.attrs.get_int("dim"), c.outputs.meta(0).dim());
    std::vector<Tensor> grads(c.inputs.size());
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.needs(i)) grads[i] = g.select(dim, int64_t(i));
    return grads;
  });
  // Outputs no gradient reached contribute zeros to their section.
  register_grad_rule("split", [](const GradContext& c) -> std::vector<Tensor> {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < c.outputs.size(); ++i) parts.push_back(c.grad_or_zeros(i));
    return {op("concat", parts, dim_attrs(c.attrs))};
  });
}

void register_pad() {
  register_grad_rule("pad", [](const GradContext& c) -> std::vector<Tensor> {
    const Shape& in = c.inputs.meta(0).shape();
    return {op("pad_backward", {c.grad_or_zeros(0)},
               {{"pads", c.attrs.get_ints("pads")},
                {"mode", c.attrs.get_string("mode")},
                {"input_shape", std::vector<int64_t>(in.begin(), in.end())}})};
  });
  // pad_backward is the transpose of pad's linear part, so its own transpose
  // is pad again, with value 0 (the constant does not depend on the input).
  register_grad_rule("pad_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("pad", {c.grad_or_zeros(0)},
               {{"pads", c.attrs.get_ints("pads")}, {"mode", c.attrs.get_string("mode")}, {"value", 0.0}})};
  });
}

}  // namespace

void register_indexing_grad_rules() {
  register_gather_scatter();
  register_join_split();
  register_pad();
}

}  // namespace oar::autograd
