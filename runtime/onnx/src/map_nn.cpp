// ONNX linear algebra and normalization: MatMul, Gemm, BatchNormalization
// (inference and training mode), LayerNormalization, InstanceNormalization,
// GroupNormalization (opsets 18 and 21),
// MeanVarianceNormalization, LRN, Dropout (inference only: a graph has no
// random state to match ONNX's) and the global pools, on oar's matmul,
// batch_norm and layer_norm or short compositions.
#include <algorithm>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

}  // namespace

// matmul for ONNX's operand ranks (1-D operands are promoted and the added
// dim removed again) and dtypes (integers computed in f64).
Value* matmul_mapping(NodeContext& c, Value* a, Value* b) {
  DType d = c.dtype(a);
  DType compute = is_floating(d) ? d : DType::f64;
  bool a_vec = c.rank(a) == 1, b_vec = c.rank(b) == 1;
  Value* a2 = a_vec ? c.unsqueeze(a, 0) : a;
  Value* b2 = b_vec ? c.unsqueeze(b, 1) : b;
  Value* y = c.op("matmul", {c.cast(a2, compute), c.cast(b2, compute)});
  Shape out = c.shape(y);
  if (b_vec) out.erase(out.end() - 1);
  if (a_vec) out.erase(out.end() - (b_vec ? 1 : 2));
  return c.cast(c.reshape(y, out), d);
}

namespace {

Value* transpose2d(NodeContext& c, Value* v) { return c.permute(v, {1, 0}); }

std::vector<Value*> gemm_op(NodeContext& c) {
  Value* a = c.required_input(0);
  Value* b = c.required_input(1);
  if (c.attr_int("transA", 0)) a = transpose2d(c, a);
  if (c.attr_int("transB", 0)) b = transpose2d(c, b);
  DType d = c.dtype(a);
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  Value* y = matmul_mapping(c, a, b);
  if (alpha != 1.0) y = c.mul(y, c.scalar(alpha, d));
  if (c.has_input(2) && beta != 0.0) {
    Value* bias = c.input(2);
    if (beta != 1.0) bias = c.mul(bias, c.scalar(beta, d));
    y = c.add(y, bias);
  }
  return {y};
}

// Per-channel [C] -> [C, 1, ..., 1] so it broadcasts over [N, C, spatial...].
Value* per_channel(NodeContext& c, Value* v, int64_t rank) {
  Shape s(size_t(rank - 1), 1);
  s[0] = c.shape(v)[0];
  return c.reshape(v, s);
}

std::vector<Value*> batch_norm_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* scale = c.required_input(1);
  Value* bias = c.required_input(2);
  Value* mean = c.required_input(3);
  Value* var = c.required_input(4);
  double eps = c.attr_float("epsilon", 1e-5);
  bool training = c.opset() >= 14 && c.attr_int("training_mode", 0) != 0;
  if (!training) {
    if (c.opset() < 14 && (c.output_used(1) || c.output_used(2) || c.output_used(3) || c.output_used(4)))
      c.unsupported("training outputs of opset < 14 BatchNormalization");
    return {c.ops("batch_norm", {x, scale, bias, mean, var}, {{"training", false}, {"eps", eps}})[0]};
  }
  // Batch statistics (biased variance) normalize; the running ones blend in.
  auto outs = c.ops("batch_norm", {x, scale, bias, mean, var}, {{"training", true}, {"eps", eps}});
  DType d = c.dtype(x);
  double momentum = c.attr_float("momentum", 0.9);
  Value* m = c.scalar(momentum, d);
  Value* one_minus = c.scalar(1.0 - momentum, d);
  Value* running_mean = c.add(c.mul(mean, m), c.mul(outs[1], one_minus));
  Value* running_var = c.add(c.mul(var, m), c.mul(outs[2], one_minus));
  return {outs[0], running_mean, running_var};
}

std::vector<Value*> layer_norm_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* scale = c.input(1);
  Value* bias = c.input(2);
  int64_t r = c.rank(x);
  int64_t a = c.axis(c.attr_int("axis", -1), r);
  double eps = c.attr_float("epsilon", 1e-5);
  Shape norm(c.shape(x).begin() + a, c.shape(x).end());
  // oar's layer_norm takes weight and bias of exactly the normalized shape;
  // ONNX allows any broadcastable shape, applied afterwards then.
  bool fused = (scale == nullptr || c.shape(scale) == norm) && (bias == nullptr || c.shape(bias) == norm);
  auto outs = c.ops("layer_norm", {x, fused ? scale : nullptr, fused ? bias : nullptr},
                    {{"normalized_ndim", r - a}, {"eps", eps}});
  Value* y = outs[0];
  if (!fused) {
    if (scale != nullptr) y = c.mul(y, scale);
    if (bias != nullptr) y = c.add(y, bias);
  }
  // ONNX's Mean and InvStdDev keep the normalized dims as 1s.
  Shape stat(c.shape(x).begin(), c.shape(x).begin() + a);
  stat.resize(size_t(r), 1);
  Value* mean = c.reshape(outs[1], stat);
  DType d = c.dtype(outs[2]);
  Value* inv_std = c.op("rsqrt", {c.add(outs[2], c.scalar(eps, d))});
  return {y, mean, c.reshape(inv_std, stat)};
}

std::vector<Value*> instance_norm_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  if (r < 3) c.invalid("input must be [N, C, spatial...]");
  std::vector<int64_t> dims;
  for (int64_t i = 2; i < r; ++i) dims.push_back(i);
  DType d = c.dtype(x);
  Value* mean = c.op("mean", {x}, {{"dims", dims}, {"keepdim", true}});
  Value* centered = c.sub(x, mean);
  Value* var = c.op("mean", {c.mul(centered, centered)}, {{"dims", dims}, {"keepdim", true}});
  Value* y = c.mul(centered, c.op("rsqrt", {c.add(var, c.scalar(c.attr_float("epsilon", 1e-5), d))}));
  y = c.mul(y, per_channel(c, c.required_input(1), r));
  return {c.add(y, per_channel(c, c.required_input(2), r))};
}

// GroupNormalization: statistics over each group of C / G channels and the
// spatial dims. Its scale and bias are per group in opset 18 and per channel
// from 21; statistics are computed in f32 for narrower floats (stash_type 1).
std::vector<Value*> group_norm_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  if (r < 3) c.invalid("input must be [N, C, spatial...]");
  const Shape& s = c.shape(x);
  int64_t groups = c.attr_int("num_groups"), channels = s[1];
  if (groups <= 0 || channels % groups) c.invalid(str("num_groups ", groups, " does not divide the ", channels, " channels"));
  if (c.attr_int("stash_type", 1) != 1) c.unsupported(str("stash_type ", c.attr_int("stash_type", 1), " (only 1, float32)"));
  DType d = c.dtype(x);
  DType compute = d == DType::f16 || d == DType::bf16 ? DType::f32 : d;
  Value* g = c.reshape(c.cast(x, compute), {s[0], groups, numel_of(s) / (s[0] * groups)});
  Attrs last{{"dims", std::vector<int64_t>{2}}, {"keepdim", true}};
  Value* centered = c.sub(g, c.op("mean", {g}, last));
  Value* var = c.op("mean", {c.mul(centered, centered)}, last);
  Value* y = c.mul(centered, c.op("rsqrt", {c.add(var, c.scalar(c.attr_float("epsilon", 1e-5), compute))}));
  y = c.cast(c.reshape(y, s), d);
  int64_t params = c.opset() < 21 ? groups : channels;
  auto channelwise = [&](Value* p, const char* what) {
    if (c.rank(p) != 1 || c.shape(p)[0] != params)
      c.invalid(str(what, " must be [", params, "] (per ", c.opset() < 21 ? "group" : "channel", " at this opset), got ",
                    shape_str(c.shape(p))));
    if (params != channels) p = c.reshape(c.expand(c.reshape(p, {groups, 1}), {groups, channels / groups}), {channels});
    return per_channel(c, p, r);
  };
  y = c.mul(y, channelwise(c.required_input(1), "scale"));
  return {c.add(y, channelwise(c.required_input(2), "bias"))};
}

std::vector<Value*> mvn_op(NodeContext& c) {
  // The ONNX function: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
  Value* x = c.required_input(0);
  std::vector<int64_t> axes;
  for (int64_t a : c.attr_ints("axes", {0, 2, 3})) axes.push_back(c.axis(a, c.rank(x)));
  Attrs attrs{{"dims", axes}, {"keepdim", true}};
  DType d = c.dtype(x);
  Value* mean = c.op("mean", {x}, attrs);
  Value* mean_sq = c.op("mean", {c.mul(x, x)}, attrs);
  Value* std = c.op("sqrt", {c.sub(mean_sq, c.mul(mean, mean))});
  return {c.div(c.sub(x, mean), c.add(std, c.scalar(1e-9, d)))};
}

std::vector<Value*> lrn_op(NodeContext& c) {
  // y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  int64_t size = c.attr_int("size");
  double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75), bias = c.attr_float("bias", 1.0);
  DType d = c.dtype(x);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  int64_t channels = c.shape(x)[1];
  std::vector<int64_t> pads(size_t(2 * (r - 1)), 0);  // oar order: last dim first; channel dim is 1
  pads[size_t(2 * (r - 2))] = before;
  pads[size_t(2 * (r - 2) + 1)] = after;
  Value* sq = c.op("pad", {c.mul(x, x)}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.0}});
  Value* window = nullptr;
  for (int64_t k = 0; k < size; ++k) {
    Value* part = c.slice(sq, 1, k, k + channels);
    window = window == nullptr ? part : c.add(window, part);
  }
  Value* denom = c.add(c.scalar(bias, d), c.mul(c.scalar(alpha / double(size), d), window));
  return {c.div(x, c.op("pow", {denom, c.scalar(beta, d)}))};
}

std::vector<Value*> dropout_op(NodeContext& c) {
  Value* x = c.required_input(0);
  bool training = false;
  double ratio = c.attr_float("ratio", 0.5);
  if (c.opset() >= 12) {
    if (c.has_input(1)) ratio = c.constant_input(1, "ratio").item();
    if (c.has_input(2)) training = c.constant_input(2, "training_mode").item() != 0;
  }
  if (training && ratio != 0.0)
    c.unsupported("training-mode Dropout draws random numbers that cannot match ONNX's generator");
  std::vector<Value*> outs{x};
  if (c.output_used(1)) outs.push_back(c.op("fill", {}, {{"shape", c.shape(x)}, {"value", 1.0}, {"dtype", DType::boolean}}));
  return outs;
}

// Det of [..., n, n] for n <= 3 by cofactor expansion; larger matrices
// would need a factorization oar has no op for.
std::vector<Value*> det_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  if (r < 2) c.invalid("input must be [..., n, n]");
  int64_t n = c.shape(x)[size_t(r - 1)];
  if (c.shape(x)[size_t(r - 2)] != n) c.invalid("matrices must be square");
  if (n > 3) c.unsupported(str("determinants of ", n, "x", n, " matrices (only up to 3x3)"));
  auto at = [&](int64_t i, int64_t j) {
    Value* row = c.op("select", {x}, {{"dim", r - 2}, {"index", i}});
    return c.op("select", {row}, {{"dim", r - 2}, {"index", j}});
  };
  if (n == 1) return {at(0, 0)};
  auto det2 = [&](int64_t a, int64_t b, int64_t cc, int64_t d) {  // rows a, b; cols cc, d
    return c.sub(c.mul(at(a, cc), at(b, d)), c.mul(at(a, d), at(b, cc)));
  };
  if (n == 2) return {det2(0, 1, 0, 1)};
  Value* t0 = c.mul(at(0, 0), det2(1, 2, 1, 2));
  Value* t1 = c.mul(at(0, 1), det2(1, 2, 0, 2));
  Value* t2 = c.mul(at(0, 2), det2(1, 2, 0, 1));
  return {c.add(c.sub(t0, t1), t2)};
}

Mapper global_pool(const char* reduce) {
  return [reduce](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    std::vector<int64_t> dims;
    for (int64_t i = 2; i < c.rank(x); ++i) dims.push_back(i);
    return {c.op(reduce, {x}, {{"dims", dims}, {"keepdim", true}})};
  };
}

// GlobalLpPool: (sum of |x|^p over the spatial dims)^(1/p).
std::vector<Value*> global_lp_pool_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const int64_t p = c.attr_int("p", 2);
  if (p <= 0) c.invalid(str("p must be positive, got ", p));
  const DType d = c.dtype(x);
  std::vector<int64_t> dims;
  for (int64_t i = 2; i < c.rank(x); ++i) dims.push_back(i);
  Value* ax = c.op("abs", {x});
  Value* sums = c.op("sum", {p == 1 ? ax : c.op("pow", {ax, c.scalar(double(p), d)})}, {{"dims", dims}, {"keepdim", true}});
  return {p == 1 ? sums : c.op("pow", {sums, c.scalar(1.0 / double(p), d)})};
}

}  // namespace

void register_nn_mappers(MapperTable& t) {
  t.add("MatMul", [](NodeContext& c) -> std::vector<Value*> {
    return {matmul_mapping(c, c.required_input(0), c.required_input(1))};
  });
  t.add("Gemm", gemm_op);
  t.add("BatchNormalization", batch_norm_op);
  t.add("LayerNormalization", layer_norm_op);
  t.add("InstanceNormalization", instance_norm_op);
  t.add("GroupNormalization", group_norm_op);
  t.add("MeanVarianceNormalization", mvn_op);
  t.add("LRN", lrn_op);
  t.add("Dropout", dropout_op);
  t.add("Det", det_op);
  t.add("GlobalAveragePool", global_pool("mean"));
  t.add("GlobalMaxPool", global_pool("max"));
  t.add("GlobalLpPool", global_lp_pool_op);
}

}  // namespace oar::onnx::detail
