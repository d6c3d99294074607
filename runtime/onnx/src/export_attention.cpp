// Export of the fused attention kernel (attention_fused) as the ONNX graph
// PyTorch's exporter writes for scaled_dot_product_attention: MatMul with
// the transposed key, Mul by the scale, the additive mask and (causal) a
// constant upper-triangle -inf mask, Softmax over the keys, MatMul with the
// value; lse, when something reads it, is ReduceLogSumExp of the scores.
#include <limits>

#include "exporter.h"

namespace oar::onnx::detail {

namespace {

using Ctx = ExportContext;

void attention_fused_op(Ctx& c) {
  const Shape& q = c.in_shape(0);
  const Shape& k = c.in_shape(1);
  const DType dt = c.in_dtype(0);
  const int64_t rank = int64_t(q.size()), L = q[q.size() - 2], S = k[k.size() - 2];
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 2; ++i) perm.push_back(i);
  perm.push_back(rank - 1);
  perm.push_back(rank - 2);
  const std::string kT = c.b.fresh("key_t");
  set_attr(c.b.node("Transpose", {c.in[1]}, {kT}), "perm", perm);
  std::string scores =
      c.b.op("Mul", {c.b.op("MatMul", {c.in[0], kT}), c.b.scalar(c.node.attrs.get_float("scale"), dt)});
  if (!c.in[3].empty()) scores = c.b.op("Add", {scores, c.in[3]});
  if (c.node.attrs.get_bool("causal")) {
    std::vector<double> mask(size_t(L * S), 0.0);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = i + 1; j < S; ++j) mask[size_t(i * S + j)] = -std::numeric_limits<double>::infinity();
    Tensor m = Tensor::from_vector(mask, {L, S}, Device::cpu());
    scores = c.b.op("Add", {scores, c.b.initializer(dt == DType::f64 ? m : m.to(dt), "causal_mask")});
  }
  const std::string probs = c.b.fresh("probs");
  set_attr(c.b.node("Softmax", {scores}, {probs}), "axis", int64_t(-1));
  c.b.node("MatMul", {probs, c.in[2]}, {c.out[0]});
  if (c.output_used(1)) reduce(c, "ReduceLogSumExp", scores, {rank - 1}, false, c.out[1]);
}

}  // namespace

void add_attention_emitters(std::unordered_map<std::string, Emitter>& e) { e["attention_fused"] = attention_fused_op; }

}  // namespace oar::onnx::detail
