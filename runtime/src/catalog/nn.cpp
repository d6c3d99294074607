// Catalog: neural-network ops and the backward ops their gradient formulas
// call: matmul, conv2d, max/avg pooling, batch/layer norm, softmax and
// log_softmax. Layout is NCHW; semantics and attribute names follow PyTorch.
// All shape, dtype and attribute validation happens here, so kernels only
// compute. Backward ops take the attributes of their forward op.
#include <algorithm>
#include <array>

#include "catalog_util.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

using Pair = std::array<int64_t, 2>;

const std::string& op_name(const InferContext& c) { return c.schema.name; }

// Spatial attribute of one or two values (one value means both dims), each >= min.
Pair pair_attr(const InferContext& c, const char* name, int64_t min) {
  const auto& v = c.attrs.get_ints(name);
  if (v.size() != 1 && v.size() != 2)
    throw ValueError(str("op '", op_name(c), "': attribute '", name, "' needs 1 or 2 values, got ",
                         shape_str(v)));
  for (int64_t x : v)
    if (x < min)
      throw ValueError(str("op '", op_name(c), "': attribute '", name, "' values must be >= ", min,
                           ", got ", shape_str(v)));
  return {v[0], v.back()};
}

void require_same_dtype(const InferContext& c, size_t i, size_t ref) {
  if (c.inputs[i].defined() && c.dtype(i) != c.dtype(ref))
    throw DTypeError(str("op '", op_name(c), "': input '", c.schema.inputs[i].name, "' has dtype ",
                         dtype_name(c.dtype(i)), " but '", c.schema.inputs[ref].name, "' has ",
                         dtype_name(c.dtype(ref))));
}

void require_shape(const InferContext& c, size_t i, const Shape& want) {
  if (c.inputs[i].defined() && c.shape(i) != want)
    throw ShapeError(str("op '", op_name(c), "': input '", c.schema.inputs[i].name, "' must have shape ",
                         shape_str(want), ", got ", shape_str(c.shape(i))));
}

OpSchema make_op(const std::string& name, std::vector<InputSpec> inputs, std::vector<std::string> outputs,
                 std::vector<AttrSpec> attrs, InferFn infer, std::string doc,
                 DTypePolicy policy = DTypePolicy::kPromote, AmpCategory amp = AmpCategory::kNone) {
  return make_schema(name, std::move(inputs), std::move(outputs), std::move(attrs), std::move(infer),
                     std::move(doc), policy, amp);
}

// ---- matmul ----

std::vector<TensorMeta> matmul_infer(const InferContext& c) {
  if (c.dtype(0) == DType::boolean)  // after promotion: int @ bool computes in the integer dtype
    throw DTypeError("op 'matmul' does not support bool operands (as PyTorch); cast them to an integer or float dtype");
  const Shape &a = c.shape(0), &b = c.shape(1);
  if (a.size() < 2 || b.size() < 2)
    throw ShapeError(str("matmul: both operands need at least 2 dimensions, got a ", shape_str(a),
                         " and b ", shape_str(b)));
  if (a.back() != b[b.size() - 2])
    throw ShapeError(str("matmul: inner dimensions differ: a ", shape_str(a), " has K = ", a.back(),
                         " but b ", shape_str(b), " has K = ", b[b.size() - 2]));
  Shape out;
  try {
    out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  } catch (const ShapeError&) {
    throw ShapeError(str("matmul: batch dimensions of a ", shape_str(a), " and b ", shape_str(b),
                         " do not broadcast"));
  }
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return {{out, c.dtype(0)}};
}

// ---- linear ----

std::vector<TensorMeta> linear_infer(const InferContext& c) {
  require_floating(c, 0);
  const Shape &x = c.shape(0), &w = c.shape(1);
  if (w.size() != 2)
    throw ShapeError(str("linear: weight must be 2-D [out_features, in_features], got ", shape_str(w)));
  if (x.empty() || x.back() != w[1])
    throw ShapeError(str("linear: input ", shape_str(x), " does not match weight ", shape_str(w),
                         ": the last dim of input must equal in_features=", w[1]));
  if (c.input(2).defined()) {
    require_same_dtype(c, 2, 0);
    if (c.shape(2) != Shape{w[0]})
      throw ShapeError(str("linear: bias must have shape [", w[0], "] (out_features), got ",
                           shape_str(c.shape(2))));
  }
  Shape out(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  return {{out, c.dtype(0)}};
}

std::vector<Tensor> linear_decompose(const std::vector<Tensor>& in, const Attrs&) {
  Tensor y = call1("matmul", {in[0].dim() == 1 ? in[0].unsqueeze(0) : in[0], in[1].t()});
  if (in[0].dim() == 1) y = y.squeeze(0);
  return {in[2].defined() ? call1("add", {y, in[2]}) : y};
}

// ---- conv2d ----

struct ConvAttrs {
  Pair stride, padding, dilation;
  int64_t groups;
};

ConvAttrs conv_attrs(const InferContext& c) {
  ConvAttrs p{pair_attr(c, "stride", 1), pair_attr(c, "padding", 0), pair_attr(c, "dilation", 1),
              c.attrs.get_int("groups")};
  if (p.groups < 1) throw ValueError(str("op '", op_name(c), "': groups must be >= 1, got ", p.groups));
  return p;
}

std::vector<AttrSpec> conv_attr_specs() {
  return {attr("stride", AttrType::kInts, std::vector<int64_t>{1, 1}),
          attr("padding", AttrType::kInts, std::vector<int64_t>{0, 0}),
          attr("dilation", AttrType::kInts, std::vector<int64_t>{1, 1}),
          attr("groups", AttrType::kInt, int64_t(1))};
}

// Output shape of conv2d(x, w); names both shapes when they do not fit together.
Shape conv_output(const InferContext& c, const Shape& x, const Shape& w, const ConvAttrs& p) {
  const std::string& op = op_name(c);
  if (x.size() != 4) throw ShapeError(str("op '", op, "': input must be 4-D [N, C, H, W], got ", shape_str(x)));
  if (w.size() != 4)
    throw ShapeError(str("op '", op, "': weight must be 4-D [C_out, C_in / groups, kH, kW], got ", shape_str(w)));
  if (x[1] % p.groups || w[0] % p.groups || w[1] * p.groups != x[1])
    throw ShapeError(str("op '", op, "': input ", shape_str(x), " has ", x[1], " channels but weight ",
                         shape_str(w), " with groups = ", p.groups, " expects ", w[1] * p.groups,
                         " (and C_out ", w[0], " divisible by groups)"));
  Shape out{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t padded = x[2 + i] + 2 * p.padding[i];
    int64_t extent = p.dilation[i] * (w[2 + i] - 1) + 1;
    if (extent > padded)
      throw ShapeError(str("op '", op, "': kernel of weight ", shape_str(w), " (dilated extent ", extent,
                           ") is larger than the padded input ", shape_str(x), " (", padded, " with padding ",
                           p.padding[i], ")"));
    out[2 + i] = (padded - extent) / p.stride[i] + 1;
  }
  return out;
}

std::vector<TensorMeta> conv2d_infer(const InferContext& c) {
  require_floating(c, 0);
  ConvAttrs p = conv_attrs(c);
  Shape out = conv_output(c, c.shape(0), c.shape(1), p);
  if (c.inputs[2].defined()) {
    require_same_dtype(c, 2, 0);
    require_shape(c, 2, {c.shape(1)[0]});
  }
  return {{out, c.dtype(0)}};
}

Shape shape_attr(const InferContext& c, const char* name) {
  const auto& s = c.attrs.get_ints(name);
  if (s.size() != 4 || std::any_of(s.begin(), s.end(), [](int64_t v) { return v < 0; }))
    throw ValueError(str("op '", op_name(c), "': attribute '", name, "' must be 4 sizes >= 0, got ", shape_str(s)));
  return s;
}

void require_grad_shape(const InferContext& c, const Shape& expected) {
  if (c.shape(0) != expected)
    throw ShapeError(str("op '", op_name(c), "': grad_y has shape ", shape_str(c.shape(0)),
                         " but the forward output shape is ", shape_str(expected)));
}

// ---- pooling ----

struct PoolAttrs {
  Pair kernel, stride, padding;
  bool ceil_mode;
};

PoolAttrs pool_attrs(const InferContext& c) {
  PoolAttrs p;
  p.kernel = pair_attr(c, "kernel_size", 1);
  p.stride = c.attrs.get_ints("stride").empty() ? p.kernel : pair_attr(c, "stride", 1);
  p.padding = pair_attr(c, "padding", 0);
  p.ceil_mode = c.attrs.get_bool("ceil_mode");
  for (int i = 0; i < 2; ++i)
    if (p.padding[i] * 2 > p.kernel[i])
      throw ValueError(str("op '", op_name(c), "': padding ", p.padding[i], " must be at most half of kernel_size ",
                           p.kernel[i]));
  return p;
}

// PyTorch's pooling_output_shape: in ceil mode the last window must start
// inside the input or the left padding.
int64_t pool_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t num = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Shape pool_output(const InferContext& c, const Shape& x) {
  if (x.size() != 4) throw ShapeError(str("op '", op_name(c), "': input must be 4-D [N, C, H, W], got ", shape_str(x)));
  PoolAttrs p = pool_attrs(c);
  Shape out{x[0], x[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    out[2 + i] = pool_size(x[2 + i], p.kernel[i], p.stride[i], p.padding[i], p.ceil_mode);
    if (out[2 + i] <= 0)
      throw ShapeError(str("op '", op_name(c), "': input ", shape_str(x), " is too small for kernel_size ",
                           p.kernel[i], " with padding ", p.padding[i], " (output size ", out[2 + i], ")"));
  }
  return out;
}

std::vector<AttrSpec> pool_attr_specs(bool avg) {
  std::vector<AttrSpec> a = {attr("kernel_size", AttrType::kInts),
                             attr("stride", AttrType::kInts, std::vector<int64_t>{}),
                             attr("padding", AttrType::kInts, std::vector<int64_t>{0, 0}),
                             attr("ceil_mode", AttrType::kBool, false)};
  if (avg) a.push_back(attr("count_include_pad", AttrType::kBool, true));
  return a;
}

// ---- normalization ----

std::vector<TensorMeta> batch_norm_infer(const InferContext& c) {
  require_floating(c, 0);
  const Shape& x = c.shape(0);
  if (x.size() < 2) throw ShapeError(str("batch_norm: input must be [N, C, ...], got ", shape_str(x)));
  for (size_t i = 1; i < 5; ++i) {
    require_same_dtype(c, i, 0);
    require_shape(c, i, {x[1]});
  }
  int64_t per_channel = numel_of(x) / std::max<int64_t>(x[1], 1);
  if (c.attrs.get_bool("training") && per_channel <= 1 && x[1] > 0)
    throw ValueError(str("batch_norm: expected more than 1 value per channel when training, got input ", shape_str(x)));
  if (!c.attrs.get_bool("training") && (!c.inputs[3].defined() || !c.inputs[4].defined()))
    throw ValueError("batch_norm: running_mean and running_var are required when training is false");
  return {{x, c.dtype(0)}, {{x[1]}, c.dtype(0)}, {{x[1]}, c.dtype(0)}};
}

std::vector<TensorMeta> batch_norm_backward_infer(const InferContext& c) {
  require_floating(c, 0);
  const Shape& x = c.shape(1);
  if (x.size() < 2) throw ShapeError(str("batch_norm_backward: x must be [N, C, ...], got ", shape_str(x)));
  require_shape(c, 0, x);
  for (size_t i = 1; i < 5; ++i) require_same_dtype(c, i, 0);
  for (size_t i = 2; i < 5; ++i) require_shape(c, i, {x[1]});
  return {{x, c.dtype(0)}, {{x[1]}, c.dtype(0)}, {{x[1]}, c.dtype(0)}};
}

// Splits x's shape at normalized_ndim: (leading dims, normalized dims).
std::pair<Shape, Shape> layer_norm_split(const InferContext& c, const Shape& x) {
  int64_t nd = c.attrs.get_int("normalized_ndim");
  if (nd < 1 || nd > int64_t(x.size()))
    throw ValueError(str("op '", op_name(c), "': normalized_ndim must be in [1, ", x.size(), "] for input ",
                         shape_str(x), ", got ", nd));
  return {Shape(x.begin(), x.end() - nd), Shape(x.end() - nd, x.end())};
}

std::vector<TensorMeta> layer_norm_infer(const InferContext& c) {
  require_floating(c, 0);
  auto [lead, norm] = layer_norm_split(c, c.shape(0));
  for (size_t i = 1; i < 3; ++i) {
    require_same_dtype(c, i, 0);
    require_shape(c, i, norm);
  }
  return {{c.shape(0), c.dtype(0)}, {lead, c.dtype(0)}, {lead, c.dtype(0)}};
}

std::vector<TensorMeta> layer_norm_backward_infer(const InferContext& c) {
  require_floating(c, 0);
  auto [lead, norm] = layer_norm_split(c, c.shape(1));
  require_shape(c, 0, c.shape(1));
  for (size_t i = 1; i < 5; ++i) require_same_dtype(c, i, 0);
  require_shape(c, 2, norm);
  require_shape(c, 3, lead);
  require_shape(c, 4, lead);
  return {{c.shape(1), c.dtype(0)}, {norm, c.dtype(0)}, {norm, c.dtype(0)}};
}

// ---- softmax ----

std::vector<TensorMeta> softmax_infer(const InferContext& c) {
  require_floating(c, 0);
  normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(c.ndim(0), 1));
  for (size_t i = 1; i < c.inputs.size(); ++i) require_shape(c, i, c.shape(0));
  return {{c.shape(0), c.dtype(0)}};
}

// `base` with its activation (relu, sigmoid or tanh) applied in the same kernel:
// a oneDNN post-op on the CPU. Graph fusion makes these where the device has
// the kernel; everywhere else, and under autograd, they run as their parts.
OpSchema with_activation(const OpSchema& base, const std::string& name) {
  OpSchema s = base;
  s.id = -1;
  s.name = name;
  s.attrs.push_back(attr("activation", AttrType::kString, std::string("relu")));
  s.infer = [name, infer = base.infer](const InferContext& c) {
    const std::string& act = c.attrs.get_string("activation");
    if (act != "relu" && act != "sigmoid" && act != "tanh")
      throw ValueError(str(name, ": activation must be relu, sigmoid or tanh, got '", act, "'"));
    return infer(c);
  };
  s.decompose = [base_name = base.name](const std::vector<Tensor>& in, const Attrs& attrs) {
    Attrs base_attrs;
    for (const auto& [attr_name, value] : attrs.items())
      if (attr_name != "activation") base_attrs.set(attr_name, value);
    Tensor y = call1(base_name, in, base_attrs);
    return std::vector<Tensor>{call1(attrs.get_string("activation"), {y})};
  };
  s.role = OpRole::kFusion;
  s.gradient = Gradient::kDecomposition;
  s.doc = "activation(" + base.name + "(...)) in one kernel, activation one of relu, sigmoid, tanh (made by graph "
          "fusion); " + base.doc;
  return s;
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  const auto none = DTypePolicy::kNone;
  const auto lower = AmpCategory::kLowerPrecision;
  const auto full = AmpCategory::kFullPrecision;

  OpSchema mm = make_op("matmul", {InputSpec{"a"}, InputSpec{"b"}}, {"y"}, {}, matmul_infer,
                        "a [..., M, K] @ b [..., K, N]; batch dims broadcast; integer products summed in i64, cast back",
                        DTypePolicy::kPromote, lower);
  mm.strided_inputs = true;  // transposed operands reach oneDNN without a copy
  // Integer products (oneDNN and cuBLAS multiply floats): broadcast, multiply
  // and sum in i64, cast back (wrapping as PyTorch's). The [..., M, k, N] terms
  // are formed k at a time, at most ~16M entries each. Floats decline, so a
  // device without a float kernel gets the CPU fallback instead.
  mm.decompose = [](const std::vector<Tensor>& in, const Attrs&) -> std::vector<Tensor> {
    if (is_floating(in[0].dtype())) return {};
    const Tensor a = in[0].unsqueeze(-1), b = in[1].unsqueeze(-3);  // [..., M, K, 1], [..., 1, K, N]
    const int64_t K = in[0].shape().back();
    const int64_t per_k = std::max<int64_t>(1, numel_of(broadcast_shapes(a.slice(-2, 0, 1).shape(),
                                                                         b.slice(-2, 0, 1).shape())));
    const int64_t step = std::max<int64_t>(1, (int64_t(1) << 24) / per_k);
    Tensor sum;
    int64_t k = 0;
    do {  // once at least: K = 0 sums nothing into zeros
      const int64_t end = std::min(K, k + step);
      Tensor terms = call1("mul", {a.slice(-2, k, end), b.slice(-2, k, end)});
      Tensor part = call1("sum", {terms}, {{"dims", std::vector<int64_t>{-2}}, {"keepdim", false}});
      sum = sum.defined() ? call1("add", {sum, part}) : part;
      k = end;
    } while (k < K);
    return {sum.to(in[0].dtype())};
  };
  r.add(std::move(mm), {"[3,4] [4,5]", "[2,3,4] [4,5]", "[2,1,3,4] [3,4,2]", "[1,7] [7,1]", "large:[256,300] [300,200]"});

  OpSchema linear = make_op("linear", {InputSpec{"x"}, InputSpec{"weight"}, optional_input("bias")}, {"y"}, {},
                            linear_infer, "x [..., in] @ weight [out, in]^T + bias [out] (bias optional)",
                            DTypePolicy::kPromote, lower);
  linear.decompose = linear_decompose;
  r.add(std::move(linear), {"[3,4] [5,4] [5]", "[2,3,4] [5,4] -", "[4] [3,4] [3]"});
  r.add(with_activation(r.get("linear"), "linear_act"),
        {"[3,4] [5,4] [5]", "[3,4] [5,4] - activation='sigmoid'", "[2,3,4] [5,4] [5] activation='tanh'"});

  r.add(make_op("conv2d", {InputSpec{"x"}, InputSpec{"weight"}, optional_input("bias")}, {"y"},
                conv_attr_specs(), conv2d_infer,
                "2-D convolution (cross-correlation) of x [N, C, H, W] with weight [C_out, C / groups, kH, kW]",
                DTypePolicy::kPromote, lower),
        {"[2,3,7,7] [4,3,3,3] [4]", "[2,4,8,8] [6,2,3,3] - stride=[2,2] padding=[1,1] groups=2",
         "[1,2,9,9] [3,2,3,3] [3] dilation=[2,2] padding=[2,1]", "[2,3,5,5] [4,3,1,1] - stride=[2]",
         "large:[8,16,32,32] [32,16,3,3] [32] padding=[1,1]"});
  r.add(with_activation(r.get("conv2d"), "conv2d_act"),
        {"[2,3,7,7] [4,3,3,3] [4]", "[2,4,8,8] [6,2,3,3] - stride=[2,2] padding=[1,1] groups=2 activation='sigmoid'",
         "[1,2,6,6] [3,2,3,3] [3] activation='tanh'"});
  {
    auto attrs = conv_attr_specs();
    attrs.insert(attrs.begin(), attr("input_shape", AttrType::kInts));
    r.add(backward_kernel(make_op("conv2d_backward_data", {InputSpec{"grad_y"}, InputSpec{"weight"}}, {"grad_x"}, attrs,
                  [](const InferContext& c) {
                    require_floating(c, 0);
                    Shape x = shape_attr(c, "input_shape");
                    require_grad_shape(c, conv_output(c, x, c.shape(1), conv_attrs(c)));
                    return std::vector<TensorMeta>{{x, c.dtype(0)}};
                  },
                  "gradient of conv2d with respect to its input")),
          {"[2,4,5,5] [4,3,3,3] input_shape=[2,3,7,7]",
           "[2,6,4,4] [6,2,3,3] input_shape=[2,4,8,8] stride=[2,2] padding=[1,1] groups=2",
           "[1,3,9,7] [3,2,3,3] input_shape=[1,2,9,9] dilation=[2,2] padding=[2,1]"});
  }
  {
    auto attrs = conv_attr_specs();
    attrs.insert(attrs.begin(), attr("weight_shape", AttrType::kInts));
    r.add(backward_kernel(make_op("conv2d_backward_weight", {InputSpec{"grad_y"}, InputSpec{"x"}}, {"grad_w"}, attrs,
                  [](const InferContext& c) {
                    require_floating(c, 0);
                    Shape w = shape_attr(c, "weight_shape");
                    require_grad_shape(c, conv_output(c, c.shape(1), w, conv_attrs(c)));
                    return std::vector<TensorMeta>{{w, c.dtype(0)}};
                  },
                  "gradient of conv2d with respect to its weight")),
          {"[2,4,5,5] [2,3,7,7] weight_shape=[4,3,3,3]",
           "[2,6,4,4] [2,4,8,8] weight_shape=[6,2,3,3] stride=[2,2] padding=[1,1] groups=2",
           "[1,3,9,7] [1,2,9,9] weight_shape=[3,2,3,3] dilation=[2,2] padding=[2,1]"});
  }

  for (bool avg : {false, true}) {
    std::string name = avg ? "avg_pool2d" : "max_pool2d";
    r.add(make_op(name, {InputSpec{"x"}}, {"y"}, pool_attr_specs(avg),
                  [](const InferContext& c) {
                    require_floating(c, 0);
                    return std::vector<TensorMeta>{{pool_output(c, c.shape(0)), c.dtype(0)}};
                  },
                  avg ? "2-D average pooling over x [N, C, H, W]" : "2-D max pooling over x [N, C, H, W]"),
          {"[2,3,6,6] kernel_size=[2,2]", "[1,2,7,7] kernel_size=[3,3] stride=[2,2] padding=[1,1]",
           "[1,2,7,6] kernel_size=[2,2] ceil_mode=true",
           avg ? "[1,2,7,7] kernel_size=[3,3] stride=[2,2] padding=[1,1] count_include_pad=false"
               : "[1,2,5,5] kernel_size=[3,1] stride=[1,2]"});
    r.add(backward_kernel(make_op(name + "_backward", {InputSpec{"grad_y"}, InputSpec{"x"}}, {"grad_x"}, pool_attr_specs(avg),
                  [](const InferContext& c) {
                    require_floating(c, 0);
                    require_grad_shape(c, pool_output(c, c.shape(1)));
                    return std::vector<TensorMeta>{{c.shape(1), c.dtype(0)}};
                  },
                  "gradient of " + name + " with respect to x")),
          {"[2,3,3,3] [2,3,6,6] kernel_size=[2,2]", "[1,2,4,4] [1,2,7,7] kernel_size=[3,3] stride=[2,2] padding=[1,1]",
           "[1,2,4,3] [1,2,7,6] kernel_size=[2,2] ceil_mode=true"});
  }

  r.add(make_op("batch_norm",
                {InputSpec{"x"}, optional_input("weight"), optional_input("bias"), optional_input("running_mean"),
                 optional_input("running_var")},
                {"y", "save_mean", "save_var"},
                {attr("training", AttrType::kBool, false), attr("eps", AttrType::kFloat, 1e-5)}, batch_norm_infer,
                "batch normalization over dim 1 of x [N, C, ...]; training uses batch statistics (biased "
                "variance) and returns them, inference uses and returns the running ones; running stats are "
                "not updated",
                none, full),
        {"[4,3,5,5] [3] [3] [3] [3]{0.5:2}", "[4,3,5,5] [3] [3] - - training=true", "[6,3] - - [3] [3]{0.5:2}",
         "[5,2,7] - [2] - - training=true eps=0.001"});
  r.add(backward_kernel(make_op("batch_norm_backward",
                {InputSpec{"grad_y"}, InputSpec{"x"}, optional_input("weight"), InputSpec{"save_mean"},
                 InputSpec{"save_var"}},
                {"grad_x", "grad_weight", "grad_bias"}, {attr("eps", AttrType::kFloat, 1e-5)},
                batch_norm_backward_infer, "training-mode gradient of batch_norm", none),
                        Gradient::kFirstOrderOnly),
        {"[4,3,5,5] [4,3,5,5] [3] [3] [3]{0.5:2}", "[6,3] [6,3] - [3] [3]{0.5:2}"});
  r.add(make_op("layer_norm", {InputSpec{"x"}, optional_input("weight"), optional_input("bias")},
                {"y", "mean", "var"},
                {attr("normalized_ndim", AttrType::kInt, int64_t(1)), attr("eps", AttrType::kFloat, 1e-5)},
                layer_norm_infer,
                "layer normalization over the last normalized_ndim dims; mean/var (biased) have the leading shape",
                none, full),
        {"[3,4,5] [5] [5]", "[3,4,5] - - normalized_ndim=2", "[6,8] [8] - eps=0.01"});
  r.add(backward_kernel(make_op("layer_norm_backward",
                {InputSpec{"grad_y"}, InputSpec{"x"}, optional_input("weight"), InputSpec{"mean"}, InputSpec{"var"}},
                {"grad_x", "grad_weight", "grad_bias"},
                {attr("normalized_ndim", AttrType::kInt, int64_t(1)), attr("eps", AttrType::kFloat, 1e-5)},
                layer_norm_backward_infer, "gradient of layer_norm", none),
                        Gradient::kFirstOrderOnly),
        {"[3,4,5] [3,4,5] [5] [3,4] [3,4]{0.5:2}", "[3,4,5] [3,4,5] - [3] [3]{0.5:2} normalized_ndim=2"});

  for (const char* name : {"softmax", "log_softmax"}) {
    std::string n = name;
    r.add(make_op(n, {InputSpec{"x"}}, {"y"}, {attr("dim", AttrType::kInt, int64_t(-1))}, softmax_infer,
                  n == "softmax" ? "exp(x) / sum(exp(x)) along dim" : "x - log(sum(exp(x))) along dim", none, full),
          {"[3,5]", "[2,3,4] dim=1", "[4] dim=0", "large:[64,4099]"});
    r.add(backward_kernel(make_op(n + "_backward", {InputSpec{"grad_y"}, InputSpec{"y"}}, {"grad_x"},
                                  {attr("dim", AttrType::kInt, int64_t(-1))}, softmax_infer,
                                  "gradient of " + n + " given its output y")),
          {n == "softmax" ? "[3,5] [3,5]{0:1}" : "[3,5] [3,5]{-3:0}",
           n == "softmax" ? "[2,3,4] [2,3,4]{0:1} dim=1" : "[2,3,4] [2,3,4]{-3:0} dim=1"});
  }
}

}  // namespace oar
