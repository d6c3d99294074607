// Catalog: scatter (the last write to a target wins) and scatter_reduce
// (sum, prod, mean, amax, amin; with or without x's own values), written with
// sort, gather, scatter_add and where: the index is sorted stably along dim
// so equal targets form runs, a reduction scans within each run, and each
// run's last entry is placed. PyTorch's semantics; see composites.h.
#include "catalog_util.h"
#include "composites.h"

namespace oar {

using namespace catalog;

namespace {

std::vector<TensorMeta> scatter_infer(const InferContext& c) {
  require_integral_index(c, 1);
  const int64_t nd = c.ndim(0);
  const int64_t d = normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(nd, 1));
  const Shape &x = c.shape(0), &index = c.shape(1), &src = c.shape(2);
  if (int64_t(index.size()) != nd || int64_t(src.size()) != nd)
    throw ShapeError(str(c.schema.name, ": index ", shape_str(index), " and src ", shape_str(src),
                         " must have as many dimensions as x ", shape_str(x)));
  for (int64_t k = 0; k < nd; ++k)
    if (index[size_t(k)] > src[size_t(k)] || (k != d && index[size_t(k)] > x[size_t(k)]))
      throw ShapeError(str(c.schema.name, ": index ", shape_str(index), " is larger than src ", shape_str(src),
                           ", or than x ", shape_str(x), " outside dim ", d));
  if (c.schema.name == "scatter_reduce") {
    const std::string& r = c.attrs.get_string("reduce");
    if (r != "sum" && r != "prod" && r != "mean" && r != "amax" && r != "amin")
      throw ValueError(str("scatter_reduce: reduce must be sum, prod, mean, amax or amin, got '", r, "'"));
  }
  return {{x, c.dtype(0)}};
}

// src's leading block of index's shape (scatter reads src only where index has entries).
Tensor region(Tensor src, const Shape& shape) {
  for (size_t k = 0; k < shape.size(); ++k)
    if (src.size(int64_t(k)) != shape[k]) src = src.narrow(int64_t(k), 0, shape[k]);
  return src;
}

// Inclusive scan of `combine` within runs of equal (sorted) targets along d, in log2(n) steps.
Tensor segment_scan(Tensor values, const Tensor& targets, int64_t d, const char* combine) {
  const int64_t n = values.size(d);
  for (int64_t step = 1; step < n; step *= 2) {
    Tensor cur = values.narrow(d, step, n - step), prev = values.narrow(d, 0, n - step);
    Tensor same = op2("eq", targets.narrow(d, step, n - step), targets.narrow(d, 0, n - step));
    values = call1("concat", {values.narrow(d, 0, step), call1("where", {same, op2(combine, cur, prev), cur})},
                   {{"dim", d}});
  }
  return values;
}

// x with src combined into x at index along d; reduce "" overwrites (the last write wins).
Tensor scatter_into(const Tensor& x, const Tensor& index, const Tensor& src_in, int64_t d, const std::string& reduce,
                    bool include_self) {
  const bool boolean = x.dtype() == DType::boolean;  // scatter_add has no bool form
  const Tensor base = boolean ? x.to(DType::u8) : x;
  const Tensor src = region(src_in, index.shape()).to(base.dtype());
  const Tensor zeros = Tensor::zeros(base.shape(), base.dtype(), base.device());
  const DType count_dtype = base.dtype() == DType::u8 ? DType::i32 : base.dtype();
  const Attrs along{{"dim", d}};
  Tensor y;
  if (reduce == "sum" || reduce == "mean") {
    Tensor total = call1("scatter_add", {zeros, index, src}, along);
    Tensor count = call1("scatter_add", {Tensor::zeros(base.shape(), count_dtype, base.device()), index,
                                         Tensor::ones(index.shape(), count_dtype, base.device())},
                         along);
    Tensor hit = op2("gt", count, scalar_like(0, count));
    if (reduce == "sum") {
      y = include_self ? op2("add", base, total) : call1("where", {hit, total, base});
    } else {
      if (include_self) {
        total = op2("add", total, base);
        count = op2("add", count, scalar_like(1, count));
      }
      count = call1("where", {hit, count, scalar_like(1, count)});
      Tensor mean = is_floating(base.dtype())
                        ? op2("div", total, count)
                        : op1("floor", op2("div", total.to(DType::f64), count.to(DType::f64))).to(base.dtype());
      y = call1("where", {hit, mean, base});
    }
  } else {
    auto sorted = call("sort", {index}, {{"dim", d}, {"descending", false}});
    const Tensor& targets = sorted[0];
    Tensor values = call1("gather", {src, sorted[1]}, along);
    const int64_t n = targets.size(d);
    Tensor last = op2("ne", targets, targets);  // all false; set below where n > 0
    if (n > 0) {
      Tensor ends = op2("ne", targets.narrow(d, 1, n - 1), targets.narrow(d, 0, n - 1));
      Tensor first = targets.narrow(d, 0, 1);
      last = call1("concat", {ends, op2("eq", first, first)}, along);
    }
    if (reduce == "prod") values = segment_scan(values, targets, d, "mul");
    if (reduce == "amax") values = segment_scan(values, targets, d, "maximum");
    if (reduce == "amin") values = segment_scan(values, targets, d, "minimum");
    Tensor placed = call1("scatter_add", {zeros, targets, call1("where", {last, values, scalar_like(0, values)})}, along);
    Tensor hits = call1("scatter_add", {Tensor::zeros(base.shape(), count_dtype, base.device()), targets,
                                        last.to(count_dtype)},
                        along);
    if (!reduce.empty() && include_self)
      placed = op2(reduce == "prod" ? "mul" : reduce == "amax" ? "maximum" : "minimum", base, placed);
    y = call1("where", {op2("gt", hits, scalar_like(0, hits)), placed, base});
  }
  return boolean ? y.to(DType::boolean) : y;
}

std::vector<Tensor> scatter_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t d = normalize_axis(a.get_int("dim"), std::max<int64_t>(in[0].dim(), 1));
  if (in[0].dim() == 0) {  // one element: scatter into [1]
    Tensor y = scatter_into(in[0].reshape({1}), in[1].reshape({1}), in[2].reshape({1}), 0,
                            a.has("reduce") ? a.get_string("reduce") : "", !a.has("include_self") || a.get_bool("include_self"));
    return {y.reshape({})};
  }
  return {scatter_into(in[0], in[1], in[2], d, a.has("reduce") ? a.get_string("reduce") : "",
                       !a.has("include_self") || a.get_bool("include_self"))};
}

}  // namespace

void register_scatter_composites(OpRegistry& r) {
  const std::vector<InputSpec> inputs{InputSpec{"x"}, unpromoted("index"), unpromoted("src")};
  r.add(composite(make_schema("scatter", inputs, {"y"}, {attr("dim", AttrType::kInt)}, scatter_infer,
                              "copy of x with y[..index[i][j]..] = src[i][j] along dim (the last write to a target "
                              "wins)",
                              DTypePolicy::kNone),
                  scatter_decompose),
        {"[3,5] [3,4]{0:5} [3,4] dim=1", "[4,3] [6,3]{0:4} [6,3] dim=0", "[5] [3]{0:5} [4] dim=0"});
  r.add(composite(make_schema("scatter_reduce", inputs, {"y"},
                              {attr("dim", AttrType::kInt), attr("reduce", AttrType::kString),
                               attr("include_self", AttrType::kBool, true)},
                              scatter_infer,
                              "copy of x with src combined into the targets index names along dim: sum, prod, mean, "
                              "amax or amin, with or without x's own values",
                              DTypePolicy::kNone),
                  scatter_decompose),
        {"[3,5] [3,4]{0:5} [3,4] dim=1 reduce='sum'", "[4,3] [6,3]{0:4} [6,3] dim=0 reduce='prod'",
         "[4,3] [6,3]{0:4} [6,3] dim=0 reduce='mean' include_self=false",
         "[3,5] [3,6]{0:5} [3,6] dim=1 reduce='amax'", "[3,5] [3,6]{0:5} [3,6] dim=1 reduce='amin' include_self=false"});
}

}  // namespace oar
