// Catalog: selection composites (median, nanmedian, mode, searchsorted,
// bucketize, histc, nonzero, masked_select, masked_scatter, bincount),
// written with sort, comparisons, reductions, gather and scans.
// PyTorch's semantics; see composites.h.
#include <cmath>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

const Attrs kLastKept{{"dims", std::vector<int64_t>{-1}}, {"keepdim", true}};

// ---- median, nanmedian, mode: (values, indices) along dim ----

std::vector<TensorMeta> along_dim_infer(const InferContext& c) {
  if (c.dtype(0) == DType::boolean)
    throw DTypeError(str(c.schema.name, ": bool tensors are not supported; convert to an integer dtype"));
  const int64_t nd = c.ndim(0);
  const int64_t d = normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(nd, 1));
  if (nd > 0 && c.shape(0)[size_t(d)] == 0)
    throw IndexError(str(c.schema.name, ": dim ", d, " of shape ", shape_str(c.shape(0)),
                         " is empty; the reduction needs at least one entry"));
  Shape s = c.shape(0);
  if (nd > 0) {
    if (c.attrs.get_bool("keepdim")) s[size_t(d)] = 1;
    else s.erase(s.begin() + d);
  }
  return {{s, c.dtype(0)}, {s, DType::i64}};
}

// x with dim moved last (a view; a 0-d x as [1]).
Tensor dim_last(const Tensor& x, int64_t d) {
  if (x.dim() == 0) return x.reshape({1});
  return d == x.dim() - 1 ? x : x.transpose(d, x.dim() - 1);
}

// The entries of `values` and `indices` (dim moved last) at positions `pos`
// (.., 1), moved back to dim d and squeezed unless keepdim.
std::vector<Tensor> pick(const Tensor& x, const Tensor& values, const Tensor& indices, const Tensor& pos, int64_t d,
                         bool keepdim) {
  Tensor v = call1("gather", {values, pos}, {{"dim", int64_t(-1)}});
  Tensor i = call1("gather", {indices, pos}, {{"dim", int64_t(-1)}});
  if (x.dim() == 0) return {v.reshape({}), i.reshape({})};
  const int64_t last = v.dim() - 1;
  if (d != last) {
    v = v.transpose(d, last);
    i = i.transpose(d, last);
  }
  if (!keepdim) {
    v = v.squeeze(d);
    i = i.squeeze(d);
  }
  return {v.contiguous(), i.contiguous()};
}

// The lower median; NaN (at the first NaN's position) where the row has one,
// or, ignoring NaN, the lower median of the numbers.
std::vector<Tensor> median_decompose(const Tensor& x, const Attrs& a, bool ignore_nan) {
  const int64_t d = normalize_axis(a.get_int("dim"), std::max<int64_t>(x.dim(), 1));
  const Tensor moved = dim_last(x, d);
  const int64_t n = moved.size(-1);
  auto sorted = call("sort", {moved}, {{"dim", int64_t(-1)}, {"descending", false}});
  Shape row = moved.shape();
  row.back() = 1;
  Tensor pos;
  if (is_floating(x.dtype())) {
    Tensor nans = call1("sum", {op2("ne", moved, moved)}, kLastKept).to(DType::f32);  // NaNs sort last
    const Tensor half = scalar_like(double((n - 1) / 2), nans);
    if (ignore_nan) {
      Tensor count = call1("clamp", {op2("sub", scalar_like(double(n - 1), nans), nans)}, {{"min", 0.0}});
      pos = call1("floor", {op2("div", count, scalar_like(2, nans))});
    } else {
      pos = call1("where", {op2("gt", nans, scalar_like(0, nans)), op2("sub", scalar_like(double(n), nans), nans), half});
    }
    pos = pos.to(DType::i64);
  } else {
    pos = Tensor::full(row, double((n - 1) / 2), DType::i64, x.device());
  }
  return pick(x, sorted[0], sorted[1], pos, d, a.get_bool("keepdim"));
}

// The most frequent value (the smallest among equally frequent ones) and its
// last position. Counts by comparing every pair: memory grows with n^2.
std::vector<Tensor> mode_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t d = normalize_axis(a.get_int("dim"), std::max<int64_t>(x.dim(), 1));
  const Tensor moved = dim_last(x, d);
  const Tensor plain = moved.detach();
  const int64_t n = moved.size(-1);
  Tensor counts = call1("sum", {op2("eq", plain.unsqueeze(-1), plain.unsqueeze(-2))},
                        {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}});
  Tensor best = op2("eq", counts, call1("max", {counts}, kLastKept));
  // Entries that are not most frequent must not win the min: +inf, or the row's max for integers.
  Tensor others = is_floating(x.dtype()) ? scalar_like(kInf, plain) : call1("max", {plain}, kLastKept);
  Tensor value = call1("min", {call1("where", {best, plain, others})}, kLastKept);
  CallOptions on;
  on.device = x.device();
  Tensor positions =
      call1("arange", {}, {{"start", 0.0}, {"end", double(n)}, {"dtype", DType::i64}}, on);
  Tensor pos = call1("max", {call1("where", {op2("eq", plain, value), positions, scalar_like(-1, positions)})}, kLastKept);
  return pick(x, moved, positions.expand(moved.shape()), pos, d, a.get_bool("keepdim"));
}

// ---- searchsorted, bucketize ----

// For each value, how many entries of the sorted last dim of seq are below
// it (at or below it when right): every pair compared, memory m * n.
Tensor count_below(const Tensor& seq, const Tensor& values, bool right) {
  const Tensor v = values.dim() == 0 ? values.reshape({1}) : values;
  Tensor below = op2(right ? "ge" : "gt", v.unsqueeze(-1), seq.unsqueeze(-2));
  Tensor n = call1("sum", {below}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}});
  return values.dim() == 0 ? n.reshape({}) : n;
}

std::vector<TensorMeta> searchsorted_infer(const InferContext& c, size_t seq, size_t values) {
  if (c.dtype(seq) == DType::boolean || c.dtype(values) == DType::boolean)
    throw DTypeError(str(c.schema.name, ": bool tensors are not supported"));
  const Shape &s = c.shape(seq), &v = c.shape(values);
  if (s.empty()) throw ShapeError(str(c.schema.name, ": the sorted sequence must have at least 1 dimension"));
  if (s.size() > 1 && (v.size() != s.size() || !std::equal(s.begin(), s.end() - 1, v.begin())))
    throw ShapeError(str(c.schema.name, ": sorted sequence ", shape_str(s), " and values ", shape_str(v),
                         " must have the same leading dims (or the sequence must be 1-D)"));
  return {{v, DType::i64}};
}

// ---- histc ----

std::vector<TensorMeta> histc_infer(const InferContext& c) {
  require_floating(c, 0);
  const int64_t bins = c.attrs.get_int("bins");
  if (bins <= 0) throw ValueError(str("histc: bins must be positive, got ", bins));
  const double lo = c.attrs.get_float("min"), hi = c.attrs.get_float("max");
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    throw ValueError(str("histc: the range [", lo, ", ", hi, "] must be finite with min <= max"));
  return {{{bins}, c.dtype(0)}};
}

// Counts in `bins` equal bins over [min, max] (the finite data's range when
// min == max; the one host read); values outside are ignored.
std::vector<Tensor> histc_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor x = in[0].detach().reshape({in[0].numel()});
  const int64_t bins = a.get_int("bins");
  double lo = a.get_float("min"), hi = a.get_float("max");
  Tensor finite = op2("lt", call1("abs", {x}), scalar_like(kInf, x));
  if (lo == hi && x.numel() > 0) {
    lo = call1("min", {call1("where", {finite, x, scalar_like(kInf, x)})}).item();
    hi = call1("max", {call1("where", {finite, x, scalar_like(-kInf, x)})}).item();
    if (!std::isfinite(lo)) lo = hi = 0;  // no finite entry
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  Tensor inside = op2("logical_and", op2("ge", x, scalar_like(lo, x)), op2("le", x, scalar_like(hi, x)));
  // PyTorch's order of operations, so entries on a bin edge land where PyTorch puts them.
  Tensor scaled = call1("floor", {op2("div", op2("mul", op2("sub", x, scalar_like(lo, x)), scalar_like(double(bins), x)),
                                      scalar_like(hi - lo, x))});
  Tensor index = call1("clamp", {call1("where", {inside, scaled, scalar_like(0, x)})},
                       {{"min", 0.0}, {"max", double(bins - 1)}})
                     .to(DType::i64);
  Tensor counts = Tensor::zeros({bins}, x.dtype(), x.device());
  return {call1("scatter_add", {counts, index, inside.to(x.dtype())}, {{"dim", int64_t(0)}})};
}

// ---- nonzero, masked_select, bincount: shapes that depend on the data ----
// Inference reads one count (or bound) back to the host; the values stay on
// the device: each selected entry goes to its slot (a running count of the
// selected entries before it) by scatter_add, unselected ones to a spare slot
// past the end that is cut off.

Tensor truth_of(const Tensor& x) {
  return x.dtype() == DType::boolean ? x : op2("ne", x, scalar_like(0, x));
}

int64_t count_true(const Tensor& mask) { return int64_t(call1("sum", {mask}).item()); }

// Slot of each entry of a flat bool mask: its rank among the true entries, or n.
Tensor slots_of(const Tensor& flat_mask, int64_t n) {
  Tensor ranks = call1("cumsum", {flat_mask.to(DType::i64)}, {{"dim", int64_t(0)}});
  Tensor slot = op2("sub", ranks, scalar_like(1, ranks));
  return call1("where", {flat_mask, slot, scalar_like(double(n), slot)});
}

// src's rows [numel, ...] placed at rows `slot` of a zero tensor [n + 1, ...], the spare row cut off.
Tensor place_rows(const Tensor& src, const Tensor& slot, int64_t n) {
  Shape rows = src.shape();
  rows[0] = n + 1;
  Tensor index = slot;
  if (src.dim() == 2) index = slot.unsqueeze(1).expand(src.shape());
  const bool boolean = src.dtype() == DType::boolean;  // scatter_add has no bool form
  Tensor values = boolean ? src.to(DType::u8) : src;
  Tensor out = call1("scatter_add", {Tensor::zeros(rows, values.dtype(), src.device()), index, values},
                     {{"dim", int64_t(0)}})
                   .narrow(0, 0, n)
                   .contiguous();
  return boolean ? out.to(DType::boolean) : out;
}

std::vector<Tensor> nonzero_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor& x = in[0];
  const int64_t numel = x.numel(), nd = x.dim();
  Tensor mask = truth_of(x).reshape({numel});
  const int64_t n = count_true(mask);
  if (nd == 0) return {Tensor::zeros({n, 0}, DType::i64, x.device())};
  std::vector<Tensor> coords;
  CallOptions on;
  on.device = x.device();
  for (int64_t d = 0; d < nd; ++d) {
    Shape along(size_t(nd), 1);
    along[size_t(d)] = x.size(d);
    Tensor axis = call1("arange", {}, {{"start", 0.0}, {"end", double(x.size(d))}, {"dtype", DType::i64}}, on);
    coords.push_back(axis.reshape(along).expand(x.shape()).reshape({numel, 1}));
  }
  return {place_rows(call1("concat", coords, {{"dim", int64_t(1)}}), slots_of(mask, n), n)};
}

std::vector<TensorMeta> masked_select_infer(const InferContext& c) {
  if (c.dtype(1) != DType::boolean)
    throw DTypeError(str("masked_select: mask must be bool, got ", dtype_name(c.dtype(1))));
  const Shape shape = broadcast_shapes(c.shape(0), c.shape(1));
  return {{{count_true(c.input(1).expand(shape))}, c.dtype(0)}};
}

std::vector<Tensor> masked_select_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Shape shape = broadcast_shapes(in[0].shape(), in[1].shape());
  const int64_t numel = numel_of(shape);
  Tensor mask = in[1].expand(shape).reshape({numel});
  const int64_t n = count_true(mask);
  return {place_rows(in[0].expand(shape).reshape({numel}), slots_of(mask, n), n)};
}

// x with its entries where mask (broadcast to x) is true replaced, in
// row-major order, by source's first elements: each true entry reads the
// source element of its rank among the true entries.
std::vector<TensorMeta> masked_scatter_infer(const InferContext& c) {
  if (c.dtype(1) != DType::boolean)
    throw DTypeError(str("masked_scatter: mask must be bool, got ", dtype_name(c.dtype(1))));
  if (c.dtype(2) != c.dtype(0))
    throw DTypeError(str("masked_scatter: source is ", dtype_name(c.dtype(2)), " but x is ", dtype_name(c.dtype(0)),
                         " (they must match)"));
  const Shape shape = broadcast_shapes(c.shape(0), c.shape(1));  // x and mask broadcast together, as torch
  const int64_t wanted = count_true(c.input(1).expand(shape));
  if (wanted > numel_of(c.shape(2)))
    throw ShapeError(str("masked_scatter: mask selects ", wanted, " entries but source ", shape_str(c.shape(2)),
                         " has only ", numel_of(c.shape(2))));
  return {{shape, c.dtype(0)}};
}

std::vector<Tensor> masked_scatter_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor x = in[0].expand(broadcast_shapes(in[0].shape(), in[1].shape()));
  const int64_t numel = x.numel();
  Tensor mask = in[1].expand(x.shape()).reshape({numel});
  Tensor source = in[2].reshape({in[2].numel()});
  if (numel == 0 || source.numel() == 0) return {x.clone()};  // nothing selected (infer checked the count)
  Tensor running = call1("cumsum", {mask.to(DType::i64)}, {{"dim", int64_t(0)}});
  Tensor slot = call1("where", {mask, op2("sub", running, scalar_like(1, running)), scalar_like(0, running)});
  Tensor picked = call1("index_select", {source, slot}, {{"dim", int64_t(0)}});
  return {call1("where", {mask, picked, x.reshape({numel})}).reshape(x.shape())};
}

// The bin count: max(x) + 1 (at least minlength); x must be non-negative.
int64_t bincount_length(const Tensor& x, int64_t minlength) {
  if (x.numel() == 0) return minlength;
  if (call1("min", {x}).item() < 0) throw ValueError("bincount: the input must hold non-negative integers");
  return std::max<int64_t>(minlength, int64_t(call1("max", {x}).item()) + 1);
}

std::vector<TensorMeta> bincount_infer(const InferContext& c) {
  if (c.ndim(0) != 1 || !is_integral(c.dtype(0)) || c.dtype(0) == DType::boolean)
    throw ValueError(str("bincount: the input must be a 1-D tensor of non-negative integers, got ",
                         dtype_name(c.dtype(0)), " of shape ", shape_str(c.shape(0))));
  const int64_t minlength = c.attrs.get_int("minlength");
  if (minlength < 0) throw ValueError(str("bincount: minlength must be non-negative, got ", minlength));
  DType out = DType::i64;
  if (c.input(1).defined()) {
    if (c.shape(1) != c.shape(0))
      throw ShapeError(str("bincount: weights ", shape_str(c.shape(1)), " must have the input's shape ",
                           shape_str(c.shape(0))));
    out = is_floating(c.dtype(1)) ? c.dtype(1) : DType::f64;
  }
  return {{{bincount_length(c.input(0), minlength)}, out}};
}

std::vector<Tensor> bincount_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t length = bincount_length(x, a.get_int("minlength"));
  Tensor w = in[1].defined() ? (is_floating(in[1].dtype()) ? in[1] : in[1].to(DType::f64))
                             : Tensor::ones(x.shape(), DType::i64, x.device());
  return {call1("scatter_add", {Tensor::zeros({length}, w.dtype(), x.device()), x.to(DType::i64), w},
                {{"dim", int64_t(0)}})};
}

OpSchema with_indices(const std::string& name, std::string doc) {
  return make_schema(name, {InputSpec{"x"}}, {"values", "indices"},
                     {attr("dim", AttrType::kInt, int64_t(-1)), attr("keepdim", AttrType::kBool, false)},
                     along_dim_infer, std::move(doc), DTypePolicy::kNone);
}

}  // namespace

void register_select_composites(OpRegistry& r) {
  const std::vector<std::string> dim_examples{"[7] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1 keepdim=true", "[4,6]{0:3}"};
  r.add(composite(with_indices("median", "the lower median along dim and its position; NaN propagates"),
                  [](const std::vector<Tensor>& in, const Attrs& a) { return median_decompose(in[0], a, false); }),
        dim_examples);
  r.add(composite(with_indices("nanmedian", "the lower median along dim ignoring NaN, and its position"),
                  [](const std::vector<Tensor>& in, const Attrs& a) { return median_decompose(in[0], a, true); }),
        dim_examples);
  r.add(composite(with_indices("mode", "the most frequent value along dim (the smallest of ties) and its last position"),
                  mode_decompose),
        {"[7]{0:3} dim=0", "[3,6,5]{0:3} dim=1", "[3,4,6]{0:4} dim=-1 keepdim=true"});
  const auto right = attr("right", AttrType::kBool, false);
  r.add(no_gradient(composite(
            make_schema("searchsorted", {InputSpec{"sorted_sequence"}, InputSpec{"values"}}, {"y"}, {right},
                        [](const InferContext& c) { return searchsorted_infer(c, 0, 1); },
                        "for each value, its insertion point in the sorted last dim of sorted_sequence (after equal "
                        "entries when right); i64",
                        DTypePolicy::kPromote),
            [](const std::vector<Tensor>& in, const Attrs& a) {
              return std::vector<Tensor>{count_below(in[0], in[1], a.get_bool("right"))};
            })),
        {"[6] [4]", "[6] [2,3] right=true", "[3,5] [3,4]", "[5]{0:5} [7]{0:6} right=true"});
  r.add(no_gradient(composite(
            make_schema("bucketize", {InputSpec{"x"}, InputSpec{"boundaries"}}, {"y"}, {right},
                        [](const InferContext& c) {
                          if (c.ndim(1) != 1)
                            throw ShapeError(str("bucketize: boundaries must be 1-D, got shape ", shape_str(c.shape(1))));
                          return searchsorted_infer(c, 1, 0);
                        },
                        "the bucket of each entry of x among sorted 1-D boundaries (as searchsorted); i64",
                        DTypePolicy::kPromote),
            [](const std::vector<Tensor>& in, const Attrs& a) {
              return std::vector<Tensor>{count_below(in[1], in[0], a.get_bool("right"))};
            })),
        {"[3,4] [5]", "[7]{0:5} [4]{0:5} right=true"});
  r.add(no_gradient(composite(
            make_schema("histc", {InputSpec{"x"}}, {"y"},
                        {attr("bins", AttrType::kInt, int64_t(100)), attr("min", AttrType::kFloat, 0.0),
                         attr("max", AttrType::kFloat, 0.0)},
                        histc_infer,
                        "counts of x in `bins` equal bins over [min, max] (the data's range when min == max)",
                        DTypePolicy::kNone),
            histc_decompose)),
        {"[50] bins=10", "[4,25] bins=7 min=-1 max=1", "[30] bins=5 min=0.5 max=0.5"});
  r.add(no_gradient(composite(
            make_schema("nonzero", {InputSpec{"x"}}, {"y"}, {},
                        [](const InferContext& c) {
                          return std::vector<TensorMeta>{
                              {{count_true(truth_of(c.input(0))), c.ndim(0)}, DType::i64}};
                        },
                        "the indices of the non-zero entries in row-major order, [n, ndim] i64 (the count is read "
                        "back to the host)",
                        DTypePolicy::kNone),
            nonzero_decompose)),
        {"[7]{-1:2}", "[3,4]{-1:2}", "[2,3,4]{0:2}"});
  r.add(composite(make_schema("masked_select", {InputSpec{"x"}, unpromoted("mask")}, {"y"}, {}, masked_select_infer,
                              "the entries of x where mask (broadcast with x) is true, as 1-D (the count is read back "
                              "to the host)",
                              DTypePolicy::kNone),
                  masked_select_decompose),
        {"[3,4] [3,4]", "[3,4] [4]", "[5] [2,5]"});
  r.add(composite(make_schema("masked_scatter", {InputSpec{"x"}, unpromoted("mask"), InputSpec{"source"}}, {"y"},
                              {}, masked_scatter_infer,
                              "x (broadcast with mask) with the entries where mask is true filled, in row-major "
                              "order, from source's first elements of x's dtype (the count is read back to the host)",
                              DTypePolicy::kNone),
                  masked_scatter_decompose),
        {"[3,4] [3,4] [12]", "[3,4] [4] [3,5]", "[5] [5] [7]", "[4] [3,4] [12]"});
  r.add(no_gradient(composite(
            make_schema("bincount", {unpromoted("x"), optional_input("weights")}, {"y"},
                        {attr("minlength", AttrType::kInt, int64_t(0))}, bincount_infer,
                        "how often each value 0..max(x) of a 1-D non-negative integer x occurs (or the sum of its "
                        "weights); max(x) is read back to the host",
                        DTypePolicy::kNone),
            bincount_decompose)),
        {"[20]{0:7}", "[20]{0:7} [20]", "[6]{0:3} minlength=5"});
}

}  // namespace oar
