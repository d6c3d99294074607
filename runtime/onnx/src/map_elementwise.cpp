// ONNX elementwise ops: math, activations, comparisons, logic, casts. Most
// are one catalog op; the rest are short compositions. Where ONNX integer
// semantics differ from oar's PyTorch-style promotion (integer Div
// truncates, Pow keeps the base's type, Mod follows the divisor's sign)
// the composition computes in f64 and casts back, exact for the magnitudes
// those types hold in practice.
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

Mapper unary(const char* op) {
  return [op](NodeContext& c) -> std::vector<Value*> { return {c.op(op, {c.required_input(0)})}; };
}

Mapper binary(const char* op) {
  return [op](NodeContext& c) -> std::vector<Value*> {
    return {c.op(op, {c.required_input(0), c.required_input(1)})};
  };
}

// Max/Min/Sum/Mean take any number of inputs (one included).
Mapper variadic(const char* op, bool mean = false) {
  return [op, mean](NodeContext& c) -> std::vector<Value*> {
    Value* acc = c.required_input(0);
    for (size_t i = 1; i < c.input_count(); ++i) acc = c.op(op, {acc, c.required_input(i)});
    if (mean) acc = c.div(acc, c.scalar(double(c.input_count()), c.dtype(acc)));
    return {acc};
  };
}

Value* div_mapping(NodeContext& c, Value* a, Value* b) {
  DType d = c.dtype(a);
  if (is_floating(d)) return c.div(a, b);
  // ONNX integer Div truncates; oar's div is true division.
  if (d != DType::boolean) return c.op("int_trunc_divide", {a, c.cast(b, d)});
  return c.cast(c.div(c.cast(a, DType::f64), c.cast(b, DType::f64)), d);  // cast truncates toward zero
}

Value* pow_mapping(NodeContext& c, Value* base, Value* exponent) {
  DType d = c.dtype(base);
  if (is_floating(d)) return c.op("pow", {base, c.cast(exponent, d)});
  if (!is_floating(c.dtype(exponent))) return c.op("pow", {base, c.cast(exponent, d)});
  // integer base, floating exponent: the result keeps the base's type
  return c.cast(c.op("pow", {c.cast(base, DType::f64), c.cast(exponent, DType::f64)}), d);
}

Value* mod_mapping(NodeContext& c, Value* a, Value* b, bool fmod) {
  DType d = c.dtype(a);
  if (is_floating(d) && !fmod) c.invalid("fmod must be 1 for floating-point inputs");
  if (is_floating(d)) return c.op("fmod", {a, b});
  if (d == DType::boolean) c.invalid("Mod is not defined for bool inputs");
  // fmod = 1: C's %, the sign of the dividend; fmod = 0: Python's %, the sign of the divisor.
  return c.op(fmod ? "int_fmod" : "int_remainder", {a, c.cast(b, d)});
}

Value* clip_mapping(NodeContext& c) {
  Value* x = c.required_input(0);
  DType d = c.dtype(x);
  Value* lo = nullptr;
  Value* hi = nullptr;
  if (c.opset() < 11) {
    if (c.has_attr("min")) lo = c.scalar(c.attr_float("min", 0), d);
    if (c.has_attr("max")) hi = c.scalar(c.attr_float("max", 0), d);
  } else {
    lo = c.input(1);
    hi = c.input(2);
  }
  // Bounds may be graph inputs, so they stay tensors (maximum/minimum) rather
  // than clamp's float attributes.
  if (lo != nullptr) x = c.op("maximum", {x, c.cast(lo, d)});
  if (hi != nullptr) x = c.op("minimum", {x, c.cast(hi, d)});
  return x;
}

// The catalog's shifts. ONNX's BitShift takes unsigned types only, so an
// i32/i64 operand is a UINT16/UINT32/UINT64 the importer widened
// (tensor_proto.cpp): shifts are exact, but a left shift wraps at the wider
// width, and a UINT64 of 2^63 or more (negative once widened) shifts right
// arithmetically.
Value* bit_shift_mapping(NodeContext& c, Value* x, Value* y) {
  DType d = c.dtype(x);
  if (!is_integral(d) || d == DType::i8 || d == DType::boolean)
    c.invalid(str("BitShift takes unsigned integers, got ", dtype_name(d)));
  std::string dir = c.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") c.invalid(str("direction must be LEFT or RIGHT, got '", dir, "'"));
  return c.op(dir == "LEFT" ? "bitwise_left_shift" : "bitwise_right_shift", {x, c.cast(y, d)});
}

}  // namespace

// ONNX Softsign as a composition: the catalog's op of that name is the
// kernel_primitives single-source demonstration, which nothing outside
// kernel_primitives/ may name (tests/unit/test_single_source.cpp).
Value* x_over_one_plus_abs(NodeContext& c, Value* x) {
  return c.div(x, c.add(c.scalar(1, c.dtype(x)), c.op("abs", {x})));
}

void register_elementwise_mappers(MapperTable& t) {
  const std::pair<const char*, const char*> unaries[] = {
      {"Abs", "abs"},   {"Neg", "neg"},     {"Relu", "relu"},   {"Exp", "exp"},     {"Log", "log"},
      {"Sqrt", "sqrt"}, {"Sin", "sin"},     {"Cos", "cos"},     {"Tan", "tan"},     {"Tanh", "tanh"},
      {"Asin", "asin"}, {"Acos", "acos"},   {"Atan", "atan"},   {"Sinh", "sinh"},   {"Cosh", "cosh"},
      {"Asinh", "asinh"}, {"Acosh", "acosh"}, {"Atanh", "atanh"}, {"Sigmoid", "sigmoid"},
      {"Erf", "erf"}, {"Floor", "floor"}, {"Ceil", "ceil"}, {"Round", "round"},
      {"Sign", "sign"}, {"Not", "logical_not"}, {"BitwiseNot", "bitwise_not"}};
  for (const auto& [onnx_name, oar_name] : unaries) t.add(onnx_name, unary(oar_name));

  const std::pair<const char*, const char*> binaries[] = {
      {"Add", "add"},      {"Sub", "sub"},     {"Mul", "mul"},          {"Equal", "eq"},
      {"Less", "lt"},      {"LessOrEqual", "le"}, {"Greater", "gt"},    {"GreaterOrEqual", "ge"},
      {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"},
      {"BitwiseAnd", "bitwise_and"}, {"BitwiseOr", "bitwise_or"}, {"BitwiseXor", "bitwise_xor"}};
  for (const auto& [onnx_name, oar_name] : binaries) t.add(onnx_name, binary(oar_name));

  t.add("Max", variadic("maximum"));
  t.add("Min", variadic("minimum"));
  t.add("Sum", variadic("add"));
  t.add("Mean", variadic("add", true));

  t.add("Identity", [](NodeContext& c) -> std::vector<Value*> { return {c.required_input(0)}; });
  t.add("Softsign", [](NodeContext& c) -> std::vector<Value*> { return {x_over_one_plus_abs(c, c.required_input(0))}; });
  t.add("Div", [](NodeContext& c) -> std::vector<Value*> {
    return {div_mapping(c, c.required_input(0), c.required_input(1))};
  });
  t.add("Pow", [](NodeContext& c) -> std::vector<Value*> {
    return {pow_mapping(c, c.required_input(0), c.required_input(1))};
  });
  t.add("Mod", [](NodeContext& c) -> std::vector<Value*> {
    return {mod_mapping(c, c.required_input(0), c.required_input(1), c.attr_int("fmod", 0) != 0)};
  });
  t.add("BitShift", [](NodeContext& c) -> std::vector<Value*> {
    return {bit_shift_mapping(c, c.required_input(0), c.required_input(1))};
  });
  t.add("Reciprocal", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    return {c.div(c.scalar(1, c.dtype(x)), x)};
  });
  t.add("Clip", [](NodeContext& c) -> std::vector<Value*> { return {clip_mapping(c)}; });
  t.add("Where", [](NodeContext& c) -> std::vector<Value*> {
    return {c.where(c.required_input(0), c.required_input(1), c.required_input(2))};
  });
  t.add("Cast", [](NodeContext& c) -> std::vector<Value*> {
    DType to = dtype_from_onnx(int32_t(c.attr_int("to")), c.where() + ": attribute 'to'");
    return {c.cast(c.required_input(0), to)};
  });
  t.add("CastLike", [](NodeContext& c) -> std::vector<Value*> {
    return {c.cast(c.required_input(0), c.dtype(c.required_input(1)))};
  });
  t.add("IsNaN", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    return {c.op("ne", {x, x})};
  });
  t.add("IsInf", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    bool neg = c.attr_int("detect_negative", 1) != 0, pos = c.attr_int("detect_positive", 1) != 0;
    Value* out = nullptr;
    if (pos) out = c.op("eq", {x, c.scalar(INFINITY, c.dtype(x))});
    if (neg) {
      Value* v = c.op("eq", {x, c.scalar(-INFINITY, c.dtype(x))});
      out = out != nullptr ? c.op("logical_or", {out, v}) : v;
    }
    if (out == nullptr) out = c.op("logical_and", {c.op("ne", {x, x}), c.op("eq", {x, x})});  // all false
    return {out};
  });

  // ---- activations written with other ops ----
  t.add("LeakyRelu", [](NodeContext& c) -> std::vector<Value*> {
    return {c.op("leaky_relu", {c.required_input(0)}, {{"negative_slope", c.attr_float("alpha", 0.01)}})};
  });
  t.add("PRelu", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    Value* slope = c.required_input(1);
    // Before opset 7 a 1-D slope of C values applied along the channel axis
    // (x [N, C, ...]), which numpy broadcasting would put on the last axis.
    const Shape &xs = NodeContext::shape(x), &ss = NodeContext::shape(slope);
    if (c.opset() < 7 && ss.size() == 1 && xs.size() >= 2 && ss[0] == xs[1] && ss[0] > 1) {
      Shape per_channel(xs.size() - 1, 1);
      per_channel[0] = ss[0];
      slope = c.reshape(slope, per_channel);
    }
    return {c.where(c.op("lt", {x, c.scalar(0, c.dtype(x))}), c.mul(x, slope), x)};
  });
  t.add("Elu", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    Value* neg = c.mul(c.scalar(c.attr_float("alpha", 1.0), d), c.sub(c.op("exp", {x}), c.scalar(1, d)));
    return {c.where(c.op("gt", {x, c.scalar(0, d)}), x, neg)};
  });
  t.add("Celu", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    Value* alpha = c.scalar(c.attr_float("alpha", 1.0), d);
    Value* neg = c.mul(alpha, c.sub(c.op("exp", {c.div(x, alpha)}), c.scalar(1, d)));
    return {c.add(c.op("relu", {x}), c.op("minimum", {c.scalar(0, d), neg}))};
  });
  t.add("Selu", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    Value* alpha = c.scalar(c.attr_float("alpha", 1.67326319217681884765625), d);
    Value* gamma = c.scalar(c.attr_float("gamma", 1.05070102214813232421875), d);
    Value* neg = c.sub(c.mul(alpha, c.op("exp", {x})), alpha);
    return {c.mul(gamma, c.where(c.op("gt", {x, c.scalar(0, d)}), x, neg))};
  });
  t.add("ThresholdedRelu", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    return {c.where(c.op("gt", {x, c.scalar(c.attr_float("alpha", 1.0), d)}), x, c.scalar(0, d))};
  });
  t.add("Softplus", [](NodeContext& c) -> std::vector<Value*> {
    // relu(x) + log(1 + exp(-|x|)): no overflow for large |x|
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    Value* tail = c.op("log", {c.add(c.scalar(1, d), c.op("exp", {c.op("neg", {c.op("abs", {x})})}))});
    return {c.add(c.op("relu", {x}), tail)};
  });
  t.add("Mish", [](NodeContext& c) -> std::vector<Value*> {
    // x * tanh(softplus(x)), softplus in its overflow-free form as above (opset 18)
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    Value* tail = c.op("log", {c.add(c.scalar(1, d), c.op("exp", {c.op("neg", {c.op("abs", {x})})}))});
    return {c.mul(x, c.op("tanh", {c.add(c.op("relu", {x}), tail)}))};
  });
  t.add("Gelu", [](NodeContext& c) -> std::vector<Value*> {
    // opset 20; oar's gelu takes the same two forms
    std::string approximate = c.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") c.invalid(str("unknown approximate '", approximate, "'"));
    return {c.op("gelu", {c.required_input(0)}, {{"approximate", approximate}})};
  });
  auto hard_sigmoid = [](NodeContext& c, Value* x, double alpha, double beta) {
    DType d = c.dtype(x);
    Value* lin = c.add(c.mul(c.scalar(alpha, d), x), c.scalar(beta, d));
    return c.op("clamp", {lin}, {{"min", 0.0}, {"max", 1.0}});
  };
  t.add("HardSigmoid", [hard_sigmoid](NodeContext& c) -> std::vector<Value*> {
    return {hard_sigmoid(c, c.required_input(0), c.attr_float("alpha", 0.2), c.attr_float("beta", 0.5))};
  });
  t.add("HardSwish", [hard_sigmoid](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    return {c.mul(x, hard_sigmoid(c, x, 1.0 / 6.0, 0.5))};
  });
  t.add("Shrink", [](NodeContext& c) -> std::vector<Value*> {
    Value* x = c.required_input(0);
    DType d = c.dtype(x);
    double lambd = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
    Value* below = c.op("lt", {x, c.scalar(-lambd, d)});
    Value* above = c.op("gt", {x, c.scalar(lambd, d)});
    Value* zero = c.scalar(0, d);
    return {c.where(below, c.add(x, c.scalar(bias, d)), c.where(above, c.sub(x, c.scalar(bias, d)), zero))};
  });
}

}  // namespace oar::onnx::detail
