// ONNX quantization ops: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and the integer convolution / matmul family
// (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul). oar has no
// integer GEMM, so the integer products are computed in floating point
// (exact while the accumulated sums stay below 2^24 in f32 / 2^53 in f64)
// and rounded half to even and saturated as ONNX specifies.
#include "import_context.h"

namespace oar::onnx::detail {

namespace {

double type_min(DType d) { return d == DType::i8 ? -128 : d == DType::i32 ? -2147483648.0 : 0; }
double type_max(DType d) { return d == DType::i8 ? 127 : d == DType::i32 ? 2147483647.0 : 255; }

// The axis per-axis parameters run along; the attribute only matters (and is
// only checked) when the scale is a 1-D tensor rather than a scalar.
// Blocked parameters (block_size, opset 21) are not mapped.
int64_t per_axis(NodeContext& c, Value* scale, Value* x) {
  if (c.attr_int("block_size", 0) != 0 || c.rank(scale) > 1)
    c.unsupported("blocked quantization (block_size, opset 21)");
  if (c.rank(scale) == 0) return 0;
  return c.axis(c.attr_int("axis", 1), c.rank(x));
}

// Per-axis parameters ([C]) are laid out along `axis` of a rank-`rank` input.
Value* along(NodeContext& c, Value* p, int64_t axis, int64_t rank) {
  if (c.rank(p) == 0 || rank == 0) return p;
  Shape s(size_t(rank), 1);
  s[size_t(axis)] = c.shape(p)[0];
  return c.reshape(p, s);
}

// round(v) + zero point, saturated to `to`, cast.
Value* saturate(NodeContext& c, Value* v, Value* zero_point, DType to) {
  DType f = c.dtype(v);
  Value* q = c.op("round", {v});
  if (zero_point != nullptr) q = c.add(q, c.cast(zero_point, f));
  q = c.op("clamp", {q}, {{"min", type_min(to)}, {"max", type_max(to)}});
  return c.cast(q, to);
}

std::vector<Value*> quantize_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* zp = c.input(2);
  // without a zero point, output_dtype (opset 21) names the type; u8 by default
  DType to = zp != nullptr           ? c.dtype(zp)
             : c.has_attr("output_dtype") ? dtype_from_onnx(int32_t(c.attr_int("output_dtype")), c.where())
                                          : DType::u8;
  if (to != DType::u8 && to != DType::i8) c.unsupported(str("quantizing to ", dtype_name(to)));
  int64_t a = per_axis(c, c.required_input(1), x);
  DType f = is_floating(c.dtype(x)) && c.dtype(x) != DType::f16 && c.dtype(x) != DType::bf16 ? c.dtype(x) : DType::f32;
  Value* scale = along(c, c.cast(c.required_input(1), f), a, c.rank(x));
  if (zp != nullptr) zp = along(c, zp, a, c.rank(x));
  return {saturate(c, c.div(c.cast(x, f), scale), zp, to)};
}

std::vector<Value*> dequantize_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* scale = c.required_input(1);
  Value* zp = c.input(2);
  int64_t a = per_axis(c, scale, x);
  DType f = c.dtype(scale);
  Value* v = c.cast(x, f);
  if (zp != nullptr) v = c.sub(v, c.cast(along(c, zp, a, c.rank(x)), f));
  return {c.mul(v, along(c, scale, a, c.rank(x)))};
}

std::vector<Value*> dynamic_quantize_op(NodeContext& c) {
  // scale = (max(0, max x) - min(0, min x)) / 255, zero point = round(-min / scale), saturated
  Value* x = c.required_input(0);
  DType f = c.dtype(x);
  Value* zero = c.scalar(0, f);
  Value* hi = c.op("maximum", {c.op("max", {x}), zero});
  Value* lo = c.op("minimum", {c.op("min", {x}), zero});
  Value* scale = c.div(c.sub(hi, lo), c.scalar(255, f));
  Value* zp = saturate(c, c.div(c.op("neg", {lo}), scale), nullptr, DType::u8);
  Value* y = saturate(c, c.div(x, scale), zp, DType::u8);
  return {y, scale, zp};
}

// x - zero point, in floating point (per-axis zero points along `axis`).
Value* centered(NodeContext& c, Value* x, Value* zp, DType f, int64_t axis) {
  Value* v = c.cast(x, f);
  if (zp == nullptr) return v;
  return c.sub(v, c.cast(along(c, zp, axis, c.rank(x)), f));
}

std::vector<Value*> conv_integer_op(NodeContext& c) {
  Value* x = centered(c, c.required_input(0), c.input(2), DType::f32, 1);
  Value* w = centered(c, c.required_input(1), c.input(3), DType::f32, 0);
  return {c.cast(conv_mapping(c, x, w, nullptr), DType::i32)};
}

std::vector<Value*> matmul_integer_op(NodeContext& c) {
  Value* a = c.required_input(0);
  Value* b = c.required_input(1);
  // a's zero point is per row (its second-last dim), b's per column (its last dim)
  Value* ac = centered(c, a, c.input(2), DType::f64, std::max<int64_t>(c.rank(a) - 2, 0));
  Value* bc = centered(c, b, c.input(3), DType::f64, c.rank(b) - 1);
  return {c.cast(matmul_mapping(c, ac, bc), DType::i32)};
}

std::vector<Value*> qlinear_matmul_op(NodeContext& c) {
  Value* a = centered(c, c.required_input(0), c.required_input(2), DType::f64, std::max<int64_t>(c.rank(c.input(0)) - 2, 0));
  Value* b = centered(c, c.required_input(3), c.required_input(5), DType::f64, c.rank(c.input(3)) - 1);
  Value* zp = c.required_input(7);
  Value* scale = c.div(c.mul(c.cast(c.required_input(1), DType::f64), c.cast(c.required_input(4), DType::f64)),
                       c.cast(c.required_input(6), DType::f64));
  return {saturate(c, c.mul(matmul_mapping(c, a, b), scale), zp, c.dtype(zp))};
}

std::vector<Value*> qlinear_conv_op(NodeContext& c) {
  // inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias (int32, scale x_scale * w_scale)
  Value* x = centered(c, c.required_input(0), c.required_input(2), DType::f32, 1);
  Value* w = centered(c, c.required_input(3), c.required_input(5), DType::f32, 0);
  Value* acc = conv_mapping(c, x, w, nullptr);
  int64_t r = c.rank(acc);
  if (c.has_input(8)) acc = c.add(acc, along(c, c.cast(c.input(8), DType::f32), 1, r));
  Value* w_scale = along(c, c.cast(c.required_input(4), DType::f32), 1, r);  // per output channel
  Value* scale = c.div(c.mul(c.cast(c.required_input(1), DType::f32), w_scale), c.cast(c.required_input(6), DType::f32));
  Value* zp = c.required_input(7);
  return {saturate(c, c.mul(acc, scale), zp, c.dtype(zp))};
}

}  // namespace

void register_quantization_mappers(MapperTable& t) {
  t.add("QuantizeLinear", quantize_op);
  t.add("DequantizeLinear", dequantize_op);
  t.add("DynamicQuantizeLinear", dynamic_quantize_op);
  t.add("ConvInteger", conv_integer_op);
  t.add("MatMulInteger", matmul_integer_op);
  t.add("QLinearMatMul", qlinear_matmul_op);
  t.add("QLinearConv", qlinear_conv_op);
}

}  // namespace oar::onnx::detail
