// Catalog: math composites (logsumexp, nan_to_num, isclose, outer, addmm,
// baddbmm, cdist), written with elementwise ops, reductions and matmul.
// PyTorch's semantics; see composites.h.
#include <cmath>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

std::pair<std::vector<int64_t>, Shape> reduced(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = int64_t(in.size());
  std::vector<bool> hit(size_t(std::max<int64_t>(nd, 1)), dims.empty());
  for (int64_t d : dims) hit[size_t(normalize_axis(d, std::max<int64_t>(nd, 1)))] = true;
  std::vector<int64_t> list;
  Shape out;
  for (int64_t d = 0; d < nd; ++d) {
    if (hit[size_t(d)]) list.push_back(d);
    if (!hit[size_t(d)]) out.push_back(in[size_t(d)]);
    else if (keepdim) out.push_back(1);
  }
  return {list, out};
}

namespace {

double largest_finite(DType d) {
  switch (d) {
    case DType::f64: return 1.7976931348623157e308;
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;
    default: return 3.4028234663852886e38;
  }
}

// ---- logsumexp ----

std::vector<TensorMeta> logsumexp_infer(const InferContext& c) {
  auto [dims, out] = reduced(c.shape(0), c.attrs.get_ints("dims"), c.attrs.get_bool("keepdim"));
  return {{out, is_floating(c.dtype(0)) ? c.dtype(0) : DType::f32}};
}

// log(sum(exp(x - m))) + m with m the (detached) max, so nothing overflows;
// rows of -inf (or holding an inf) take no shift.
std::vector<Tensor> logsumexp_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor x = is_floating(in[0].dtype()) ? in[0] : in[0].to(DType::f32);
  const bool keepdim = a.get_bool("keepdim");
  auto [dims, out] = reduced(x.shape(), a.get_ints("dims"), keepdim);
  if (x.dim() == 0) return {x.clone()};
  if (x.numel() == 0) return {Tensor::full(out, -kInf, x.dtype(), x.device())};
  const Attrs over{{"dims", dims}, {"keepdim", true}};
  Tensor m = op1("max", x.detach(), over);
  m = call1("where", {op2("eq", op1("abs", m), scalar_like(kInf, m)), scalar_like(0, m), m});
  Tensor y = op2("add", op1("log", op1("sum", op1("exp", op2("sub", x, m)), over)), m);
  return {keepdim ? y : y.reshape(out)};
}

// ---- nan_to_num, isclose ----

std::vector<Tensor> nan_to_num_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  if (!is_floating(x.dtype())) return {x.clone()};
  const double big = largest_finite(x.dtype());
  const auto& pos = a.get_floats("posinf");
  const auto& neg = a.get_floats("neginf");
  Tensor y = call1("where", {op2("ne", x, x), scalar_like(a.get_float("nan"), x), x});
  y = call1("where", {op2("eq", y, scalar_like(kInf, x)), scalar_like(pos.empty() ? big : pos[0], x), y});
  return {call1("where", {op2("eq", y, scalar_like(-kInf, x)), scalar_like(neg.empty() ? -big : neg[0], x), y})};
}

std::vector<TensorMeta> isclose_infer(const InferContext& c) {
  if (c.dtype(0) != c.dtype(1))
    throw DTypeError(str("isclose: a (", dtype_name(c.dtype(0)), ") and b (", dtype_name(c.dtype(1)),
                         ") must have the same dtype"));
  const double rtol = c.attrs.get_float("rtol"), atol = c.attrs.get_float("atol");
  if (!(rtol >= 0) || !(atol >= 0))
    throw ValueError(str("isclose: rtol (", rtol, ") and atol (", atol, ") must be non-negative"));
  return {{broadcast_all(c), DType::boolean}};
}

// |a - b| <= atol + rtol * |b|, or equal (infinities); NaNs match when equal_nan.
std::vector<Tensor> isclose_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  Tensor close = op2("eq", in[0], in[1]);
  if (in[0].dtype() == DType::boolean) return {close};
  const bool floating = is_floating(in[0].dtype());
  if (floating && a.get_bool("equal_nan"))
    close = op2("logical_or", close, op2("logical_and", op2("ne", in[0], in[0]), op2("ne", in[1], in[1])));
  const double rtol = a.get_float("rtol"), atol = a.get_float("atol");
  if (rtol == 0 && atol == 0) return {close};
  const Tensor x = floating ? in[0] : in[0].to(DType::f64);
  const Tensor y = floating ? in[1] : in[1].to(DType::f64);
  Tensor error = op1("abs", op2("sub", x, y));
  Tensor allowed = op2("add", op2("mul", op1("abs", y), scalar_like(rtol, y)), scalar_like(atol, y));
  Tensor finite = op2("lt", op1("abs", error), scalar_like(kInf, error));  // NaN compares false
  return {op2("logical_or", close, op2("logical_and", finite, op2("le", error, allowed)))};
}

// ---- outer, addmm, baddbmm ----

void require_dims(const InferContext& c, size_t i, int64_t n, const char* op) {
  if (c.ndim(i) != n)
    throw ShapeError(str(op, ": '", c.schema.inputs[i].name, "' must be ", n, "-D, got shape ", shape_str(c.shape(i))));
}

DType common_dtype(const InferContext& c, std::initializer_list<size_t> which) {
  DType d = c.dtype(*which.begin());
  for (size_t i : which)
    if (c.dtype(i) != d)
      throw DTypeError(str(c.schema.name, ": expected inputs of one dtype, got ", dtype_name(d), " and ",
                           dtype_name(c.dtype(i))));
  return d;
}

// beta * x + alpha * product; beta == 0 ignores x (NaN and inf included), as PyTorch.
Tensor scaled_sum(const Tensor& x, const Tensor& product, const Attrs& a) {
  const double beta = a.get_float("beta"), alpha = a.get_float("alpha");
  Tensor y = alpha == 1 ? product : op2("mul", product, scalar_like(alpha, product));
  if (beta == 0) return y;
  return op2("add", y, beta == 1 ? x : op2("mul", x, scalar_like(beta, x)));
}

std::vector<TensorMeta> scaled_product_infer(const InferContext& c, int64_t ndim) {
  const char* op = c.schema.name.c_str();
  require_dims(c, 1, ndim, op);
  require_dims(c, 2, ndim, op);
  const Shape &p = c.shape(1), &q = c.shape(2);
  if (p[size_t(ndim - 1)] != q[size_t(ndim - 2)] || (ndim == 3 && p[0] != q[0]))
    throw ShapeError(str(op, ": cannot multiply ", shape_str(p), " by ", shape_str(q)));
  Shape out = p;
  out.back() = q.back();
  if (broadcast_shapes(c.shape(0), out) != out)
    throw ShapeError(str(op, ": input of shape ", shape_str(c.shape(0)), " does not broadcast to the product's shape ",
                         shape_str(out)));
  return {{out, common_dtype(c, {0, 1, 2})}};
}

std::vector<Tensor> scaled_product_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  return {scaled_sum(in[0], call1("matmul", {in[1], in[2]}), a)};
}

// ---- cdist ----

// s ** (1/p) with a zero gradient (not NaN) where s is 0, as PyTorch's cdist.
Tensor safe_root(const Tensor& s, double p) {
  Tensor positive = op2("gt", s, scalar_like(0, s));
  Tensor safe = call1("where", {positive, s, scalar_like(1, s)});
  Tensor root = p == 2 ? op1("sqrt", safe) : op2("pow", safe, scalar_like(1.0 / p, s));
  return call1("where", {positive, root, scalar_like(0, s)});
}

std::vector<TensorMeta> cdist_infer(const InferContext& c) {
  if (c.ndim(0) < 2 || c.ndim(1) < 2)
    throw ShapeError(str("cdist: expects inputs of at least 2 dimensions, got ", shape_str(c.shape(0)), " and ",
                         shape_str(c.shape(1))));
  const Shape &a = c.shape(0), &b = c.shape(1);
  if (a.back() != b.back())
    throw ShapeError(str("cdist: x1 ", shape_str(a), " and x2 ", shape_str(b), " must have as many columns"));
  require_floating(c, 0);
  const DType d = common_dtype(c, {0, 1});
  const double p = c.attrs.get_float("p");
  if (!(p >= 0)) throw ValueError(str("cdist: p must be non-negative, got ", p));
  const std::string& mode = c.attrs.get_string("compute_mode");
  if (mode != "use_mm_for_euclid_dist_if_necessary" && mode != "use_mm_for_euclid_dist" &&
      mode != "donot_use_mm_for_euclid_dist")
    throw ValueError(str("cdist: '", mode, "' is not a valid compute_mode"));
  Shape out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  out.push_back(a[a.size() - 2]);
  out.push_back(b[b.size() - 2]);
  return {{out, d}};
}

// p-norm distances between rows; p = 2 goes through one matmul
// (|a|^2 - 2 a.b + |b|^2) when either side has more than 25 rows, as PyTorch.
std::vector<Tensor> cdist_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const double p = a.get_float("p");
  const std::string& mode = a.get_string("compute_mode");
  Shape batch = broadcast_shapes(Shape(in[0].shape().begin(), in[0].shape().end() - 2),
                                 Shape(in[1].shape().begin(), in[1].shape().end() - 2));
  auto with_batch = [&](const Tensor& t) {
    Shape s = batch;
    s.push_back(t.size(-2));
    s.push_back(t.size(-1));
    return t.expand(s);
  };
  const Tensor x1 = with_batch(in[0]), x2 = with_batch(in[1]);
  const int64_t last = x1.dim() - 1;
  const bool big = x1.size(-2) > 25 || x2.size(-2) > 25;
  if (p == 2 && (mode == "use_mm_for_euclid_dist" || (mode == "use_mm_for_euclid_dist_if_necessary" && big))) {
    const Attrs rows{{"dims", std::vector<int64_t>{last}}, {"keepdim", true}};
    Tensor n1 = op1("sum", op2("mul", x1, x1), rows), n2 = op1("sum", op2("mul", x2, x2), rows);
    Tensor lhs = call1("concat", {op2("mul", x1, scalar_like(-2, x1)), n1, Tensor::ones(n1.shape(), n1.dtype(), n1.device())},
                       {{"dim", last}});
    Tensor rhs = call1("concat", {x2, Tensor::ones(n2.shape(), n2.dtype(), n2.device()), n2}, {{"dim", last}});
    Tensor squared = call1("matmul", {lhs, rhs.transpose(-2, -1)});
    return {safe_root(op1("clamp", squared, {{"min", 0.0}}), 2)};
  }
  Tensor diff = op2("sub", x1.unsqueeze(-2), x2.unsqueeze(-3));
  const Attrs over{{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}};
  if (p == 0) return {op1("sum", op2("ne", diff, scalar_like(0, diff)), over).to(x1.dtype())};
  if (std::isinf(p)) return {op1("max", op1("abs", diff), over)};
  if (p == 1) return {op1("sum", op1("abs", diff), over)};
  Tensor powered = p == 2 ? op2("mul", diff, diff) : op2("pow", op1("abs", diff), scalar_like(p, diff));
  return {safe_root(op1("sum", powered, over), p)};
}

OpSchema math(const std::string& name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs, InferFn infer,
              std::string doc, DTypePolicy policy = DTypePolicy::kNone) {
  return make_schema(name, std::move(inputs), {"y"}, std::move(attrs), std::move(infer), std::move(doc), policy);
}

}  // namespace

void register_math_composites(OpRegistry& r) {
  const std::vector<InputSpec> x{InputSpec{"x"}};
  const auto flt = [](const char* name, double v) { return attr(name, AttrType::kFloat, v); };
  r.add(composite(math("logsumexp", x,
                       {attr("dims", AttrType::kInts, std::vector<int64_t>{}), attr("keepdim", AttrType::kBool, false)},
                       logsumexp_infer,
                       "log(sum(exp(x))) over dims (all when empty) without overflow; integers and bool give f32"),
                  logsumexp_decompose),
        {"[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true", "[6]", "[4,5]{-80:80} dims=[-1]"});
  r.add(composite(math("nan_to_num", x,
                       {flt("nan", 0.0), attr("posinf", AttrType::kFloats, std::vector<double>{}),
                        attr("neginf", AttrType::kFloats, std::vector<double>{})},
                       [](const InferContext& c) { return std::vector<TensorMeta>{{c.shape(0), c.dtype(0)}}; },
                       "NaN, +inf and -inf replaced by nan, posinf and neginf (empty: the dtype's largest finite "
                       "values)"),
                  nan_to_num_decompose),
        {"[3,4]", "[5] nan=1.5 posinf=[100] neginf=[-100]"});
  r.add(no_gradient(composite(
            math("isclose", {InputSpec{"a"}, InputSpec{"b"}},
                 {flt("rtol", 1e-5), flt("atol", 1e-8), attr("equal_nan", AttrType::kBool, false)}, isclose_infer,
                 "|a - b| <= atol + rtol * |b| elementwise (broadcast), or equal; NaNs match when equal_nan"),
            isclose_decompose)),
        {"[3,4] [3,4]", "[3,4] [4] rtol=0.5", "[5] [5] atol=1 equal_nan=true"});
  r.add(composite(math("outer", {InputSpec{"a"}, InputSpec{"b"}}, {},
                       [](const InferContext& c) {
                         require_dims(c, 0, 1, "outer");
                         require_dims(c, 1, 1, "outer");
                         return std::vector<TensorMeta>{{{c.shape(0)[0], c.shape(1)[0]}, c.dtype(0)}};
                       },
                       "a[i] * b[j] of two vectors", DTypePolicy::kPromote),
                  [](const std::vector<Tensor>& in, const Attrs&) {
                    // bool has no mul kernel; and is its product
                    const char* times = in[0].dtype() == DType::boolean ? "logical_and" : "mul";
                    return std::vector<Tensor>{op2(times, in[0].unsqueeze(1), in[1].unsqueeze(0))};
                  }),
        {"[4] [3]", "[1] [5]"});
  const std::vector<AttrSpec> scales{flt("beta", 1.0), flt("alpha", 1.0)};
  r.add(composite(math("addmm", {InputSpec{"x"}, InputSpec{"mat1"}, InputSpec{"mat2"}}, scales,
                       [](const InferContext& c) { return scaled_product_infer(c, 2); },
                       "beta * x + alpha * (mat1 @ mat2), x broadcast; beta = 0 ignores x"),
                  scaled_product_decompose),
        {"[3,5] [3,4] [4,5]", "[5] [3,4] [4,5] beta=0.5 alpha=2", "[3,1] [3,4] [4,5] beta=0"});
  r.add(composite(math("baddbmm", {InputSpec{"x"}, InputSpec{"batch1"}, InputSpec{"batch2"}}, scales,
                       [](const InferContext& c) { return scaled_product_infer(c, 3); },
                       "beta * x + alpha * (batch1 @ batch2) for batches of matrices; beta = 0 ignores x"),
                  scaled_product_decompose),
        {"[2,3,5] [2,3,4] [2,4,5]", "[3,5] [2,3,4] [2,4,5] beta=0.5 alpha=-1"});
  r.add(composite(math("cdist", {InputSpec{"x1"}, InputSpec{"x2"}},
                       {flt("p", 2.0), attr("compute_mode", AttrType::kString,
                                            std::string("use_mm_for_euclid_dist_if_necessary"))},
                       cdist_infer,
                       "p-norm distances between the rows of x1 [.., P, M] and x2 [.., R, M]: [.., P, R]"),
                  cdist_decompose),
        {"[4,3] [5,3]", "[2,4,3] [5,3] p=1", "[4,3] [5,3] p=3", "[30,3] [28,3]", "[4,3] [5,3] p=0",
         "[3,2] [4,2] compute_mode='use_mm_for_euclid_dist'"});
}

}  // namespace oar
