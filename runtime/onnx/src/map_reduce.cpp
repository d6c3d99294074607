// ONNX reductions and the ops defined along one axis: Reduce* (axes as an
// attribute before opset 18, an input after, and already an input for
// ReduceSum from 13; bools for ReduceMax/Min from 20), ArgMax/ArgMin with select_last_index, CumSum, and
// Softmax/LogSoftmax/Hardmax, whose opset < 13 forms flatten the input to
// 2-D at `axis` rather than working along one axis.
#include <algorithm>
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct ReduceArgs {
  std::vector<int64_t> dims;  // empty: all
  bool keepdims = true;
  bool noop = false;  // axes empty and noop_with_empty_axes: identity
};

ReduceArgs reduce_args(NodeContext& c, int64_t axes_input_since) {
  ReduceArgs r;
  Value* x = c.required_input(0);
  auto axes = c.ints_input_or_attr(1, "axes", axes_input_since);
  r.keepdims = c.attr_int("keepdims", 1) != 0;
  if (axes && !axes->empty()) {
    for (int64_t a : *axes) r.dims.push_back(c.axis(a, c.rank(x)));
    std::sort(r.dims.begin(), r.dims.end());
    r.dims.erase(std::unique(r.dims.begin(), r.dims.end()), r.dims.end());
  } else {
    r.noop = c.attr_int("noop_with_empty_axes", 0) != 0;
  }
  return r;
}

Attrs reduce_attrs(const ReduceArgs& r) { return {{"dims", r.dims}, {"keepdim", r.keepdims}}; }

// f(x, args) -> reduced value; the mapping handles the axes and no-op forms.
using Reducer = Value* (*)(NodeContext&, Value*, const ReduceArgs&);

Mapper reduce(Reducer f, int64_t axes_input_since = 18) {
  return [f, axes_input_since](NodeContext& c) -> std::vector<Value*> {
    ReduceArgs r = reduce_args(c, axes_input_since);
    Value* x = c.required_input(0);
    if (r.noop) return {x};
    return {f(c, x, r)};
  };
}

Value* floating_mean(NodeContext& c, Value* x, const ReduceArgs& r) {
  DType d = c.dtype(x);
  if (is_floating(d)) return c.op("mean", {x}, reduce_attrs(r));
  return c.cast(c.op("mean", {c.cast(x, DType::f64)}, reduce_attrs(r)), d);
}

Value* keep_dtype(NodeContext& c, Value* reduced, DType d) { return c.cast(reduced, d); }

Value* reduce_sum(NodeContext& c, Value* x, const ReduceArgs& r) { return c.sum(x, r.dims, r.keepdims); }
Value* reduce_mean(NodeContext& c, Value* x, const ReduceArgs& r) { return floating_mean(c, x, r); }
// max/min of bools (ReduceMax/Min from opset 20) are any/all, taken on u8.
Value* extreme(NodeContext& c, const char* op, Value* x, const ReduceArgs& r) {
  if (c.dtype(x) != DType::boolean) return c.op(op, {x}, reduce_attrs(r));
  return c.cast(c.op(op, {c.cast(x, DType::u8)}, reduce_attrs(r)), DType::boolean);
}
Value* reduce_max(NodeContext& c, Value* x, const ReduceArgs& r) { return extreme(c, "max", x, r); }
Value* reduce_min(NodeContext& c, Value* x, const ReduceArgs& r) { return extreme(c, "min", x, r); }
Value* reduce_prod(NodeContext& c, Value* x, const ReduceArgs& r) {
  return keep_dtype(c, c.op("prod", {x}, reduce_attrs(r)), c.dtype(x));
}
Value* reduce_l1(NodeContext& c, Value* x, const ReduceArgs& r) { return c.sum(c.op("abs", {x}), r.dims, r.keepdims); }
Value* reduce_sum_square(NodeContext& c, Value* x, const ReduceArgs& r) { return c.sum(c.mul(x, x), r.dims, r.keepdims); }
Value* reduce_l2(NodeContext& c, Value* x, const ReduceArgs& r) {
  Value* s = c.sum(c.mul(x, x), r.dims, r.keepdims);
  return keep_dtype(c, c.op("sqrt", {s}), c.dtype(x));
}
Value* reduce_log_sum(NodeContext& c, Value* x, const ReduceArgs& r) {
  return keep_dtype(c, c.op("log", {c.sum(x, r.dims, r.keepdims)}), c.dtype(x));
}
Value* reduce_log_sum_exp(NodeContext& c, Value* x, const ReduceArgs& r) {
  // max-shifted, so large inputs do not overflow exp
  ReduceArgs kept = r;
  kept.keepdims = true;
  Value* m = c.op("max", {x}, reduce_attrs(kept));
  Value* s = c.sum(c.op("exp", {c.sub(x, m)}), r.dims, true);
  Value* y = c.add(c.op("log", {s}), m);
  if (!r.keepdims) {
    Shape out;
    for (int64_t i = 0; i < c.rank(x); ++i)
      if (!r.dims.empty() && !std::binary_search(r.dims.begin(), r.dims.end(), i)) out.push_back(c.shape(x)[size_t(i)]);
    y = c.reshape(y, out);
  }
  return keep_dtype(c, y, c.dtype(x));
}

std::vector<Value*> arg_op(NodeContext& c, const char* op) {
  Value* x = c.required_input(0);
  int64_t a = c.axis(c.attr_int("axis", 0), c.rank(x));
  bool keep = c.attr_int("keepdims", 1) != 0;
  Attrs attrs{{"dims", std::vector<int64_t>{a}}, {"keepdim", keep}};
  if (c.attr_int("select_last_index", 0) == 0) return {c.op(op, {x}, attrs)};
  // the last extreme is the first one of the reversed input
  int64_t n = c.shape(x)[size_t(a)];
  Value* rev = c.op(op, {c.flip(x, a)}, attrs);
  return {c.sub(c.constant(Tensor::full({}, double(n - 1), DType::i64, Device::cpu())), rev)};
}

std::vector<Value*> cumsum_op(NodeContext& c) {
  Value* x = c.required_input(0);
  DType d = c.dtype(x);
  int64_t r = c.rank(x);
  int64_t a = c.axis(int64_t(c.constant_input(1, "axis").item()), r);
  bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  int64_t n = c.shape(x)[size_t(a)];
  // y = x @ M along the axis, M[i][j] = 1 where element i contributes to output j
  DType compute = is_floating(d) ? d : DType::f64;
  std::vector<double> m(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool in = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      m[size_t(i * n + j)] = in ? 1.0 : 0.0;
    }
  Tensor mt = Tensor::from_vector(m, {n, n}, Device::cpu()).to(compute);
  const auto [perm, inverse] = axis_last(r, a);
  Value* moved = c.permute(c.cast(x, compute), perm);
  if (r == 1) moved = c.unsqueeze(moved, 0);  // matmul wants a matrix
  Value* y = c.op("matmul", {moved, c.constant(mt)});
  if (r == 1) y = c.reshape(y, {n});
  return {c.cast(c.permute(y, inverse), d)};
}

// Softmax-like ops: opset >= 13 works along `axis` (default -1); older
// opsets flatten to [prod(shape[:axis]), prod(shape[axis:])] (default axis 1).
Value* along_axis(NodeContext& c, Value* x, const std::function<Value*(Value*, int64_t)>& f) {
  int64_t r = c.rank(x);
  if (c.opset() >= 13) return f(x, c.axis(c.attr_int("axis", -1), r));
  int64_t a = c.attr_int("axis", 1);
  if (a < -r || a > r) c.invalid(str("axis ", a, " is out of range for rank ", r));
  if (a < 0) a += r;
  const Shape& s = c.shape(x);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < a ? outer : inner) *= s[size_t(i)];
  return c.reshape(f(c.reshape(x, {outer, inner}), 1), s);
}

std::vector<Value*> hardmax_op(NodeContext& c) {
  Value* x = c.required_input(0);
  return {along_axis(c, x, [&](Value* v, int64_t a) {
    Value* idx = c.op("argmax", {v}, {{"dims", std::vector<int64_t>{a}}, {"keepdim", true}});
    int64_t n = c.shape(v)[size_t(a)];
    std::vector<int64_t> range(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) range[size_t(i)] = i;
    Shape rs(size_t(c.rank(v)), 1);
    rs[size_t(a)] = n;
    Value* hot = c.op("eq", {idx, c.reshape(c.ints(range), rs)});
    return c.cast(hot, c.dtype(v));
  })};
}

// TopK as the catalog's topk (a stable sort: ties keep the lower index
// first, as ONNX orders them, for the largest and the smallest alike).
std::vector<Value*> top_k_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t k = c.opset() < 10 ? c.attr_int("k") : c.constant_ints(1, "K").at(0);
  int64_t a = c.axis(c.attr_int("axis", -1), c.rank(x));
  int64_t n = c.shape(x)[size_t(a)];
  if (k < 0 || k > n) c.invalid(str("K = ", k, " is not in [0, ", n, "]"));
  return c.ops("topk", {x}, {{"k", k}, {"dim", a}, {"largest", c.attr_int("largest", 1) != 0}, {"sorted", true}});
}

}  // namespace

void register_reduction_mappers(MapperTable& t) {
  t.add("ReduceSum", reduce(reduce_sum, 13));
  t.add("ReduceMean", reduce(reduce_mean));
  t.add("ReduceMax", reduce(reduce_max));
  t.add("ReduceMin", reduce(reduce_min));
  t.add("ReduceProd", reduce(reduce_prod));
  t.add("ReduceL1", reduce(reduce_l1));
  t.add("ReduceL2", reduce(reduce_l2));
  t.add("ReduceLogSum", reduce(reduce_log_sum));
  t.add("ReduceLogSumExp", reduce(reduce_log_sum_exp));
  t.add("ReduceSumSquare", reduce(reduce_sum_square));
  t.add("ArgMax", [](NodeContext& c) { return arg_op(c, "argmax"); });
  t.add("ArgMin", [](NodeContext& c) { return arg_op(c, "argmin"); });
  t.add("CumSum", cumsum_op);
  t.add("TopK", top_k_op);
  t.add("Softmax", [](NodeContext& c) -> std::vector<Value*> {
    return {along_axis(c, c.required_input(0), [&](Value* v, int64_t a) { return c.op("softmax", {v}, {{"dim", a}}); })};
  });
  t.add("LogSoftmax", [](NodeContext& c) -> std::vector<Value*> {
    return {along_axis(c, c.required_input(0),
                       [&](Value* v, int64_t a) { return c.op("log_softmax", {v}, {{"dim", a}}); })};
  });
  t.add("Hardmax", hardmax_op);
}

}  // namespace oar::onnx::detail
