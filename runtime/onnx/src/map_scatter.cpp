// ONNX ops that write or read at computed positions: ScatterElements /
// Scatter, ScatterND (reductions add, mul, max, min; all but add need the
// indices at import time), GatherND, MaxUnpool (on oar's scatter_add, index_add
// and index_select, with N-D indices turned into flat ones), and Compress /
// ReverseSequence, whose index lists follow from an input that must be known
// at import time (bound or constant).
#include <algorithm>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

Value* zeros(NodeContext& c, const Shape& shape, DType d) {
  return c.op("fill", {}, {{"shape", shape}, {"value", 0.0}, {"dtype", d}});
}
Value* ones(NodeContext& c, const Shape& shape, DType d) {
  return c.op("fill", {}, {{"shape", shape}, {"value", 1.0}, {"dtype", d}});
}

std::string reduction_of(NodeContext& c) {
  std::string r = c.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    c.invalid(str("unknown reduction '", r, "'"));
  return r;
}

// Reductions other than add (mul from opset 16, max and min from 18) with
// indices known at import time: row p of the result reduces data row p with
// every update row aimed at it. The rows to combine are gathered from
// [data; updates; neutral] into [P, 1 + K, ...] (K: most updates at one row;
// unused slots read the data row itself for max/min, a row of ones for mul)
// and reduced over the second dim, so equal values come through exactly.
Value* scatter_reduce_rows(NodeContext& c, Value* data, Value* updates, const std::vector<int64_t>& target,
                           const std::string& reduction) {
  const Shape& ds = c.shape(data);
  int64_t rows = ds[0], n_upd = int64_t(target.size());
  std::vector<std::vector<int64_t>> hits(static_cast<size_t>(rows));
  for (int64_t u = 0; u < n_upd; ++u) {
    int64_t p = target[size_t(u)];
    if (p < 0 || p >= rows) c.invalid(str("index ", p, " is out of range for ", rows, " rows"));
    hits[size_t(p)].push_back(rows + u);
  }
  size_t k = 0;
  for (const auto& h : hits) k = std::max(k, h.size());
  if (k == 0) return data;
  DType d = c.dtype(data);
  Shape row(ds.begin() + 1, ds.end());
  Shape upd_shape{n_upd};
  upd_shape.insert(upd_shape.end(), row.begin(), row.end());
  std::vector<Value*> parts{data, c.reshape(c.cast(updates, d), upd_shape)};
  bool mul = reduction == "mul";
  int64_t neutral = rows + n_upd;
  if (mul) {
    Shape one{1};
    one.insert(one.end(), row.begin(), row.end());
    parts.push_back(c.op("fill", {}, {{"shape", one}, {"value", 1.0}, {"dtype", d}}));
  }
  std::vector<int64_t> gather;
  for (int64_t p = 0; p < rows; ++p) {
    gather.push_back(p);
    const auto& h = hits[size_t(p)];
    for (size_t j = 0; j < k; ++j) gather.push_back(j < h.size() ? h[j] : mul ? neutral : p);
  }
  Value* pool = c.op("concat", parts, {{"dim", int64_t(0)}});
  Value* picked = c.op("index_select", {pool, c.ints(gather)}, {{"dim", int64_t(0)}});
  Shape grouped{rows, int64_t(k + 1)};
  grouped.insert(grouped.end(), row.begin(), row.end());
  picked = c.reshape(picked, grouped);
  Attrs over{{"dims", std::vector<int64_t>{1}}, {"keepdim", false}};
  const char* op = mul ? "prod" : reduction == "max" ? "max" : "min";
  return c.cast(c.op(op, {picked}, over), d);
}

// ScatterElements' target of every update element in the flattened data.
std::vector<int64_t> element_targets(NodeContext& c, const Shape& ds, const Shape& us, const std::vector<int64_t>& idx,
                                     int64_t axis) {
  size_t r = ds.size();
  if (us.size() != r) c.invalid("updates must have the data's rank");
  std::vector<int64_t> strides(r, 1);
  for (size_t i = r - 1; i-- > 0;) strides[i] = strides[i + 1] * ds[i + 1];
  std::vector<int64_t> coord(r, 0), out;
  for (size_t u = 0; u < idx.size(); ++u) {
    int64_t flat = 0;
    for (size_t i = 0; i < r; ++i) {
      int64_t v = coord[i];
      if (int64_t(i) == axis) {
        v = idx[u] < 0 ? idx[u] + ds[i] : idx[u];
        if (v < 0 || v >= ds[i]) c.invalid(str("index ", idx[u], " is out of range for axis ", axis, " of size ", ds[i]));
      } else if (v >= ds[i]) {
        c.invalid("updates are larger than the data outside the axis");
      }
      flat += v * strides[i];
    }
    out.push_back(flat);
    for (size_t i = r; i-- > 0;) {  // next coordinate of the updates, row-major
      if (++coord[i] < us[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

std::vector<Value*> scatter_elements_op(NodeContext& c) {
  Value* data = c.required_input(0);
  Value* updates = c.required_input(2);
  int64_t a = c.axis(c.attr_int("axis", 0), c.rank(data));
  Value* idx = wrap_indices(c, c.required_input(1), c.shape(data)[size_t(a)]);
  DType d = c.dtype(data);
  Attrs attrs{{"dim", a}};
  std::string reduction = reduction_of(c);
  if (reduction == "add") return {c.op("scatter_add", {data, idx, updates}, attrs)};
  if (reduction != "none") {
    std::vector<int64_t> targets =
        element_targets(c, c.shape(data), c.shape(updates), c.constant_ints(1, "indices"), a);
    Value* flat = c.reshape(data, {numel_of(c.shape(data))});
    Value* upd = c.reshape(updates, {numel_of(c.shape(updates))});
    return {c.reshape(scatter_reduce_rows(c, flat, upd, targets, reduction), c.shape(data))};
  }
  // replace: the written positions take the (summed) updates, the rest keep data
  Value* hits = c.op("scatter_add", {zeros(c, c.shape(data), d), idx, ones(c, c.shape(updates), d)}, attrs);
  Value* written = c.op("scatter_add", {zeros(c, c.shape(data), d), idx, c.cast(updates, d)}, attrs);
  return {c.where(c.op("gt", {hits, c.scalar(0, d)}), written, data)};
}

// [..., k] indices into the first k dims of `shape` -> flat i64 indices [...]
Value* flat_indices(NodeContext& c, Value* idx, const Shape& shape) {
  const Shape& is = c.shape(idx);
  int64_t k = is.back();
  if (k > int64_t(shape.size())) c.invalid("the last indices dimension exceeds the data rank");
  std::vector<int64_t> dims(shape.begin(), shape.begin() + k), strides(size_t(k), 1);
  for (int64_t j = k - 2; j >= 0; --j) strides[size_t(j)] = strides[size_t(j + 1)] * dims[size_t(j + 1)];
  idx = c.cast(idx, DType::i64);
  Value* dims_v = c.ints(dims);
  idx = c.where(c.op("lt", {idx, c.scalar(0, DType::i64)}), c.add(idx, dims_v), idx);
  Value* flat = c.sum(c.mul(idx, c.ints(strides)), {-1}, false);
  return c.reshape(flat, {numel_of(c.shape(flat))});
}

std::vector<Value*> scatter_nd_op(NodeContext& c) {
  Value* data = c.required_input(0);
  Value* idx = c.required_input(1);
  Value* updates = c.required_input(2);
  const Shape& ds = c.shape(data);
  int64_t k = c.shape(idx).back();
  Shape rest(ds.begin() + k, ds.end());
  Shape flat_shape{numel_of(Shape(ds.begin(), ds.begin() + k))};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  Value* flat = flat_indices(c, idx, ds);
  Shape upd_shape{c.shape(flat)[0]};
  upd_shape.insert(upd_shape.end(), rest.begin(), rest.end());
  Value* data_flat = c.reshape(data, flat_shape);
  Value* upd_flat = c.reshape(c.cast(updates, c.dtype(data)), upd_shape);
  Attrs attrs{{"dim", int64_t(0)}};
  DType d = c.dtype(data);
  Value* y;
  std::string reduction = reduction_of(c);
  if (reduction == "add") {
    y = c.op("index_add", {data_flat, flat, upd_flat}, attrs);
  } else if (reduction != "none") {
    std::optional<Tensor> rows = c.evaluate(flat);
    if (!rows)
      c.unsupported(str("reduction '", reduction, "' needs indices known at import time (a constant or a bound input)"));
    y = scatter_reduce_rows(c, data_flat, upd_flat, rows->to_vector<int64_t>(), reduction);
  } else {
    Value* hits = c.op("index_add", {zeros(c, {flat_shape[0]}, d), flat, ones(c, {upd_shape[0]}, d)}, attrs);
    Shape hit_shape(flat_shape.size(), 1);
    hit_shape[0] = flat_shape[0];
    Value* mask = c.reshape(c.op("gt", {hits, c.scalar(0, d)}), hit_shape);
    y = c.where(mask, c.op("index_add", {zeros(c, flat_shape, d), flat, upd_flat}, attrs), data_flat);
  }
  return {c.reshape(y, ds)};
}

std::vector<Value*> gather_nd_op(NodeContext& c) {
  Value* data = c.required_input(0);
  Value* idx = c.required_input(1);
  int64_t b = c.attr_int("batch_dims", 0);
  const Shape& ds = c.shape(data);
  const Shape& is = c.shape(idx);
  int64_t k = is.back();
  if (b < 0 || b + k > int64_t(ds.size())) c.invalid("batch_dims + indices' last dimension exceed the data rank");
  int64_t batch = numel_of(Shape(ds.begin(), ds.begin() + b));
  Shape inner(ds.begin() + b, ds.end());
  Shape rest(ds.begin() + b + k, ds.end());
  int64_t per_batch = numel_of(Shape(inner.begin(), inner.begin() + k));
  Value* flat = flat_indices(c, c.reshape(idx, {batch, numel_of(is) / (batch * k), k}), inner);  // [batch * m]
  if (b > 0) {
    // offset every batch into its own block of the flattened data
    int64_t m = c.shape(flat)[0] / batch;
    std::vector<int64_t> offsets;
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < m; ++j) offsets.push_back(i * per_batch);
    flat = c.add(flat, c.ints(offsets));
  }
  Shape flat_shape{batch * per_batch};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  Value* picked = c.op("index_select", {c.reshape(data, flat_shape), flat}, {{"dim", int64_t(0)}});
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return {c.reshape(picked, out)};
}

std::vector<Value*> compress_op(NodeContext& c) {
  Value* x = c.required_input(0);
  std::vector<int64_t> cond = c.constant_input(1, "condition").to_vector<int64_t>();  // bool
  int64_t a = 0;
  if (c.has_attr("axis")) {
    a = c.axis(c.attr_int("axis"), c.rank(x));
  } else {
    x = c.reshape(x, {numel_of(c.shape(x))});
  }
  int64_t n = c.shape(x)[size_t(a)];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min<int64_t>(n, int64_t(cond.size())); ++i)
    if (cond[size_t(i)]) keep.push_back(i);
  if (keep.empty()) return {c.slice(x, a, 0, 0)};
  return {c.op("index_select", {x, c.ints(keep)}, {{"dim", a}})};
}

std::vector<Value*> reverse_sequence_op(NodeContext& c) {
  Value* x = c.required_input(0);
  std::vector<int64_t> lens = c.constant_ints(1, "sequence_lens");
  int64_t ba = c.axis(c.attr_int("batch_axis", 1), c.rank(x));
  int64_t ta = c.axis(c.attr_int("time_axis", 0), c.rank(x));
  const Shape& s = c.shape(x);
  int64_t batch = s[size_t(ba)], steps = s[size_t(ta)];
  if (int64_t(lens.size()) != batch) c.invalid("sequence_lens must have one entry per batch element");
  // index[t, b] along the time axis: reversed within each sequence's length
  Shape is(s.size(), 1);
  is[size_t(ba)] = batch;
  is[size_t(ta)] = steps;
  std::vector<int64_t> idx(size_t(batch * steps));
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t b = 0; b < batch; ++b) {
      int64_t pos = ba < ta ? b * steps + t : t * batch + b;
      idx[size_t(pos)] = t < lens[size_t(b)] ? lens[size_t(b)] - 1 - t : t;
    }
  Value* index = c.expand(c.reshape(c.ints(idx), is), s);
  return {c.op("gather", {x, c.op("copy", {index})}, {{"dim", ta}})};
}

std::vector<Value*> max_unpool_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* idx = c.required_input(1);
  const Shape& s = c.shape(x);
  size_t n = s.size() - 2;
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  Shape out{s[0], s[1]};
  for (size_t i = 0; i < n; ++i) out.push_back((s[2 + i] - 1) * strides[i] - pads[i] - pads[i + n] + k[i]);
  // the indices address the flattened default-sized output
  int64_t total = numel_of(out);
  Value* flat_idx = c.reshape(c.cast(idx, DType::i64), {numel_of(c.shape(idx))});
  Value* y = c.op("index_add", {zeros(c, {total}, c.dtype(x)), flat_idx, c.reshape(x, {numel_of(s)})},
                  {{"dim", int64_t(0)}});
  y = c.reshape(y, out);
  if (c.has_input(2)) {
    // a larger requested shape extends each spatial dim at its end
    std::vector<int64_t> wanted = c.constant_ints(2, "output_shape");
    if (wanted.size() != out.size()) c.invalid("output_shape must have the input's rank");
    std::vector<int64_t> pads_end;
    for (size_t i = out.size(); i-- > 0;) pads_end.insert(pads_end.end(), {0, wanted[i] - out[i]});
    y = c.op("pad", {y}, {{"pads", pads_end}, {"mode", std::string("constant")}, {"value", 0.0}});
  }
  return {y};
}

}  // namespace

void register_scatter_mappers(MapperTable& t) {
  t.add("ScatterElements", scatter_elements_op);
  t.add("Scatter", scatter_elements_op);  // the opset < 11 name of the same op
  t.add("ScatterND", scatter_nd_op);
  t.add("GatherND", gather_nd_op);
  t.add("Compress", compress_op);
  t.add("ReverseSequence", reverse_sequence_op);
  t.add("MaxUnpool", max_unpool_op);
}

}  // namespace oar::onnx::detail
