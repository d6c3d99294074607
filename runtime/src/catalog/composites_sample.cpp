// Catalog: composites over sample points: cartesian_prod and combinations
// (rows of 1-D inputs' elements), vander (their powers), trapezoid and
// cumulative_trapezoid (the trapezoidal rule along a dim). PyTorch's
// semantics; see composites.h.
#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

void require_vectors(const InferContext& c) {
  if (c.inputs.empty()) throw ValueError(str(c.schema.name, ": expects at least one tensor"));
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.ndim(i) != 1)
      throw ShapeError(str(c.schema.name, ": expects 1-D tensors, input ", i, " has shape ", shape_str(c.shape(i))));
    if (c.dtype(i) != c.dtype(0))
      throw DTypeError(str(c.schema.name, ": expects tensors of one dtype, input 0 is ", dtype_name(c.dtype(0)),
                           " and input ", i, " is ", dtype_name(c.dtype(i))));
  }
}

// ---- cartesian_prod ----

std::vector<TensorMeta> cartesian_infer(const InferContext& c) {
  require_vectors(c);
  if (c.inputs.size() == 1) return {{c.shape(0), c.dtype(0)}};
  int64_t rows = 1;
  for (size_t i = 0; i < c.inputs.size(); ++i) rows *= c.shape(i)[0];
  return {{{rows, int64_t(c.inputs.size())}, c.dtype(0)}};
}

std::vector<Tensor> cartesian_decompose(const std::vector<Tensor>& in, const Attrs&) {
  if (in.size() == 1) return {in[0].clone()};  // a new tensor, never the input
  std::vector<Tensor> columns;
  for (const Tensor& g : call("meshgrid", in, {{"indexing", std::string("ij")}}))
    columns.push_back(g.reshape({g.numel()}));
  return {call1("stack", columns, {{"dim", int64_t(1)}})};
}

// ---- combinations ----

// The index rows of combinations of n things taken r at a time, in
// itertools' order (lexicographic), with or without replacement.
std::vector<int64_t> combination_rows(int64_t n, int64_t r, bool replace) {
  std::vector<int64_t> rows, pick(size_t(r), 0);
  if (!replace)
    for (int64_t k = 0; k < r; ++k) pick[size_t(k)] = k;
  if (r == 0 || (!replace && r > n) || n == 0) return rows;
  for (;;) {
    rows.insert(rows.end(), pick.begin(), pick.end());
    int64_t k = r - 1;  // the rightmost position that can still advance
    while (k >= 0 && pick[size_t(k)] == (replace ? n - 1 : n - r + k)) --k;
    if (k < 0) return rows;
    ++pick[size_t(k)];
    for (int64_t j = k + 1; j < r; ++j) pick[size_t(j)] = replace ? pick[size_t(k)] : pick[size_t(j - 1)] + 1;
  }
}

// How many rows combination_rows gives, refusing more than kMostRows.
int64_t combination_count(int64_t n, int64_t r, bool replace) {
  constexpr double kMostRows = 1e8;
  if (r == 0) return 0;
  const int64_t pool = replace ? n + r - 1 : n;  // C(n + r - 1, r) with replacement
  if (r > pool) return 0;
  double count = 1;
  for (int64_t k = 1; k <= r; ++k) count = count * double(pool - r + k) / double(k);
  if (count > kMostRows)
    throw ValueError(str("combinations: ", n, " elements taken ", r, " at a time give ", count,
                         " rows, more than the ", kMostRows, " this op builds"));
  return int64_t(count + 0.5);
}

std::vector<TensorMeta> combinations_infer(const InferContext& c) {
  require_vectors(c);
  const int64_t r = c.attrs.get_int("r");
  if (r < 0) throw ValueError(str("combinations: r must be non-negative, got ", r));
  if (r == 0) return {{{0}, c.dtype(0)}};  // as PyTorch: an empty vector
  return {{{combination_count(c.shape(0)[0], r, c.attrs.get_bool("with_replacement")), r}, c.dtype(0)}};
}

std::vector<Tensor> combinations_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t r = a.get_int("r");
  if (r == 0) return {Tensor::zeros({0}, in[0].dtype(), in[0].device())};
  const std::vector<int64_t> rows = combination_rows(in[0].size(0), r, a.get_bool("with_replacement"));
  const int64_t count = int64_t(rows.size()) / r;
  const Tensor index = Tensor::from_vector(rows, {int64_t(rows.size())}, in[0].device());
  return {call1("index_select", {in[0], index}, {{"dim", int64_t(0)}}).reshape({count, r})};
}

// ---- vander ----

// Integer and bool points give i64 powers, as PyTorch's vander.
DType vander_dtype(DType in) { return is_floating(in) ? in : DType::i64; }

std::vector<TensorMeta> vander_infer(const InferContext& c) {
  if (c.ndim(0) != 1) throw ShapeError(str("vander: x must be 1-D, got shape ", shape_str(c.shape(0))));
  const int64_t n = c.attrs.get_int("N");
  if (n < -1) throw ValueError(str("vander: N must be non-negative (or -1 for len(x)), got ", n));
  return {{{c.shape(0)[0], n < 0 ? c.shape(0)[0] : n}, vander_dtype(c.dtype(0))}};
}

// Columns x^0 .. x^(N-1) as a running product of [1, x, x, ...]: exact
// powers, and a gradient that is finite at x = 0 (pow's is not).
std::vector<Tensor> vander_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor x = in[0].to(vander_dtype(in[0].dtype()));
  const int64_t rows = x.size(0), n = a.get_int("N") < 0 ? rows : a.get_int("N");
  if (n == 0) return {Tensor::zeros({rows, 0}, x.dtype(), x.device())};
  Tensor factors = Tensor::ones({rows, 1}, x.dtype(), x.device());
  if (n > 1) factors = call1("concat", {factors, x.unsqueeze(1).expand({rows, n - 1})}, {{"dim", int64_t(1)}});
  Tensor powers = call1("cumprod", {factors}, {{"dim", int64_t(1)}});
  if (!a.get_bool("increasing")) powers = call1("flip", {powers}, {{"dims", std::vector<int64_t>{1}}});
  return {powers};
}

// ---- trapezoid, cumulative_trapezoid ----

// y's dim `dim`, and the shape of the trapezoids' areas (before summing
// over it): y with that dim one shorter, broadcast with x's spacings.
struct Trapezoids {
  int64_t dim;
  Shape areas;
};

Trapezoids trapezoids_of(const InferContext& c) {
  const std::string& op = c.schema.name;
  if (c.ndim(0) == 0) throw ShapeError(str(op, ": y must have at least one dimension, got a 0-D tensor"));
  const int64_t d = normalize_axis(c.attrs.get_int("dim"), c.ndim(0));
  const int64_t n = c.shape(0)[size_t(d)];
  Shape areas = c.shape(0);
  areas[size_t(d)] = std::max<int64_t>(n - 1, 0);
  if (c.inputs.size() > 1 && c.inputs[1].defined()) {
    const Shape& xs = c.shape(1);
    if (xs.size() == 1) {
      if (xs[0] != n)
        throw ShapeError(str(op, ": there must be one x value for each sample point: x has ", xs[0], ", y has ", n,
                             " along dim ", d));
    } else if (xs.size() == c.shape(0).size()) {
      if (xs[size_t(d)] != n)
        throw ShapeError(str(op, ": x ", shape_str(xs), " must have y's ", n, " sample points along dim ", d));
      Shape spacing = xs;
      spacing[size_t(d)] = areas[size_t(d)];
      areas = broadcast_shapes(areas, spacing);
    } else {
      throw ShapeError(str(op, ": x must be 1-D or have y's ", c.ndim(0), " dimensions, got shape ",
                           shape_str(xs)));
    }
  }
  return {d, areas};
}

std::vector<TensorMeta> trapezoid_infer(const InferContext& c) {
  Trapezoids t = trapezoids_of(c);
  t.areas.erase(t.areas.begin() + t.dim);
  return {{t.areas, c.dtype(0)}};
}

std::vector<TensorMeta> cumulative_trapezoid_infer(const InferContext& c) {
  return {{trapezoids_of(c).areas, c.dtype(0)}};
}

// The areas of the n - 1 trapezoids along d (n >= 2): mean height times width.
Tensor trapezoid_areas(const std::vector<Tensor>& in, const Attrs& a, int64_t d) {
  const Tensor& y = in[0];
  const int64_t n = y.size(d);
  const Tensor heights = op2("mul", op2("add", y.narrow(d, 1, n - 1), y.narrow(d, 0, n - 1)), scalar_like(0.5, y));
  if (in.size() < 2 || !in[1].defined()) {
    const double dx = a.get_float("dx");
    return dx == 1 ? heights : op2("mul", heights, scalar_like(dx, y));
  }
  const Tensor& x = in[1];
  Tensor widths;
  if (x.dim() == 1) {
    Shape view(size_t(y.dim()), 1);
    view[size_t(d)] = n - 1;
    widths = op2("sub", x.narrow(0, 1, n - 1), x.narrow(0, 0, n - 1)).reshape(view);
  } else {
    widths = op2("sub", x.narrow(d, 1, n - 1), x.narrow(d, 0, n - 1));
  }
  return op2("mul", heights, widths);
}

// The areas' shape when y has fewer than two samples along d: none along d,
// y's other dims broadcast with a same-rank x's.
Shape no_areas_shape(const std::vector<Tensor>& in, int64_t d) {
  Shape areas = in[0].shape();
  areas[size_t(d)] = 0;
  if (in.size() > 1 && in[1].defined() && in[1].dim() > 1) areas = broadcast_shapes(areas, in[1].narrow(d, 0, 0).shape());
  return areas;
}

std::vector<Tensor> trapezoid_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t d = normalize_axis(a.get_int("dim"), in[0].dim());
  Shape out = in[0].shape();
  out.erase(out.begin() + d);
  if (in[0].size(d) < 2) {  // no trapezoid: zero area
    Shape areas = no_areas_shape(in, d);
    areas.erase(areas.begin() + d);
    return {Tensor::zeros(areas, in[0].dtype(), in[0].device())};
  }
  return {op1("sum", trapezoid_areas(in, a, d), {{"dims", std::vector<int64_t>{d}}, {"keepdim", false}})};
}

std::vector<Tensor> cumulative_trapezoid_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t d = normalize_axis(a.get_int("dim"), in[0].dim());
  if (in[0].size(d) < 2) return {Tensor::zeros(no_areas_shape(in, d), in[0].dtype(), in[0].device())};
  return {call1("cumsum", {trapezoid_areas(in, a, d)}, {{"dim", d}})};
}

OpSchema trapezoid_schema(const std::string& name, InferFn infer, std::string doc) {
  InputSpec x{"x"};  // optional sample points, promoted with y
  x.optional = true;
  x.in_signature = false;
  return make_schema(name, {InputSpec{"y"}, x}, {"y"},
                     {attr("dx", AttrType::kFloat, 1.0), attr("dim", AttrType::kInt, int64_t(-1))}, std::move(infer),
                     std::move(doc), DTypePolicy::kPromoteToFloat);
}

}  // namespace

void register_sample_composites(OpRegistry& r) {
  r.add(composite(make_schema("cartesian_prod", {variadic("tensors")}, {"y"}, {}, cartesian_infer,
                              "rows of every combination of one element from each 1-D input (itertools.product's "
                              "order); one input is returned as a copy",
                              DTypePolicy::kNone),
                  cartesian_decompose),
        {"([3] [2])", "([2] [3] [2])", "([4])", "([0] [3])"});
  r.add(composite(make_schema("combinations", {InputSpec{"x"}},  {"y"},
                              {attr("r", AttrType::kInt, int64_t(2)), attr("with_replacement", AttrType::kBool, false)},
                              combinations_infer,
                              "rows of the 1-D x's elements taken r at a time (itertools.combinations' order, or "
                              "combinations_with_replacement's)",
                              DTypePolicy::kNone),
                  combinations_decompose),
        {"[5]", "[4] r=3", "[3] r=2 with_replacement=true", "[2] r=3", "[4] r=0"});
  r.add(composite(make_schema("vander", {InputSpec{"x"}}, {"y"},
                              {attr("N", AttrType::kInt, int64_t(-1)), attr("increasing", AttrType::kBool, false)},
                              vander_infer,
                              "the Vandermonde matrix of 1-D x: columns x^(N-1) .. x^0 (x^0 .. x^(N-1) when "
                              "increasing; N = -1 for len(x)); integer x gives i64",
                              DTypePolicy::kNone),
                  vander_decompose),
        {"[4]", "[3] N=5 increasing=true", "[5] N=2", "[3] N=0", "[0]"});
  r.add(composite(trapezoid_schema("trapezoid", trapezoid_infer,
                                   "the trapezoidal rule along dim: sample points x (1-D, or y's rank and "
                                   "broadcast), else a constant spacing dx"),
                  trapezoid_decompose),
        {"[3,5] -", "[4,6] - dim=0 dx=0.5", "[3,5] [5]", "[2,4] [2,4] dim=1", "[3,1] - dim=1"});
  r.add(composite(trapezoid_schema("cumulative_trapezoid", cumulative_trapezoid_infer,
                                   "the running trapezoidal rule along dim (one entry per trapezoid), with x or dx "
                                   "as trapezoid's"),
                  cumulative_trapezoid_decompose),
        {"[3,5] -", "[4,6] - dim=0 dx=2", "[3,5] [5]", "[2,4] [2,4] dim=1"});
}

}  // namespace oar
