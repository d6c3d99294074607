// Catalog: products and differences written with matmul, elementwise ops and
// views (dot, mv, kron, linalg_cross, tensordot, block_diag, lerp, addcmul,
// addcdiv, diff). PyTorch's semantics; see composites.h.
#include <numeric>
#include <set>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// ---- dot, mv ----

void require_same_dtype(const InferContext& c) {
  if (c.dtype(0) != c.dtype(1))
    throw DTypeError(str(c.schema.name, ": expected both inputs to have the same dtype, got ", dtype_name(c.dtype(0)),
                         " and ", dtype_name(c.dtype(1))));
}

std::vector<TensorMeta> dot_infer(const InferContext& c) {
  require_same_dtype(c);
  require_ndim(c, 0, 1);
  require_ndim(c, 1, 1);
  if (c.shape(0)[0] != c.shape(1)[0])
    throw ShapeError(str("dot: vectors of ", c.shape(0)[0], " and ", c.shape(1)[0], " entries"));
  return {{{}, c.dtype(0)}};
}

// a [M, K] @ b [K, N]. matmul is floating-only (oneDNN, cuBLAS), so integer
// products broadcast, multiply and sum; the sum gives i64, cast back as PyTorch.
Tensor mat_product(const Tensor& a, const Tensor& b) {
  if (is_floating(a.dtype())) return call1("matmul", {a, b});
  const Tensor terms = op2("mul", a.unsqueeze(2), b.unsqueeze(0));
  return op1("sum", terms, {{"dims", std::vector<int64_t>{1}}, {"keepdim", false}}).to(a.dtype());
}

std::vector<Tensor> dot_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const int64_t k = in[0].shape()[0];
  return {mat_product(in[0].reshape({1, k}), in[1].reshape({k, 1})).reshape({})};
}

std::vector<TensorMeta> mv_infer(const InferContext& c) {
  require_same_dtype(c);
  require_ndim(c, 0, 2);
  require_ndim(c, 1, 1);
  if (c.shape(0)[1] != c.shape(1)[0])
    throw ShapeError(str("mv: cannot multiply a matrix ", shape_str(c.shape(0)), " by a vector ",
                         shape_str(c.shape(1))));
  return {{{c.shape(0)[0]}, c.dtype(0)}};
}

// ---- kron ----

// Both shapes left-padded with 1s to the larger rank.
std::pair<Shape, Shape> padded(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape pa(n - a.size(), 1), pb(n - b.size(), 1);
  pa.insert(pa.end(), a.begin(), a.end());
  pb.insert(pb.end(), b.begin(), b.end());
  return {pa, pb};
}

std::vector<TensorMeta> kron_infer(const InferContext& c) {
  auto [a, b] = padded(c.shape(0), c.shape(1));
  Shape out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a[i] * b[i]);
  return {{out, c.dtype(0)}};
}

// a[..., i, ...] * b[..., j, ...] laid out at i * size_b + j: a with a 1 after
// each dim times b with a 1 before each, then merged pairwise.
std::vector<Tensor> kron_decompose(const std::vector<Tensor>& in, const Attrs&) {
  auto [a, b] = padded(in[0].shape(), in[1].shape());
  Shape sa, sb, out;
  for (size_t i = 0; i < a.size(); ++i) {
    sa.insert(sa.end(), {a[i], 1});
    sb.insert(sb.end(), {1, b[i]});
    out.push_back(a[i] * b[i]);
  }
  return {op2("mul", in[0].reshape(sa), in[1].reshape(sb)).reshape(out)};
}

// ---- linalg_cross ----

std::vector<TensorMeta> cross_infer(const InferContext& c) {
  const Shape shape = broadcast_shapes(c.shape(0), c.shape(1));
  const int64_t d = normalize_axis(c.attrs.get_int("dim"), int64_t(shape.size()));
  if (shape[size_t(d)] != 3)
    throw ShapeError(str("linalg_cross: dimension ", c.attrs.get_int("dim"), " must have length 3, got shapes ",
                         shape_str(c.shape(0)), " and ", shape_str(c.shape(1))));
  return {{shape, c.dtype(0)}};
}

std::vector<Tensor> cross_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Shape shape = broadcast_shapes(in[0].shape(), in[1].shape());
  const int64_t d = normalize_axis(a.get_int("dim"), int64_t(shape.size()));
  const Tensor x = in[0].expand(shape), y = in[1].expand(shape);
  auto part = [&](const Tensor& t, int64_t k) { return t.narrow(d, k, 1); };
  // (x1 y2 - x2 y1, x2 y0 - x0 y2, x0 y1 - x1 y0)
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t i = (k + 1) % 3, j = (k + 2) % 3;
    parts.push_back(op2("sub", op2("mul", part(x, i), part(y, j)), op2("mul", part(x, j), part(y, i))));
  }
  return {call1("concat", parts, {{"dim", d}})};
}

// ---- tensordot ----

struct Contraction {
  std::vector<int64_t> da, db, ra, rb;  // contracted and kept dims of a and b
};

Contraction contraction(const std::string& op, const Shape& a, const Shape& b, const Attrs& attrs) {
  Contraction c;
  const int64_t na = int64_t(a.size()), nb = int64_t(b.size());
  std::set<int64_t> seen_a, seen_b;
  for (int64_t d : attrs.get_ints("dims_a")) c.da.push_back(normalize_axis(d, na));
  for (int64_t d : attrs.get_ints("dims_b")) c.db.push_back(normalize_axis(d, nb));
  if (c.da.size() != c.db.size())
    throw ValueError(str(op, ": both dimension lists should have the same length, got ", c.da.size(), " and ",
                         c.db.size()));
  for (size_t k = 0; k < c.da.size(); ++k) {
    if (!seen_a.insert(c.da[k]).second || !seen_b.insert(c.db[k]).second)
      throw ValueError(str(op, ": a dimension appears twice in dims_a or dims_b"));
    if (a[size_t(c.da[k])] != b[size_t(c.db[k])])
      throw ShapeError(str(op, ": contracted dimensions need to match, but a has size ", a[size_t(c.da[k])],
                           " in dim ", c.da[k], " and b has size ", b[size_t(c.db[k])], " in dim ", c.db[k]));
  }
  for (int64_t d = 0; d < na; ++d)
    if (!seen_a.count(d)) c.ra.push_back(d);
  for (int64_t d = 0; d < nb; ++d)
    if (!seen_b.count(d)) c.rb.push_back(d);
  return c;
}

Shape kept_shape(const Contraction& c, const Shape& a, const Shape& b) {
  Shape out;
  for (int64_t d : c.ra) out.push_back(a[size_t(d)]);
  for (int64_t d : c.rb) out.push_back(b[size_t(d)]);
  return out;
}

int64_t product_of(const std::vector<int64_t>& dims, const Shape& s) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s[size_t(d)];
  return p;
}

std::vector<Tensor> tensordot_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Shape &sa = in[0].shape(), &sb = in[1].shape();
  const Contraction c = contraction("tensordot", sa, sb, a);
  std::vector<int64_t> pa = c.ra, pb = c.db;
  pa.insert(pa.end(), c.da.begin(), c.da.end());
  pb.insert(pb.end(), c.rb.begin(), c.rb.end());
  const int64_t k = product_of(c.da, sa);
  const Tensor am = op1("permute", in[0], {{"dims", pa}}).reshape({product_of(c.ra, sa), k});
  const Tensor bm = op1("permute", in[1], {{"dims", pb}}).reshape({k, product_of(c.rb, sb)});
  return {mat_product(am, bm).reshape(kept_shape(c, sa, sb))};
}

// ---- block_diag ----

std::vector<TensorMeta> block_diag_infer(const InferContext& c) {
  int64_t rows = 0, cols = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Shape& s = c.shape(i);
    if (s.size() > 2)
      throw ShapeError(str("block_diag: inputs must have 2 or fewer dimensions; input ", i, " has shape ",
                           shape_str(s)));
    rows += s.size() == 2 ? s[0] : 1;
    cols += s.size() == 2 ? s[1] : s.size() == 1 ? s[0] : 1;
  }
  return {{{rows, cols}, c.inputs.empty() ? DType::f32 : c.dtype(0)}};
}

std::vector<Tensor> block_diag_decompose(const std::vector<Tensor>& in, const Attrs&) {
  int64_t width = 0;
  std::vector<Tensor> blocks;
  for (const Tensor& t : in) {
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.numel()}));
    width += blocks.back().size(1);
  }
  std::vector<Tensor> rows;
  int64_t left = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), w = b.size(1);
    rows.push_back(call1("concat",
                         {Tensor::zeros({r, left}, b.dtype(), b.device()), b,
                          Tensor::zeros({r, width - left - w}, b.dtype(), b.device())},
                         {{"dim", int64_t(1)}}));
    left += w;
  }
  return {call1("concat", rows, {{"dim", int64_t(0)}})};
}

// ---- lerp, addcmul, addcdiv ----

std::vector<TensorMeta> broadcast_infer(const InferContext& c) { return {{broadcast_all(c), c.dtype(0)}}; }

// addcmul on integers takes an integral value only (as PyTorch).
std::vector<TensorMeta> addc_infer(const InferContext& c) {
  const double v = c.attrs.get_float("value");
  if (!is_floating(c.dtype(0)) && v != double(int64_t(v)))
    throw DTypeError(str(c.schema.name, ": value ", v, " is not an integer, so it cannot scale ",
                         dtype_name(c.dtype(0)), " tensors"));
  return broadcast_infer(c);
}

Tensor times_value(const Tensor& t, double value) {
  return value == 1 ? t : op2("mul", t, scalar_like(value, t));
}

// start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w), as PyTorch.
std::vector<Tensor> lerp_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor &a = in[0], &b = in[1], &w = in[2];
  const Tensor span = op2("sub", b, a);
  const Tensor near_start = op2("lt", op1("abs", w), scalar_like(0.5, w));
  return {call1("where", {near_start, op2("add", a, op2("mul", w, span)),
                          op2("sub", b, op2("mul", span, op2("sub", scalar_like(1, w), w)))})};
}

// ---- diff ----

std::vector<TensorMeta> diff_infer(const InferContext& c) {
  if (c.ndim(0) == 0) throw ShapeError("diff: expects input to be at least one-dimensional");
  const int64_t n = c.attrs.get_int("n");
  if (n < 0) throw ValueError(str("diff: order n must be non-negative but got ", n));
  const int64_t d = normalize_axis(c.attrs.get_int("dim"), c.ndim(0));
  Shape out = c.shape(0);
  for (size_t i : {size_t(1), size_t(2)}) {
    if (!c.inputs[i].defined()) continue;
    const Shape& s = c.shape(i);
    Shape expect = c.shape(0);
    if (s.size() == expect.size()) expect[size_t(d)] = s[size_t(d)];
    if (s != expect || c.dtype(i) != c.dtype(0))
      throw ShapeError(str("diff: ", c.schema.inputs[i].name, " ", dtype_name(c.dtype(i)), shape_str(s),
                           " must match the input ", dtype_name(c.dtype(0)), shape_str(c.shape(0)),
                           " except in dimension ", d));
    out[size_t(d)] += s[size_t(d)];
  }
  out[size_t(d)] = std::max<int64_t>(out[size_t(d)] - n, 0);
  return {{out, c.dtype(0)}};
}

std::vector<Tensor> diff_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t d = normalize_axis(a.get_int("dim"), in[0].dim());
  std::vector<Tensor> parts;
  for (size_t i : {size_t(1), size_t(0), size_t(2)})
    if (in[i].defined()) parts.push_back(in[i]);
  bool fresh = parts.size() > 1;
  Tensor x = fresh ? call1("concat", parts, {{"dim", d}}) : in[0];
  for (int64_t k = 0; k < a.get_int("n"); ++k) {
    const int64_t size = x.size(d);
    if (size == 0) break;
    const Tensor hi = x.narrow(d, 1, size - 1), lo = x.narrow(d, 0, size - 1);
    x = x.dtype() == DType::boolean ? op2("logical_xor", hi, lo) : op2("sub", hi, lo);
    fresh = true;
  }
  return {fresh ? x : x.clone()};  // n = 0: a copy, never the input itself
}

OpSchema linear(const std::string& name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs, InferFn infer,
                std::string doc, DTypePolicy policy = DTypePolicy::kPromote) {
  return make_schema(name, std::move(inputs), {"y"}, std::move(attrs), std::move(infer), std::move(doc), policy);
}

}  // namespace

void register_linear_composites(OpRegistry& r) {
  const InputSpec a{"a"}, b{"b"};
  r.add(composite(linear("dot", {a, b}, {}, dot_infer, "the inner product of two vectors", DTypePolicy::kNone),
                  dot_decompose),
        {"[5] [5]", "[1] [1]", "[0] [0]"});
  r.add(composite(linear("mv", {InputSpec{"mat"}, InputSpec{"vec"}}, {}, mv_infer, "matrix times vector", DTypePolicy::kNone),
                  [](const std::vector<Tensor>& in, const Attrs&) {
                    const Shape& s = in[0].shape();
                    return std::vector<Tensor>{mat_product(in[0], in[1].reshape({s[1], 1})).reshape({s[0]})};
                  }),
        {"[3,4] [4]", "[1,5] [5]"});
  r.add(composite(linear("kron", {a, b}, {}, kron_infer, "the Kronecker product (ranks padded with leading 1s)"),
                  kron_decompose),
        {"[2,3] [4,5]", "[3] [2,2]", "[2,1,3] [2,2]"});
  r.add(composite(linear("linalg_cross", {a, b}, {attr("dim", AttrType::kInt, int64_t(-1))}, cross_infer,
                         "the cross product of 3-vectors along dim (inputs broadcast)"),
                  cross_decompose),
        {"[4,3] [4,3]", "[3,5] [1,5] dim=0", "[3] [2,3]"});
  r.add(composite(linear("tensordot", {a, b},
                         {attr("dims_a", AttrType::kInts), attr("dims_b", AttrType::kInts)},
                         [](const InferContext& c) {
                           const Contraction k = contraction("tensordot", c.shape(0), c.shape(1), c.attrs);
                           return std::vector<TensorMeta>{{kept_shape(k, c.shape(0), c.shape(1)), c.dtype(0)}};
                         },
                         "sums a's dims_a against b's dims_b (pairwise); the result has a's other dims, then b's"),
                  tensordot_decompose),
        {"[3,4,5] [4,5,2] dims_a=[1,2] dims_b=[0,1]", "[3,4] [5,4] dims_a=[1] dims_b=[1]",
         "[2,3] [4] dims_a=[] dims_b=[]", "[2,3,4] [4,3] dims_a=[-1,1] dims_b=[0,-1]"});
  InputSpec blocks = variadic("tensors");
  r.add(composite(linear("block_diag", {blocks}, {}, block_diag_infer,
                         "a block-diagonal matrix of the inputs (0-D and 1-D inputs are one row)"),
                  block_diag_decompose),
        {"([2,3] [1,2] [4])", "([3,3])", "([2,2] [] [0,3])"});
  r.add(composite(linear("lerp", {InputSpec{"start"}, InputSpec{"end"}, InputSpec{"weight"}}, {}, broadcast_infer,
                         "start + weight * (end - start), broadcast; from the nearer end (exact at weight 0 and 1)",
                         DTypePolicy::kPromoteToFloat),
                  lerp_decompose),
        {"[3,4] [3,4] [3,4]{-0.5:1.5}", "[3,4] [4] []{0:1}"});
  const AttrSpec value = attr("value", AttrType::kFloat, 1.0);
  const std::vector<InputSpec> three{InputSpec{"x"}, InputSpec{"tensor1"}, InputSpec{"tensor2"}};
  r.add(composite(linear("addcmul", three, {value}, addc_infer, "x + value * tensor1 * tensor2, broadcast"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{
                        op2("add", in[0], times_value(op2("mul", in[1], in[2]), a.get_float("value")))};
                  }),
        {"[3,4] [3,4] [3,4] value=0.5", "[4] [3,4] [3,1]"});
  r.add(composite(linear("addcdiv", three, {value}, addc_infer, "x + value * tensor1 / tensor2, broadcast",
                         DTypePolicy::kPromoteToFloat),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{
                        op2("add", in[0], times_value(op2("div", in[1], in[2]), a.get_float("value")))};
                  }),
        {"[3,4] [3,4] [3,4]{0.5:2} value=-2", "[4] [3,4] [3,1]{1:3}"});
  r.add(composite(make_schema("diff", {InputSpec{"x"}, optional_input("prepend"), optional_input("append")}, {"y"},
                              {attr("n", AttrType::kInt, int64_t(1)), attr("dim", AttrType::kInt, int64_t(-1))},
                              diff_infer,
                              "differences of neighbours along dim, n times (xor for bool), after prepend and "
                              "append are joined on",
                              DTypePolicy::kNone),
                  diff_decompose),
        {"[3,5] - -", "[3,5] - - n=2 dim=0", "[4] [2] [1]", "[2,3] [2,1] - n=3"});
}

}  // namespace oar
