// Catalog: elementwise ops. Each runs on strided, broadcast inputs; dtype
// promotion is declared here and applied by dispatch, so kernels see one dtype.
#include "catalog_util.h"
#include "oar/kp/functors.h"

namespace oar {

using namespace catalog;

namespace {

std::vector<TensorMeta> same_dtype(const InferContext& c) {
  DType d = DType::f32;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].defined() && c.schema.inputs[std::min(i, c.schema.inputs.size() - 1)].promoted) {
      d = c.dtype(i);
      break;
    }
  return {{broadcast_all(c), d}};
}
std::vector<TensorMeta> bool_out(const InferContext& c) { return {{broadcast_all(c), DType::boolean}}; }

// Bitwise ops: integer dtypes only (bool has the logical ops).
std::vector<TensorMeta> integral_only(const InferContext& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!is_integral(c.dtype(i)) || c.dtype(i) == DType::boolean)
      throw DTypeError(str("op '", c.schema.name, "' needs integer inputs (i8, u8, i32, i64), got ",
                           dtype_name(c.dtype(i)), "; bool tensors have logical_and/or/xor/not"));
  return same_dtype(c);
}

std::vector<TensorMeta> numeric_not_bool(const InferContext& c) {
  if (c.dtype(0) == DType::boolean)
    throw DTypeError(str("op '", c.schema.name, "' does not accept bool tensors"));
  return same_dtype(c);
}

OpSchema unary(const std::string& name, DTypePolicy policy, std::string doc,
               std::vector<AttrSpec> attrs = {}, InferFn infer = same_dtype) {
  OpSchema s;
  s.name = name;
  s.inputs = {InputSpec{"x"}};
  s.outputs = {"y"};
  s.attrs = std::move(attrs);
  s.infer = std::move(infer);
  s.dtype_policy = policy;
  s.broadcast = true;
  s.strided_inputs = true;
  s.doc = std::move(doc);
  return s;
}

OpSchema binary(const std::string& name, DTypePolicy policy, std::string doc,
                InferFn infer = same_dtype, std::vector<std::string> in = {"a", "b"}) {
  OpSchema s = unary(name, policy, std::move(doc), {}, std::move(infer));
  s.inputs = {InputSpec{in[0]}, InputSpec{in[1]}};
  return s;
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  const auto P = DTypePolicy::kPromote;
  const auto F = DTypePolicy::kPromoteToFloat;
  // unary, floating results (integers are computed as f32)
  r.add(unary("exp", F, "e^x"));
  r.add(unary("log", F, "natural logarithm"));
  r.add(unary("sqrt", F, "square root"));
  r.add(unary("rsqrt", F, "1 / sqrt(x)"));
  r.add(unary("sin", F, "sine"));
  r.add(unary("cos", F, "cosine"));
  r.add(unary("tanh", F, "hyperbolic tangent"));
  r.add(unary("sigmoid", F, "1 / (1 + e^-x)"));
  r.add(unary("gelu", F, "x * Phi(x); approximate='tanh' uses the tanh formula",
              {attr("approximate", AttrType::kString, std::string("none"))},
              [](const InferContext& c) {
                const auto& a = c.attrs.get_string("approximate");
                if (a != "none" && a != "tanh")
                  throw ValueError(str("gelu: approximate must be 'none' or 'tanh', got '", a, "'"));
                return same_dtype(c);
              }),
        {"*", "[3,5] approximate='tanh'"});
  r.add(unary("silu", F, "x * sigmoid(x)"));
  r.add(unary("leaky_relu", F, "x if x > 0 else negative_slope * x",
              {attr("negative_slope", AttrType::kFloat, 0.01)}),
        {"*", "[3,5] negative_slope=-0.3"});
  r.add(unary("square", P, "x * x", {}, numeric_not_bool));
  // unary, same dtype
  r.add(unary("neg", P, "-x", {}, numeric_not_bool));
  r.add(unary("abs", P, "|x|", {}, numeric_not_bool));
  r.add(unary("relu", P, "max(x, 0)", {}, numeric_not_bool));
  r.add(unary("clamp", P, "min(max(x, min), max); bounds given as floats",
              {attr("min", AttrType::kFloat, -kInf), attr("max", AttrType::kFloat, kInf)},
              [](const InferContext& c) {
                if (c.attrs.get_float("min") > c.attrs.get_float("max"))
                  throw ValueError(str("clamp: min ", c.attrs.get_float("min"), " > max ",
                                       c.attrs.get_float("max")));
                return numeric_not_bool(c);
              }),
        {"*", "[3,5] min=-1 max=0.5", "[3,5] min=0.25"});
  r.add(no_gradient(unary("logical_not", DTypePolicy::kNone, "x == 0", {}, bool_out)));
  r.add(unary("cast", DTypePolicy::kNone, "convert to dtype (float to int truncates toward zero)",
              {attr("dtype", AttrType::kDType)}, [](const InferContext& c) {
                return std::vector<TensorMeta>{{c.shape(0), c.attrs.get_dtype("dtype")}};
              }),
        {"[3,5] dtype=f32", "[3,5] dtype=f64", "[3,5] dtype=f16", "[3,5] dtype=bf16", "[3,5] dtype=i8",
         "[3,5] dtype=u8", "[3,5] dtype=i32", "[3,5] dtype=i64", "[3,5] dtype=bool", "[0,3] dtype=f32"});
  r.add(unary("copy", DTypePolicy::kNone, "contiguous copy (also strided copy into an output)"));

  // binary arithmetic
  r.add(binary("add", P, "a + b"));
  r.add(binary("sub", P, "a - b"));
  r.add(binary("mul", P, "a * b"));
  r.add(binary("div", F, "a / b (true division)"));
  r.add(binary("pow", P, "a ^ b"));
  r.add(binary("maximum", P, "elementwise max (NaN propagates)"));
  r.add(binary("minimum", P, "elementwise min (NaN propagates)"));
  // comparisons and logic
  for (const char* n : {"eq", "ne", "lt", "le", "gt", "ge"})
    r.add(no_gradient(binary(n, P, std::string("comparison ") + n + ", bool result", bool_out)));
  // Mixed dtypes promote first (as PyTorch): a value is nonzero in the common dtype when it is in its own.
  for (const char* n : {"logical_and", "logical_or", "logical_xor"})
    r.add(no_gradient(binary(n, P, std::string(n) + " of (a != 0, b != 0), bool result", bool_out)));
  // gradient helpers of activations: (grad, saved) -> grad_x
  r.add(backward_kernel(binary("sigmoid_backward", F, "grad * y * (1 - y), y = sigmoid(x)", same_dtype, {"grad", "y"})));
  r.add(backward_kernel(binary("tanh_backward", F, "grad * (1 - y^2), y = tanh(x)", same_dtype, {"grad", "y"})));
  r.add(backward_kernel(binary("silu_backward", F, "grad * d silu(x)/dx", same_dtype, {"grad", "x"})));
  {
    OpSchema s = binary("gelu_backward", F, "grad * d gelu(x)/dx", same_dtype, {"grad", "x"});
    s.attrs = {attr("approximate", AttrType::kString, std::string("none"))};
    r.add(backward_kernel(std::move(s)), {"*", "[3,5] [3,5] approximate='tanh'"});
  }
  r.add(backward_kernel(binary("relu_backward", P, "grad where x > 0 else 0", same_dtype, {"grad", "x"})));
  {
    OpSchema s = binary("leaky_relu_backward", F, "grad where x > 0 else negative_slope * grad",
                        same_dtype, {"grad", "x"});
    s.attrs = {attr("negative_slope", AttrType::kFloat, 0.01)};
    r.add(backward_kernel(std::move(s)), {"*", "[3,5] [3,5] negative_slope=0.2"});
  }

  // ternary
  OpSchema where;
  where.name = "where";
  where.inputs = {unpromoted("condition"), InputSpec{"a"}, InputSpec{"b"}};
  where.outputs = {"y"};
  where.infer = [](const InferContext& c) {
    if (c.dtype(0) != DType::boolean)
      throw DTypeError(str("where: condition must be bool, got ", dtype_name(c.dtype(0))));
    return std::vector<TensorMeta>{{broadcast_all(c), c.dtype(1)}};
  };
  where.dtype_policy = P;
  where.broadcast = true;
  where.strided_inputs = true;
  where.doc = "a where condition else b";
  r.add(std::move(where));

  // trigamma is digamma's gradient; trigamma's and polygamma's are polygamma of the next order.
  r.add(unary("trigamma", F, "psi'(x), the derivative of digamma (polygamma of order 1)"));
  r.add(unary("polygamma", F, "psi^(n)(x), the n-th derivative of digamma (n = 0, 1, 2, ...)",
              {attr("n", AttrType::kFloat, 1.0)}),
        {"[2,5]{0.5:6} n=2", "[7]{0.5:9} n=3", "[4]{1:3} n=0"});

  // Functors declared only in kernel_primitives/*_ops.def get a generated
  // schema: one .def line is a new op on every device (docs/ops.md marks them).
  kp::for_each_functor([&]<class Op>() {
    if (Op::kind == kp::VARIANT || r.find(Op::op_name)) return;
    std::vector<AttrSpec> attrs;
    if (*Op::p0_attr) attrs.push_back(attr(Op::p0_attr, AttrType::kFloat, 0.0));
    if (*Op::p1_attr) attrs.push_back(attr(Op::p1_attr, AttrType::kFloat, 0.0));
    std::string doc = str("`", Op::source, "` (declared only in kernel_primitives/)");
    DTypePolicy policy = Op::kind == kp::FLOATING ? F : P;
    if (Op::kind == kp::COMPARE) r.add(no_gradient(binary(Op::op_name, P, doc, bool_out)));
    else if (Op::kind == kp::INTEGRAL && Op::arity == 1) r.add(no_gradient(unary(Op::op_name, P, doc, attrs, integral_only)));
    else if (Op::kind == kp::INTEGRAL) r.add(no_gradient(binary(Op::op_name, P, doc, integral_only)));
    else if (Op::arity == 1) r.add(unary(Op::op_name, policy, doc, attrs, Op::kind == kp::NUMERIC ? numeric_not_bool : same_dtype));
    else {
      OpSchema s = binary(Op::op_name, policy, doc);
      s.attrs = attrs;
      r.add(std::move(s));
    }
  });
}

}  // namespace oar
