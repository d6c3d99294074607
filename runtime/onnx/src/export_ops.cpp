// oar op -> ONNX nodes, one emitter per op (opset 13..22 forms: Reduce axes
// and Split num_outputs from 18, Gelu from 20). Most ops
// have a direct ONNX counterpart; the rest are written with a few ONNX ops
// (square, rsqrt, silu, gelu, var, stack, linear). Ops with no faithful ONNX
// form (random ops, dropout's mask, backward helpers) have no emitter and
// make export_model fail with a NotImplementedError naming them.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "exporter.h"
#include "oar/error.h"
#include "oar/onnx/onnx.h"

namespace oar::onnx::detail {

// ReduceX: axes are an input from opset 18 (ReduceSum from 13), an attribute
// before. No axes reduces everything in both forms.
std::string reduce(ExportContext& c, const char* onnx_op, const std::string& x, const std::vector<int64_t>& dims,
                   bool keepdim, const std::string& out) {
  std::string y = out.empty() ? c.b.fresh(onnx_op) : out;
  bool axes_input = std::string(onnx_op) == "ReduceSum" || c.b.opset() >= 18;
  std::vector<std::string> in{x};
  if (axes_input && !dims.empty()) in.push_back(c.b.ints(dims));
  auto& n = c.b.node(onnx_op, in, {y});
  if (!axes_input && !dims.empty()) set_attr(n, "axes", dims);
  set_attr(n, "keepdims", int64_t(keepdim));
  return y;
}

namespace {

using Ctx = ExportContext;

Emitter same(const char* onnx_op) {
  return [onnx_op](Ctx& c) { c.b.node(onnx_op, c.in, {c.out[0]}); };
}

// Inputs that oar reads as "!= 0" become bools first.
std::string as_bool(Ctx& c, size_t i) { return c.b.cast(c.in[i], c.in_dtype(i), DType::boolean); }

Emitter logical(const char* onnx_op) {
  return [onnx_op](Ctx& c) { c.b.node(onnx_op, {as_bool(c, 0), as_bool(c, 1)}, {c.out[0]}); };
}

std::vector<int64_t> all_axes(int64_t rank) {
  std::vector<int64_t> a;
  for (int64_t i = 0; i < rank; ++i) a.push_back(i);
  return a;
}

Emitter reduction(const char* onnx_op, bool widen_integers) {
  return [onnx_op, widen_integers](Ctx& c) {
    std::string x = c.in[0];
    // oar's sum and prod of integers and bools are i64; ONNX keeps the input type
    if (widen_integers && !is_floating(c.in_dtype(0))) x = c.b.cast(x, c.in_dtype(0), DType::i64);
    reduce(c, onnx_op, x, c.node.attrs.get_ints("dims"), c.node.attrs.get_bool("keepdim"), c.out[0]);
  };
}

void var_op(Ctx& c) {
  const auto& dims = c.node.attrs.get_ints("dims");
  bool keep = c.node.attrs.get_bool("keepdim");
  int64_t correction = c.node.attrs.get_int("correction");
  const Shape& s = c.in_shape(0);
  int64_t n = 1;
  for (int64_t d : dims.empty() ? all_axes(int64_t(s.size())) : dims) n *= s[size_t(d < 0 ? d + int64_t(s.size()) : d)];
  std::string mean = reduce(c, "ReduceMean", c.in[0], dims, true);
  std::string dev = c.b.op("Sub", {c.in[0], mean});
  std::string total = reduce(c, "ReduceSum", c.b.op("Mul", {dev, dev}), dims, keep);
  c.b.node("Div", {total, c.b.scalar(double(n - correction), c.out_meta(0).dtype)}, {c.out[0]});
}

// sort and topk as TopK: ONNX orders equal elements by index, which is the
// stable order oar's sort keeps, ascending or descending. A 0-D input is a
// one-element sort: a copy and index 0.
void top_k_export(Ctx& c, int64_t k, bool largest) {
  const Shape& shape = c.out_meta(0).shape;
  if (shape.empty()) {
    c.b.node("Identity", {c.in[0]}, {c.out[0]});
    c.b.node("Identity", {c.b.scalar(0, DType::i64)}, {c.out[1]});
    return;
  }
  auto& n = c.b.node("TopK", {c.in[0], c.b.ints({k})}, {c.out[0], c.out[1]});
  set_attr(n, "axis", c.node.attrs.get_int("dim"));
  set_attr(n, "largest", int64_t(largest));
  set_attr(n, "sorted", int64_t(1));
}

void arg_op(Ctx& c, const char* onnx_op) {
  const auto& dims = c.node.attrs.get_ints("dims");
  bool keep = c.node.attrs.get_bool("keepdim");
  if (!dims.empty()) {
    auto& n = c.b.node(onnx_op, {c.in[0]}, {c.out[0]});
    set_attr(n, "axis", dims[0]);
    set_attr(n, "keepdims", int64_t(keep));
    return;
  }
  // over the flattened tensor
  std::string flat = c.b.op("Reshape", {c.in[0], c.b.ints({-1})});
  std::string idx = c.b.fresh(onnx_op);
  auto& n = c.b.node(onnx_op, {flat}, {idx});
  set_attr(n, "axis", int64_t(0));
  set_attr(n, "keepdims", int64_t(0));
  c.b.node("Reshape", {idx, c.b.ints(c.out_meta(0).shape)}, {c.out[0]});
}

void clamp_op(Ctx& c) {
  DType d = c.in_dtype(0);
  double lo = c.node.attrs.get_float("min"), hi = c.node.attrs.get_float("max");
  std::string min = std::isinf(lo) ? "" : c.b.scalar(lo, d);
  std::string max = std::isinf(hi) ? "" : c.b.scalar(hi, d);
  c.b.node("Clip", {c.in[0], min, max}, {c.out[0]});
}

void gelu_op(Ctx& c) {
  DType d = c.in_dtype(0);
  const std::string& x = c.in[0];
  const std::string approximate = c.node.attrs.get_string("approximate");
  if (c.b.opset() >= 20) {  // Gelu is an op from opset 20
    set_attr(c.b.node("Gelu", {x}, {c.out[0]}), "approximate", approximate == "tanh" ? approximate : std::string("none"));
    return;
  }
  std::string inner;
  if (approximate == "tanh") {
    // tanh(sqrt(2 / pi) * (x + 0.044715 x^3))
    std::string cube = c.b.op("Mul", {x, c.b.op("Mul", {x, x})});
    std::string poly = c.b.op("Add", {x, c.b.op("Mul", {cube, c.b.scalar(0.044715, d)})});
    inner = c.b.op("Tanh", {c.b.op("Mul", {poly, c.b.scalar(0.79788456080286536, d)})});
  } else {
    inner = c.b.op("Erf", {c.b.op("Mul", {x, c.b.scalar(0.70710678118654752, d)})});
  }
  std::string half_x = c.b.op("Mul", {x, c.b.scalar(0.5, d)});
  c.b.node("Mul", {half_x, c.b.op("Add", {inner, c.b.scalar(1.0, d)})}, {c.out[0]});
}

void linear_op(Ctx& c) {
  std::string wt = c.b.op("Transpose", {c.in[1]});
  if (c.in[2].empty()) {
    c.b.node("MatMul", {c.in[0], wt}, {c.out[0]});
    return;
  }
  c.b.node("Add", {c.b.op("MatMul", {c.in[0], wt}), c.in[2]}, {c.out[0]});
}

std::vector<int64_t> symmetric_pads(const std::vector<int64_t>& p) { return {p[0], p[1], p[0], p[1]}; }

void conv_op(Ctx& c) {
  std::vector<std::string> in{c.in[0], c.in[1]};
  if (!c.in[2].empty()) in.push_back(c.in[2]);
  auto& n = c.b.node("Conv", in, {c.out[0]});
  set_attr(n, "strides", c.node.attrs.get_ints("stride"));
  set_attr(n, "pads", symmetric_pads(c.node.attrs.get_ints("padding")));
  set_attr(n, "dilations", c.node.attrs.get_ints("dilation"));
  set_attr(n, "group", c.node.attrs.get_int("groups"));
}

void pool_op(Ctx& c, bool max) {
  auto& n = c.b.node(max ? "MaxPool" : "AveragePool", {c.in[0]}, {c.out[0]});
  const auto& k = c.node.attrs.get_ints("kernel_size");
  const auto& s = c.node.attrs.get_ints("stride");
  set_attr(n, "kernel_shape", k);
  set_attr(n, "strides", s.empty() ? k : s);
  set_attr(n, "pads", symmetric_pads(c.node.attrs.get_ints("padding")));
  set_attr(n, "ceil_mode", int64_t(c.node.attrs.get_bool("ceil_mode")));
  if (!max) set_attr(n, "count_include_pad", int64_t(c.node.attrs.get_bool("count_include_pad")));
}

std::string filled(Ctx& c, int64_t size, double value, DType d) {
  return c.b.initializer(Tensor::full({size}, value, d, Device::cpu()), value == 0 ? "zeros" : "ones");
}

// Training mode normalizes with the batch statistics and returns them (ONNX's
// training_mode returns running statistics instead), so it is written out.
void batch_norm_training(Ctx& c) {
  DType d = c.in_dtype(0);
  const Shape& s = c.in_shape(0);
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < int64_t(s.size()); ++i) axes.push_back(i);
  Shape per_channel(s.size(), 1);
  per_channel[1] = s[1];
  std::string mean = reduce(c, "ReduceMean", c.in[0], axes, true);
  std::string centered = c.b.op("Sub", {c.in[0], mean});
  std::string var = reduce(c, "ReduceMean", c.b.op("Mul", {centered, centered}), axes, true);
  std::string inv = c.b.op("Reciprocal", {c.b.op("Sqrt", {c.b.op("Add", {var, c.b.scalar(c.node.attrs.get_float("eps"), d)})})});
  std::string y = c.b.op("Mul", {centered, inv});
  if (!c.in[1].empty()) y = c.b.op("Mul", {y, c.b.op("Reshape", {c.in[1], c.b.ints(per_channel)})});
  if (!c.in[2].empty()) y = c.b.op("Add", {y, c.b.op("Reshape", {c.in[2], c.b.ints(per_channel)})});
  c.b.node("Identity", {y}, {c.out[0]});
  c.b.node("Reshape", {mean, c.b.ints({s[1]})}, {c.out[1]});
  c.b.node("Reshape", {var, c.b.ints({s[1]})}, {c.out[2]});
}

void batch_norm_op(Ctx& c) {
  if (c.node.attrs.get_bool("training")) return batch_norm_training(c);
  DType d = c.in_dtype(0);
  int64_t ch = c.in_shape(0)[1];
  std::string w = c.in[1].empty() ? filled(c, ch, 1.0, d) : c.in[1];
  std::string bias = c.in[2].empty() ? filled(c, ch, 0.0, d) : c.in[2];
  auto& n = c.b.node("BatchNormalization", {c.in[0], w, bias, c.in[3], c.in[4]}, {c.out[0]});
  set_attr(n, "epsilon", c.node.attrs.get_float("eps"));
  // inference returns the running statistics as its second and third outputs
  c.b.node("Identity", {c.in[3]}, {c.out[1]});
  c.b.node("Identity", {c.in[4]}, {c.out[2]});
}

void layer_norm_op(Ctx& c) {
  if (c.b.opset() < 17) throw NotImplementedError("layer_norm needs opset 17 (LayerNormalization)");
  int64_t nd = c.node.attrs.get_int("normalized_ndim");
  const Shape& s = c.in_shape(0);
  Shape norm(s.end() - nd, s.end()), lead(s.begin(), s.end() - nd);
  DType d = c.in_dtype(0);
  double eps = c.node.attrs.get_float("eps");
  std::string w = c.in[1].empty() ? c.b.initializer(Tensor::ones(norm, d, Device::cpu()), "ones") : c.in[1];
  std::vector<std::string> in{c.in[0], w};
  if (!c.in[2].empty()) in.push_back(c.in[2]);
  bool stats = c.output_used(1) || c.output_used(2);
  std::string mean = stats ? c.b.fresh("mean") : "", inv_std = stats ? c.b.fresh("inv_std") : "";
  auto& n = c.b.node("LayerNormalization", in, stats ? std::vector<std::string>{c.out[0], mean, inv_std}
                                                      : std::vector<std::string>{c.out[0]});
  set_attr(n, "axis", -nd);
  set_attr(n, "epsilon", eps);
  if (!stats) return;
  // ONNX keeps the normalized dims as 1s and gives 1 / sqrt(var + eps)
  DType sd = c.out_meta(1).dtype;
  c.b.node("Reshape", {c.b.cast(mean, DType::f32, sd), c.b.ints(lead)}, {c.out[1]});
  std::string inv = c.b.cast(inv_std, DType::f32, sd);
  std::string var = c.b.op("Sub", {c.b.op("Reciprocal", {c.b.op("Mul", {inv, inv})}), c.b.scalar(eps, sd)});
  c.b.node("Reshape", {var, c.b.ints(lead)}, {c.out[2]});
}

// conv2d_backward_data is a transposed convolution of grad_y with the weight.
void conv_transpose_op(Ctx& c) {
  const Attrs& a = c.node.attrs;
  const auto& stride = a.get_ints("stride");
  const auto& padding = a.get_ints("padding");
  const auto& dilation = a.get_ints("dilation");
  const auto& target = a.get_ints("input_shape");
  const Shape& gy = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  std::vector<int64_t> out_pad;
  for (int i = 0; i < 2; ++i)
    out_pad.push_back(target[size_t(2 + i)] -
                      ((gy[size_t(2 + i)] - 1) * stride[size_t(i)] - 2 * padding[size_t(i)] + (w[size_t(2 + i)] - 1) * dilation[size_t(i)] + 1));
  auto& n = c.b.node("ConvTranspose", {c.in[0], c.in[1]}, {c.out[0]});
  set_attr(n, "strides", stride);
  set_attr(n, "pads", symmetric_pads(padding));
  set_attr(n, "dilations", dilation);
  set_attr(n, "group", a.get_int("groups"));
  set_attr(n, "output_padding", out_pad);
}

// index_add along dim: ScatterND(reduction add) with the dim moved to the front.
void index_add_op(Ctx& c) {
  if (c.b.opset() < 16) throw NotImplementedError("index_add needs opset 16 (ScatterND reduction)");
  int64_t rank = int64_t(c.in_shape(0).size());
  int64_t dim = c.node.attrs.get_int("dim");
  if (dim < 0) dim += rank;
  std::vector<int64_t> perm{dim};
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) perm.push_back(i);
  std::vector<int64_t> inverse(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) inverse[size_t(perm[size_t(i)])] = i;
  auto moved = [&](const std::string& v) {
    std::string t = c.b.fresh("Transpose");
    set_attr(c.b.node("Transpose", {v}, {t}), "perm", perm);
    return t;
  };
  std::string src = c.in[2];
  double alpha = c.node.attrs.get_float("alpha");
  if (alpha != 1.0) src = c.b.op("Mul", {src, c.b.scalar(alpha, c.in_dtype(2))});
  std::string idx = c.b.op("Reshape", {c.b.cast(c.in[1], c.in_dtype(1), DType::i64), c.b.ints({-1, 1})});
  std::string y = c.b.fresh("ScatterND");
  set_attr(c.b.node("ScatterND", {moved(c.in[0]), idx, moved(src)}, {y}), "reduction", std::string("add"));
  set_attr(c.b.node("Transpose", {y}, {c.out[0]}), "perm", inverse);
}

void slice_op(Ctx& c) {
  const Attrs& a = c.node.attrs;
  c.b.node("Slice",
           {c.in[0], c.b.ints({a.get_int("start")}), c.b.ints({a.get_int("end")}), c.b.ints({a.get_int("dim")}),
            c.b.ints({a.get_int("step")})},
           {c.out[0]});
}

void stack_op(Ctx& c) {
  int64_t dim = c.node.attrs.get_int("dim");
  int64_t rank = int64_t(c.out_meta(0).shape.size());
  if (dim < 0) dim += rank;
  std::vector<std::string> parts;
  for (const auto& x : c.in) parts.push_back(c.b.op("Unsqueeze", {x, c.b.ints({dim})}));
  set_attr(c.b.node("Concat", parts, {c.out[0]}), "axis", dim);
}

void split_op(Ctx& c) {
  const auto& sizes = c.node.attrs.get_ints("sizes");
  // Equal parts are num_outputs from opset 18; any other split is the split input.
  bool equal = std::all_of(sizes.begin(), sizes.end(), [&](int64_t v) { return v == sizes[0]; });
  bool by_count = c.b.opset() >= 18 && !sizes.empty() && equal;
  auto& n = c.b.node("Split", by_count ? std::vector<std::string>{c.in[0]}
                                       : std::vector<std::string>{c.in[0], c.b.ints(sizes)}, c.out);
  set_attr(n, "axis", c.node.attrs.get_int("dim"));
  if (by_count) set_attr(n, "num_outputs", int64_t(sizes.size()));
}

void pad_op(Ctx& c) {
  // oar: (begin, end) pairs from the last dim; ONNX: all begins, then all ends
  const auto& pads = c.node.attrs.get_ints("pads");
  int64_t rank = int64_t(c.in_shape(0).size());
  std::vector<int64_t> onnx_pads(size_t(2 * rank), 0);
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    size_t d = size_t(rank) - 1 - k;
    onnx_pads[d] = pads[2 * k];
    onnx_pads[d + size_t(rank)] = pads[2 * k + 1];
  }
  std::string mode = c.node.attrs.get_string("mode");
  if (mode == "replicate") mode = "edge";
  auto& n = c.b.node(
      "Pad", {c.in[0], c.b.ints(onnx_pads), c.b.scalar(c.node.attrs.get_float("value"), c.in_dtype(0))}, {c.out[0]});
  set_attr(n, "mode", mode);
}

void loss_op(Ctx& c, const char* onnx_op) {
  if (c.node.attrs.has("label_smoothing") && c.node.attrs.get_float("label_smoothing") != 0.0)
    throw NotImplementedError("label_smoothing has no ONNX counterpart");
  auto& n = c.b.node(onnx_op, {c.in[0], c.in[1]}, {c.out[0]});
  set_attr(n, "reduction", c.node.attrs.get_string("reduction"));
  set_attr(n, "ignore_index", c.node.attrs.get_int("ignore_index"));
}

std::unordered_map<std::string, Emitter> make_emitters() {
  std::unordered_map<std::string, Emitter> e;
  const std::pair<const char*, const char*> direct[] = {
      {"add", "Add"},       {"sub", "Sub"},       {"mul", "Mul"},       {"div", "Div"},     {"pow", "Pow"},
      {"maximum", "Max"},   {"minimum", "Min"},   {"exp", "Exp"},       {"log", "Log"},     {"sqrt", "Sqrt"},
      {"sin", "Sin"},       {"cos", "Cos"},       {"tan", "Tan"},       {"tanh", "Tanh"},   {"sigmoid", "Sigmoid"},
      {"neg", "Neg"},       {"abs", "Abs"},       {"relu", "Relu"},
      {"floor", "Floor"},   {"ceil", "Ceil"},     {"round", "Round"},   {"sign", "Sign"},   {"erf", "Erf"},
      {"asin", "Asin"},     {"acos", "Acos"},     {"atan", "Atan"},     {"sinh", "Sinh"},   {"cosh", "Cosh"},
      {"asinh", "Asinh"},   {"acosh", "Acosh"},   {"atanh", "Atanh"},   {"eq", "Equal"},    {"lt", "Less"},
      {"le", "LessOrEqual"}, {"gt", "Greater"},   {"ge", "GreaterOrEqual"}, {"where", "Where"},
      {"matmul", "MatMul"}, {"copy", "Identity"}, {"to_device", "Identity"}};
  for (const auto& [oar_op, onnx_op] : direct) e[oar_op] = same(onnx_op);
  e["ne"] = [](Ctx& c) { c.b.node("Not", {c.b.op("Equal", {c.in[0], c.in[1]})}, {c.out[0]}); };
  e["logical_and"] = logical("And");
  e["logical_or"] = logical("Or");
  e["logical_xor"] = logical("Xor");
  e["logical_not"] = [](Ctx& c) { c.b.node("Not", {as_bool(c, 0)}, {c.out[0]}); };
  e["cast"] = [](Ctx& c) {
    set_attr(c.b.node("Cast", {c.in[0]}, {c.out[0]}), "to", int64_t(dtype_to_onnx(c.node.attrs.get_dtype("dtype"))));
  };
  e["square"] = [](Ctx& c) { c.b.node("Mul", {c.in[0], c.in[0]}, {c.out[0]}); };
  // Shifts: BitShift takes unsigned types only, so u8 is one BitShift; signed types multiply by
  // 2^b (wrapping: a count of the width or more gives 0) or floor-divide by it in f64 (the sign
  // fill past the width), as the importer read BitShift before the shift ops existed.
  e["bitwise_left_shift"] = [](Ctx& c) {
    const DType d = c.in_dtype(0);
    if (d == DType::u8) {
      set_attr(c.b.node("BitShift", c.in, {c.out[0]}), "direction", std::string("LEFT"));
      return;
    }
    c.b.node("Mul", {c.in[0], c.b.op("Pow", {c.b.scalar(2, d), c.in[1]})}, {c.out[0]});
  };
  e["bitwise_right_shift"] = [](Ctx& c) {
    const DType d = c.in_dtype(0);
    if (d == DType::u8) {
      set_attr(c.b.node("BitShift", c.in, {c.out[0]}), "direction", std::string("RIGHT"));
      return;
    }
    std::string power = c.b.op("Pow", {c.b.scalar(2, DType::f64), c.b.cast(c.in[1], d, DType::f64)});
    std::string q = c.b.op("Floor", {c.b.op("Div", {c.b.cast(c.in[0], d, DType::f64), power})});
    set_attr(c.b.node("Cast", {q}, {c.out[0]}), "to", int64_t(dtype_to_onnx(d)));
  };
  // The other bitwise ops are ONNX ops from opset 18.
  const std::pair<const char*, const char*> bitwise[] = {
      {"bitwise_and", "BitwiseAnd"}, {"bitwise_or", "BitwiseOr"}, {"bitwise_xor", "BitwiseXor"},
      {"bitwise_not", "BitwiseNot"}};
  for (const auto& [oar_op, onnx_op] : bitwise)
    e[oar_op] = [onnx_op = onnx_op](Ctx& c) {
      if (c.b.opset() < 18) throw NotImplementedError(str(onnx_op, " is an ONNX op from opset 18; export at opset 18 or later"));
      c.b.node(onnx_op, c.in, {c.out[0]});
    };
  e["einsum"] = [](Ctx& c) {  // an imported Einsum (a trace records einsum's parts instead)
    set_attr(c.b.node("Einsum", c.in, {c.out[0]}), "equation", c.node.attrs.get_string("equation"));
  };
  e["rsqrt"] = [](Ctx& c) { c.b.node("Reciprocal", {c.b.op("Sqrt", {c.in[0]})}, {c.out[0]}); };
  e["silu"] = [](Ctx& c) { c.b.node("Mul", {c.in[0], c.b.op("Sigmoid", {c.in[0]})}, {c.out[0]}); };
  e["gelu"] = gelu_op;
  e["leaky_relu"] = [](Ctx& c) {
    set_attr(c.b.node("LeakyRelu", {c.in[0]}, {c.out[0]}), "alpha", c.node.attrs.get_float("negative_slope"));
  };
  e["clamp"] = clamp_op;
  e["fmod"] = [](Ctx& c) { set_attr(c.b.node("Mod", {c.in[0], c.in[1]}, {c.out[0]}), "fmod", int64_t(1)); };
  // Integer division: ONNX's integer Div truncates and Mod picks C's or Python's remainder; the
  // floor quotient is the truncated one less 1 where C's remainder is nonzero with the sign
  // opposite to b's (no intermediate leaves the type, unlike (a - a mod b) / b near its limits).
  e["int_trunc_divide"] = same("Div");
  e["int_fmod"] = e["fmod"];
  e["int_remainder"] = [](Ctx& c) { set_attr(c.b.node("Mod", {c.in[0], c.in[1]}, {c.out[0]}), "fmod", int64_t(0)); };
  e["int_floor_divide"] = [](Ctx& c) {
    const DType d = c.out_meta(0).dtype;
    std::string r = c.b.fresh("Mod");
    set_attr(c.b.node("Mod", {c.in[0], c.in[1]}, {r}), "fmod", int64_t(1));
    std::string zero = c.b.scalar(0, d);
    std::string inexact = c.b.op("Not", {c.b.op("Equal", {r, zero})});
    std::string signs_differ = c.b.op("Xor", {c.b.op("Less", {r, zero}), c.b.op("Less", {c.in[1], zero})});
    std::string adjust = c.b.cast(c.b.op("And", {inexact, signs_differ}), DType::boolean, d);
    c.b.node("Sub", {c.b.op("Div", {c.in[0], c.in[1]}), adjust}, {c.out[0]});
  };

  e["sum"] = reduction("ReduceSum", true);
  e["prod"] = reduction("ReduceProd", true);
  e["mean"] = reduction("ReduceMean", false);
  e["max"] = reduction("ReduceMax", false);
  e["min"] = reduction("ReduceMin", false);
  e["var"] = var_op;
  e["sort"] = [](Ctx& c) {
    const Shape& shape = c.out_meta(0).shape;
    const int64_t n = shape.empty() ? 1 : shape[size_t(normalize_axis(c.node.attrs.get_int("dim"), int64_t(shape.size())))];
    top_k_export(c, n, c.node.attrs.get_bool("descending"));
  };
  e["topk"] = [](Ctx& c) { top_k_export(c, c.node.attrs.get_int("k"), c.node.attrs.get_bool("largest")); };
  e["argmax"] = [](Ctx& c) { arg_op(c, "ArgMax"); };
  e["argmin"] = [](Ctx& c) { arg_op(c, "ArgMin"); };

  e["linear"] = linear_op;
  e["conv2d"] = conv_op;
  e["max_pool2d"] = [](Ctx& c) { pool_op(c, true); };
  e["avg_pool2d"] = [](Ctx& c) { pool_op(c, false); };
  e["batch_norm"] = batch_norm_op;
  e["layer_norm"] = layer_norm_op;
  e["softmax"] = [](Ctx& c) { set_attr(c.b.node("Softmax", {c.in[0]}, {c.out[0]}), "axis", c.node.attrs.get_int("dim")); };
  e["log_softmax"] = [](Ctx& c) {
    set_attr(c.b.node("LogSoftmax", {c.in[0]}, {c.out[0]}), "axis", c.node.attrs.get_int("dim"));
  };
  e["nll_loss"] = [](Ctx& c) { loss_op(c, "NegativeLogLikelihoodLoss"); };
  e["cross_entropy"] = [](Ctx& c) { loss_op(c, "SoftmaxCrossEntropyLoss"); };

  e["reshape"] = [](Ctx& c) {
    const Shape& shape = c.out_meta(0).shape;
    auto& n = c.b.node("Reshape", {c.in[0], c.b.ints(shape)}, {c.out[0]});
    // a 0 in ONNX's shape copies the input's dim unless allowzero (opset 14)
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      if (c.b.opset() < 14) throw NotImplementedError("reshape to an empty shape needs opset 14 (allowzero)");
      set_attr(n, "allowzero", int64_t(1));
    }
  };
  e["conv2d_backward_data"] = conv_transpose_op;
  e["index_add"] = index_add_op;
  e["permute"] = [](Ctx& c) { set_attr(c.b.node("Transpose", {c.in[0]}, {c.out[0]}), "perm", c.node.attrs.get_ints("dims")); };
  e["slice"] = slice_op;
  e["select"] = [](Ctx& c) {
    auto& n = c.b.node("Gather", {c.in[0], c.b.scalar(double(c.node.attrs.get_int("index")), DType::i64)}, {c.out[0]});
    set_attr(n, "axis", c.node.attrs.get_int("dim"));
  };
  e["expand"] = [](Ctx& c) { c.b.node("Expand", {c.in[0], c.b.ints(c.out_meta(0).shape)}, {c.out[0]}); };
  e["concat"] = [](Ctx& c) { set_attr(c.b.node("Concat", c.in, {c.out[0]}), "axis", c.node.attrs.get_int("dim")); };
  e["stack"] = stack_op;
  e["split"] = split_op;
  e["pad"] = pad_op;
  e["gather"] = [](Ctx& c) {
    set_attr(c.b.node("GatherElements", {c.in[0], c.in[1]}, {c.out[0]}), "axis", c.node.attrs.get_int("dim"));
  };
  e["index_select"] = [](Ctx& c) {
    set_attr(c.b.node("Gather", {c.in[0], c.in[1]}, {c.out[0]}), "axis", c.node.attrs.get_int("dim"));
  };
  e["embedding"] = [](Ctx& c) { set_attr(c.b.node("Gather", {c.in[0], c.in[1]}, {c.out[0]}), "axis", int64_t(0)); };
  e["scatter_add"] = [](Ctx& c) {
    if (c.b.opset() < 16) throw NotImplementedError("scatter_add needs opset 16 (ScatterElements reduction)");
    auto& n = c.b.node("ScatterElements", {c.in[0], c.in[1], c.in[2]}, {c.out[0]});
    set_attr(n, "axis", c.node.attrs.get_int("dim"));
    set_attr(n, "reduction", std::string("add"));
  };
  e["fill"] = [](Ctx& c) {
    const TensorMeta& m = c.out_meta(0);
    auto& n = c.b.node("ConstantOfShape", {c.b.ints(m.shape)}, {c.out[0]});
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    tensor_to_proto(Tensor::full({1}, c.node.attrs.get_float("value"), m.dtype, Device::cpu()), *a->mutable_t());
  };
  e["arange"] = [](Ctx& c) {
    DType d = c.out_meta(0).dtype;
    const Attrs& a = c.node.attrs;
    c.b.node("Range", {c.b.scalar(a.get_float("start"), d), c.b.scalar(a.get_float("end"), d), c.b.scalar(a.get_float("step"), d)},
             {c.out[0]});
  };
  add_rnn_emitters(e);
  add_attention_emitters(e);
  return e;
}

}  // namespace

const Emitter* find_emitter(const std::string& op) {
  static const std::unordered_map<std::string, Emitter> emitters = make_emitters();
  auto it = emitters.find(op);
  return it == emitters.end() ? nullptr : &it->second;
}

}  // namespace oar::onnx::detail
