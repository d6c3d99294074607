// Catalog: shape composites (flip, roll, movedim, repeat_interleave(_counts),
// diagonal, diag_embed, diag, meshgrid, take_along_dim), written with views,
// index_select, concat and gather. PyTorch's semantics; see composites.h.
#include <algorithm>
#include <numeric>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// dims normalized against ndim (a 0-d tensor takes dim 0 or -1), each once.
std::vector<int64_t> distinct_dims(const std::vector<int64_t>& dims, int64_t ndim, const std::string& op) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    const int64_t n = normalize_axis(d, std::max<int64_t>(ndim, 1));
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ValueError(str(op, ": dim ", n, " appears multiple times in the list of dims"));
    out.push_back(n);
  }
  return out;
}

std::vector<TensorMeta> like_input(const InferContext& c) { return {{c.shape(0), c.dtype(0)}}; }

// start, start + step, ... before end, as i64 on `device`.
Tensor positions(int64_t start, int64_t end, int64_t step, Device device) {
  CallOptions on;
  on.device = device;
  return call1("arange", {}, {{"start", double(start)}, {"end", double(end)}, {"step", double(step)}, {"dtype", DType::i64}},
               on);
}

// A result that is the input itself becomes a copy: these ops return new tensors.
Tensor fresh(const Tensor& y, const Tensor& x) { return y.is_same(x) ? x.clone() : y; }

// ---- flip, roll ----

std::vector<Tensor> flip_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  Tensor y = x;
  for (int64_t d : distinct_dims(a.get_ints("dims"), x.dim(), "flip")) {
    if (x.dim() == 0) break;
    const int64_t n = y.size(d);
    if (n > 1) y = call1("index_select", {y, positions(n - 1, -1, -1, x.device())}, {{"dim", d}});
  }
  return {fresh(y, x)};
}

void check_roll(const InferContext& c) {
  const auto& shifts = c.attrs.get_ints("shifts");
  const auto& dims = c.attrs.get_ints("dims");
  if (dims.empty() && shifts.size() != 1)
    throw ValueError(str("roll: with no dims, shifts must hold one value (the flattened tensor), got ", shifts.size()));
  if (!dims.empty() && shifts.size() != dims.size())
    throw ValueError(str("roll: shifts and dims must align, got ", shifts.size(), " shifts and ", dims.size(), " dims"));
  for (int64_t d : dims) normalize_axis(d, std::max<int64_t>(c.ndim(0), 1));
}

Tensor roll_along(Tensor y, int64_t shift, int64_t d) {
  const int64_t n = y.dim() == 0 ? 1 : y.size(d);
  if (n == 0) return y;
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) return y;
  return call1("concat", {y.narrow(d, n - s, s), y.narrow(d, 0, n - s)}, {{"dim", d}});
}

std::vector<Tensor> roll_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const auto& shifts = a.get_ints("shifts");
  const auto& dims = a.get_ints("dims");
  if (dims.empty()) return {fresh(roll_along(x.reshape({x.numel()}), shifts[0], 0).reshape(x.shape()), x)};
  Tensor y = x;
  for (size_t k = 0; k < dims.size(); ++k)
    if (x.dim() > 0) y = roll_along(y, shifts[k], normalize_axis(dims[k], x.dim()));
  return {fresh(y, x)};
}

// ---- movedim ----

// The permutation that moves dims `source` to `destination`, the rest in order.
std::vector<int64_t> movedim_order(const Attrs& a, int64_t ndim) {
  auto src = distinct_dims(a.get_ints("source"), ndim, "movedim");
  auto dst = distinct_dims(a.get_ints("destination"), ndim, "movedim");
  if (src.size() != dst.size())
    throw ValueError(str("movedim: source (", src.size(), " dims) and destination (", dst.size(),
                         " dims) must hold as many dims"));
  std::vector<int64_t> order(size_t(ndim), -1);
  if (ndim == 0) return order;
  for (size_t k = 0; k < src.size(); ++k) order[size_t(dst[k])] = src[k];
  int64_t next = 0;
  for (auto& o : order) {
    if (o >= 0) continue;
    while (std::find(src.begin(), src.end(), next) != src.end()) ++next;
    o = next++;
  }
  return order;
}

// ---- repeat_interleave ----

std::vector<TensorMeta> repeat_interleave_infer(const InferContext& c) {
  const int64_t r = c.attrs.get_int("repeats");
  if (r < 0) throw ValueError(str("repeat_interleave: repeats must be non-negative, got ", r));
  const auto& dim = c.attrs.get_ints("dim");
  if (dim.size() > 1) throw ValueError(str("repeat_interleave: dim holds at most one dim, got ", dim.size()));
  if (dim.empty()) return {{{numel_of(c.shape(0)) * r}, c.dtype(0)}};
  Shape s = c.ndim(0) == 0 ? Shape{1} : c.shape(0);
  const int64_t d = normalize_axis(dim[0], int64_t(s.size()));
  s[size_t(d)] *= r;
  return {{s, c.dtype(0)}};
}

std::vector<Tensor> repeat_interleave_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  Tensor x = in[0];
  const int64_t r = a.get_int("repeats");
  const auto& dim = a.get_ints("dim");
  if (dim.empty() || x.dim() == 0) x = dim.empty() ? x.reshape({x.numel()}) : x.reshape({1});
  const int64_t d = dim.empty() ? 0 : normalize_axis(dim[0], x.dim());
  Shape expanded = x.shape(), out = x.shape();
  expanded.insert(expanded.begin() + d + 1, r);
  out[size_t(d)] *= r;
  return {x.unsqueeze(d + 1).expand(expanded).reshape(out).contiguous()};
}

// repeat_interleave with a count per entry along dim (a 1-D integer
// tensor): the counts are read back to the host, which the output's length
// needs anyway; the values stay on the device (one index_select).
std::vector<int64_t> repeat_counts(const Tensor& counts, int64_t n) {
  if (counts.dim() != 1 || !is_integral(counts.dtype()) || counts.dtype() == DType::boolean)
    throw ShapeError(str("repeat_interleave: repeats must be a 1-D integer tensor, got ", dtype_name(counts.dtype()),
                         " of shape ", shape_str(counts.shape())));
  if (counts.size(0) != n)
    throw ShapeError(str("repeat_interleave: repeats has ", counts.size(0), " counts but the input has ", n,
                         " entries along dim"));
  std::vector<int64_t> host = counts.to_vector<int64_t>();
  for (int64_t k : host)
    if (k < 0) throw ValueError(str("repeat_interleave: repeats must be non-negative, got ", k));
  return host;
}

// x flattened when dim is empty, a 0-D x as [1]; the dim counted in it.
std::pair<Tensor, int64_t> along_counts(const Tensor& x, const std::vector<int64_t>& dim) {
  if (dim.size() > 1) throw ValueError(str("repeat_interleave: dim holds at most one dim, got ", dim.size()));
  if (dim.empty()) return {x.reshape({x.numel()}), 0};
  const Tensor y = x.dim() ? x : x.reshape({1});
  return {y, normalize_axis(dim[0], y.dim())};
}

std::vector<TensorMeta> repeat_interleave_counts_infer(const InferContext& c) {
  auto [x, d] = along_counts(c.input(0), c.attrs.get_ints("dim"));
  const std::vector<int64_t> counts = repeat_counts(c.input(1), x.size(d));
  Shape s = x.shape();
  s[size_t(d)] = std::accumulate(counts.begin(), counts.end(), int64_t(0));
  return {{s, c.dtype(0)}};
}

std::vector<Tensor> repeat_interleave_counts_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  auto [x, d] = along_counts(in[0], a.get_ints("dim"));
  const std::vector<int64_t> counts = repeat_counts(in[1], x.size(d));
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) index.insert(index.end(), size_t(counts[i]), int64_t(i));
  const Tensor picks = Tensor::from_vector(index, {int64_t(index.size())}, x.device());
  return {call1("index_select", {x, picks}, {{"dim", d}})};
}

// ---- diagonal, diag_embed, diag ----

int64_t diagonal_length(int64_t rows, int64_t cols, int64_t offset) {
  return std::max<int64_t>(offset >= 0 ? std::min(rows, cols - offset) : std::min(rows + offset, cols), 0);
}

std::pair<int64_t, int64_t> two_dims(const Attrs& a, int64_t ndim, const char* op) {
  const int64_t d1 = normalize_axis(a.get_int("dim1"), ndim), d2 = normalize_axis(a.get_int("dim2"), ndim);
  if (d1 == d2) throw ValueError(str(op, ": diagonal dimensions cannot be identical (", d1, ", ", d2, ")"));
  return {d1, d2};
}

std::vector<TensorMeta> diagonal_infer(const InferContext& c) {
  if (c.ndim(0) < 2)
    throw ShapeError(str("diagonal: input must have at least 2 dimensions, got shape ", shape_str(c.shape(0))));
  auto [d1, d2] = two_dims(c.attrs, c.ndim(0), "diagonal");
  Shape s;
  for (int64_t d = 0; d < c.ndim(0); ++d)
    if (d != d1 && d != d2) s.push_back(c.shape(0)[size_t(d)]);
  s.push_back(diagonal_length(c.shape(0)[size_t(d1)], c.shape(0)[size_t(d2)], c.attrs.get_int("offset")));
  return {{s, c.dtype(0)}};
}

// The `offset` diagonal of dims d1, d2 as a new last dim: a strided view of
// the matrices (moved last and made contiguous when they are not already).
Tensor diagonal_of(const Tensor& x, int64_t offset, int64_t d1, int64_t d2) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d1 && d != d2) order.push_back(d);
  order.push_back(d1);
  order.push_back(d2);
  Tensor y = x.permute(order);
  const int64_t rows = y.size(-2), cols = y.size(-1);
  const int64_t n = diagonal_length(rows, cols, offset);
  Shape batch(y.shape().begin(), y.shape().end() - 2);
  y = offset >= 0 ? y.narrow(-1, std::min(offset, cols), cols - std::min(offset, cols))
                  : y.narrow(-2, std::min(-offset, rows), rows - std::min(-offset, rows));
  Shape flat_shape = batch;
  if (n == 0) {
    flat_shape.push_back(0);
    return Tensor::zeros(flat_shape, x.dtype(), x.device());
  }
  flat_shape.push_back(n * n);
  Tensor flat = y.narrow(-2, 0, n).narrow(-1, 0, n).reshape(flat_shape);
  return flat.slice(int64_t(batch.size()), 0, n * n, n + 1);
}

std::vector<TensorMeta> diag_embed_infer(const InferContext& c) {
  const int64_t nd = c.ndim(0) + 1;
  auto [d1, d2] = two_dims(c.attrs, std::max<int64_t>(nd, 2), "diag_embed");
  const Shape in = c.ndim(0) == 0 ? Shape{1} : c.shape(0);
  const int64_t m = in.back() + std::abs(c.attrs.get_int("offset"));
  Shape s;
  for (int64_t d = 0, next = 0; d < int64_t(in.size()) + 1; ++d)
    s.push_back(d == d1 || d == d2 ? m : in[size_t(next++)]);
  return {{s, c.dtype(0)}};
}

// Matrices whose `offset` diagonal (in dims d1, d2 of the result) holds the
// last dim of x: row i of [.., m, m+1] holding [w_i, 0, ...] flattens to w_i
// at i*(m+1), the main diagonal of m x m; leading zeros shift it.
Tensor diag_embed_of(Tensor x, int64_t offset, int64_t dim1, int64_t dim2) {
  if (x.dim() == 0) x = x.reshape({1});
  const int64_t nd = x.dim() + 1;
  const int64_t d1 = normalize_axis(dim1, nd), d2 = normalize_axis(dim2, nd);
  Shape batch(x.shape().begin(), x.shape().end() - 1);
  const int64_t k = std::abs(offset), m = x.size(-1) + k;
  const int64_t last = int64_t(batch.size());
  auto zeros = [&](int64_t n, int64_t n2 = -1) {
    Shape s = batch;
    s.push_back(n);
    if (n2 >= 0) s.push_back(n2);
    return Tensor::zeros(s, x.dtype(), x.device());
  };
  Tensor w = k ? call1("concat", {x, zeros(k)}, {{"dim", last}}) : x;
  Shape flat = batch;
  flat.push_back(m * (m + 1));
  Tensor rows = call1("concat", {w.unsqueeze(-1), zeros(m, m)}, {{"dim", last + 1}}).reshape(flat);
  const int64_t shift = offset >= 0 ? k : k * m;
  if (shift) rows = call1("concat", {zeros(shift), rows}, {{"dim", last}});
  Shape square = batch;
  square.push_back(m);
  square.push_back(m);
  Tensor y = rows.narrow(-1, 0, m * m).reshape(square);
  if (d1 == nd - 2 && d2 == nd - 1) return y;
  // Place the two matrix dims (now last) at d1 and d2.
  std::vector<int64_t> order(size_t(nd), -1);
  order[size_t(d1)] = nd - 2;
  order[size_t(d2)] = nd - 1;
  int64_t next = 0;
  for (auto& o : order)
    if (o < 0) o = next++;
  return y.permute(order).contiguous();
}

std::vector<TensorMeta> diag_infer(const InferContext& c) {
  const int64_t off = c.attrs.get_int("diagonal");
  const Shape& s = c.shape(0);
  if (c.ndim(0) == 1) return {{{s[0] + std::abs(off), s[0] + std::abs(off)}, c.dtype(0)}};
  if (c.ndim(0) == 2) return {{{diagonal_length(s[0], s[1], off)}, c.dtype(0)}};
  throw ShapeError(str("diag: expects a 1-D or 2-D tensor, got shape ", shape_str(s)));
}

// ---- meshgrid ----

std::vector<TensorMeta> meshgrid_infer(const InferContext& c) {
  const std::string& indexing = c.attrs.get_string("indexing");
  if (indexing != "ij" && indexing != "xy")
    throw ValueError(str("meshgrid: indexing must be 'ij' or 'xy', got '", indexing, "'"));
  if (c.inputs.empty()) throw ValueError("meshgrid: expects at least one tensor");
  Shape grid;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.ndim(i) > 1)
      throw ShapeError(str("meshgrid: expects 0-D or 1-D tensors, tensor ", i, " has shape ", shape_str(c.shape(i))));
    if (c.dtype(i) != c.dtype(0) || c.input(i).device() != c.input(0).device())
      throw DTypeError(str("meshgrid: expects tensors of one dtype and device, tensor ", i, " is ",
                           dtype_name(c.dtype(i)), " on ", c.input(i).device().str(), ", tensor 0 is ",
                           dtype_name(c.dtype(0)), " on ", c.input(0).device().str()));
    grid.push_back(numel_of(c.shape(i)));
  }
  if (indexing == "xy" && grid.size() >= 2) std::swap(grid[0], grid[1]);
  return std::vector<TensorMeta>(c.inputs.size(), TensorMeta{grid, c.dtype(0)});
}

// Coordinate grids as expanded views; 'xy' swaps the first two grid dims.
std::vector<Tensor> meshgrid_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const bool swap = a.get_string("indexing") == "xy" && in.size() >= 2;
  Shape grid;
  for (const auto& t : in) grid.push_back(t.numel());
  if (swap) std::swap(grid[0], grid[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t at = swap && i < 2 ? 1 - i : i;  // the grid dim input i runs along
    Shape view(grid.size(), 1);
    view[at] = grid[at];
    out.push_back(in[i].reshape(view).expand(grid));
  }
  return out;
}

// ---- take_along_dim ----

std::vector<TensorMeta> take_along_dim_infer(const InferContext& c) {
  require_integral_index(c, 1);
  const auto& dim = c.attrs.get_ints("dim");
  if (dim.size() > 1) throw ValueError(str("take_along_dim: dim holds at most one dim, got ", dim.size()));
  if (dim.empty()) return {{{numel_of(c.shape(1))}, c.dtype(0)}};
  if (c.ndim(0) != c.ndim(1))
    throw ShapeError(str("take_along_dim: input ", shape_str(c.shape(0)), " and indices ", shape_str(c.shape(1)),
                         " must have the same number of dimensions"));
  const int64_t d = normalize_axis(dim[0], std::max<int64_t>(c.ndim(0), 1));
  if (c.ndim(0) == 0) return {{{}, c.dtype(0)}};
  Shape xs = c.shape(0), js = c.shape(1);
  xs[size_t(d)] = js[size_t(d)] = 1;
  Shape s = broadcast_shapes(xs, js);
  s[size_t(d)] = c.shape(1)[size_t(d)];
  return {{s, c.dtype(0)}};
}

std::vector<Tensor> take_along_dim_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  Tensor x = in[0], idx = in[1];
  const auto& dim = a.get_ints("dim");
  if (dim.empty()) return {call1("gather", {x.reshape({x.numel()}), idx.reshape({idx.numel()})}, {{"dim", int64_t(0)}})};
  if (x.dim() == 0) return {call1("gather", {x.reshape({1}), idx.reshape({1})}, {{"dim", int64_t(0)}}).reshape({})};
  const int64_t d = normalize_axis(dim[0], x.dim());
  Shape xs = x.shape(), js = idx.shape();
  xs[size_t(d)] = js[size_t(d)] = 1;
  Shape common = broadcast_shapes(xs, js);
  Shape xe = common, je = common;
  xe[size_t(d)] = x.size(d);
  je[size_t(d)] = idx.size(d);
  return {call1("gather", {x.expand(xe), idx.expand(je)}, {{"dim", d}})};
}

OpSchema shaped(const std::string& name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs, InferFn infer,
                std::string doc) {
  return make_schema(name, std::move(inputs), {"y"}, std::move(attrs), std::move(infer), std::move(doc),
                     DTypePolicy::kNone);
}

}  // namespace

void register_shape_composites(OpRegistry& r) {
  const std::vector<InputSpec> x{InputSpec{"x"}};
  const auto ints = [](const char* name) { return attr(name, AttrType::kInts); };
  const auto no_dims = [](const char* name) { return attr(name, AttrType::kInts, std::vector<int64_t>{}); };
  r.add(composite(shaped("flip", x, {ints("dims")},
                         [](const InferContext& c) {
                           distinct_dims(c.attrs.get_ints("dims"), c.ndim(0), "flip");
                           return like_input(c);
                         },
                         "x with the order of entries reversed along each of dims (a copy)"),
                  flip_decompose),
        {"[7] dims=[0]", "[3,4,5] dims=[0,2]", "[3,4,5] dims=[-1]", "[2,3] dims=[]"});
  r.add(composite(shaped("roll", x, {ints("shifts"), no_dims("dims")},
                         [](const InferContext& c) {
                           check_roll(c);
                           return like_input(c);
                         },
                         "entries shifted along dims, wrapping around (the flattened x when dims is empty)"),
                  roll_decompose),
        {"[7] shifts=[2]", "[3,4,5] shifts=[1,-2] dims=[0,2]", "[3,4] shifts=[5] dims=[1]", "[3,4] shifts=[-3]"});
  r.add(composite(shaped("movedim", x, {ints("source"), ints("destination")},
                         [](const InferContext& c) {
                           auto order = movedim_order(c.attrs, c.ndim(0));
                           Shape s;
                           for (int64_t o : order) s.push_back(c.shape(0)[size_t(o)]);
                           return std::vector<TensorMeta>{{s, c.dtype(0)}};
                         },
                         "x with dims `source` moved to positions `destination`, the others in order (a view)"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    const Tensor& x = in[0];
                    return std::vector<Tensor>{x.dim() == 0 ? x : x.permute(movedim_order(a, x.dim()))};
                  }),
        {"[2,3,4] source=[0] destination=[2]", "[2,3,4,5] source=[1,3] destination=[0,1]", "[3,4] source=[-1] destination=[0]"});
  r.add(composite(shaped("repeat_interleave", x, {attr("repeats", AttrType::kInt), no_dims("dim")},
                         repeat_interleave_infer,
                         "each entry repeated `repeats` times along dim (of the flattened x when dim is empty)"),
                  repeat_interleave_decompose),
        {"[5] repeats=3", "[2,3] repeats=2 dim=[1]", "[2,3,2] repeats=2 dim=[0]", "[2,3] repeats=0 dim=[-1]"});
  r.add(composite(shaped("repeat_interleave_counts", {InputSpec{"x"}, unpromoted("repeats")}, {no_dims("dim")},
                         repeat_interleave_counts_infer,
                         "entry i along dim repeated repeats[i] times (a 1-D integer tensor, read back to the host; "
                         "the flattened x when dim is empty)"),
                  repeat_interleave_counts_decompose),
        {"[4] [4]{0:3}", "[3,2] [3]{0:4} dim=[0]", "[2,5] [5]{0:3} dim=[-1]"});
  const std::vector<AttrSpec> diagonal_attrs{attr("offset", AttrType::kInt, int64_t(0)),
                                             attr("dim1", AttrType::kInt, int64_t(0)),
                                             attr("dim2", AttrType::kInt, int64_t(1))};
  r.add(composite(shaped("diagonal", x, diagonal_attrs, diagonal_infer,
                         "the `offset` diagonal of dims dim1 and dim2, as the last dim (a view where it can be)"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    auto [d1, d2] = two_dims(a, in[0].dim(), "diagonal");
                    return std::vector<Tensor>{diagonal_of(in[0], a.get_int("offset"), d1, d2)};
                  }),
        {"[4,4]", "[3,5] offset=1", "[5,3] offset=-2", "[2,3,4] offset=1 dim1=1 dim2=2", "[3,4,2] dim1=-1 dim2=0"});
  r.add(composite(shaped("diag_embed", x,
                         {attr("offset", AttrType::kInt, int64_t(0)), attr("dim1", AttrType::kInt, int64_t(-2)),
                          attr("dim2", AttrType::kInt, int64_t(-1))},
                         diag_embed_infer,
                         "matrices (in dims dim1, dim2) whose `offset` diagonal holds the last dim of x, zero elsewhere"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{
                        diag_embed_of(in[0], a.get_int("offset"), a.get_int("dim1"), a.get_int("dim2"))};
                  }),
        {"[4]", "[2,3] offset=1", "[2,3] offset=-2", "[2,3] dim1=0 dim2=2"});
  r.add(composite(shaped("diag", x, {attr("diagonal", AttrType::kInt, int64_t(0))}, diag_infer,
                         "a 1-D x as the `diagonal` of a square matrix, or a matrix's `diagonal` as 1-D"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    const int64_t off = a.get_int("diagonal");
                    return std::vector<Tensor>{in[0].dim() == 1 ? diag_embed_of(in[0], off, -2, -1)
                                                                : diagonal_of(in[0], off, 0, 1).contiguous()};
                  }),
        {"[4]", "[3] diagonal=1", "[4,5] diagonal=-1", "[5,4]"});
  {
    OpSchema s = make_schema("meshgrid", {variadic("tensors")}, {}, {attr("indexing", AttrType::kString, std::string("ij"))},
                             meshgrid_infer,
                             "coordinate grids (expanded views) of 0-D or 1-D tensors; 'xy' swaps the first two dims",
                             DTypePolicy::kNone);
    s.variadic_outputs = true;
    r.add(composite(std::move(s), meshgrid_decompose),
          {"([3] [4])", "([2] [3] [4]) indexing='xy'", "([5]) indexing='ij'"});
  }
  r.add(composite(shaped("take_along_dim", {InputSpec{"x"}, unpromoted("indices")}, {no_dims("dim")},
                         take_along_dim_infer,
                         "gather along dim with x and indices broadcast in the other dims (the flattened x when dim is empty)"),
                  take_along_dim_decompose),
        {"[3,4] [3,2]{0:4} dim=[1]", "[3,4] [1,4]{0:3} dim=[0]", "[2,3,4] [2,5,1]{0:3} dim=[1]", "[3,4] [5]{0:12}"});
}

}  // namespace oar
