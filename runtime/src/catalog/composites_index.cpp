// Catalog: indexed writes and reads written with where, index_select,
// index_add and scatter (masked_fill, take, put, index_fill, index_copy).
// PyTorch's semantics; see composites.h.
#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// index with negative entries counted from the end of a dimension of size n.
Tensor wrapped(const Tensor& index, int64_t n) {
  const Tensor zero = Tensor::full({}, 0, index.dtype(), index.device());
  return call1("where", {op2("lt", index, zero), op2("add", index, Tensor::full({}, double(n), index.dtype(),
                                                                                 index.device())),
                         index});
}

void require_index(const InferContext& c, size_t i, bool vector) {
  require_integral_index(c, i);
  if (vector && c.ndim(i) > 1)
    throw ShapeError(str(c.schema.name, ": index must be 0-D or 1-D, got shape ", shape_str(c.shape(i))));
}

// The dim of x an index op works along (x 0-D: dim 0 or -1).
int64_t along(const InferContext& c) { return normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(c.ndim(0), 1)); }

// ---- masked_fill ----

std::vector<TensorMeta> masked_fill_infer(const InferContext& c) {
  if (c.dtype(1) != DType::boolean)
    throw DTypeError(str("masked_fill: the mask must be bool, got ", dtype_name(c.dtype(1))));
  if (broadcast_shapes(c.shape(0), c.shape(1)) != c.shape(0))
    throw ShapeError(str("masked_fill: mask ", shape_str(c.shape(1)), " does not broadcast to x ",
                         shape_str(c.shape(0))));
  return {{c.shape(0), c.dtype(0)}};
}

// ---- take ----

std::vector<TensorMeta> take_infer(const InferContext& c) {
  require_index(c, 1, false);
  if (c.inputs[0].numel() == 0 && c.inputs[1].numel() > 0)
    throw IndexError("take: cannot take from an empty tensor");
  return {{c.shape(1), c.dtype(0)}};
}

std::vector<Tensor> take_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor flat = in[0].reshape({in[0].numel()});
  const Tensor idx = wrapped(in[1].reshape({in[1].numel()}), in[0].numel());
  return {call1("index_select", {flat, idx}, {{"dim", int64_t(0)}}).reshape(in[1].shape())};
}

// ---- put ----

std::vector<TensorMeta> put_infer(const InferContext& c) {
  require_index(c, 1, false);
  if (c.dtype(2) != c.dtype(0))
    throw DTypeError(str("put: source is ", dtype_name(c.dtype(2)), " but x is ", dtype_name(c.dtype(0))));
  if (c.inputs[1].numel() != c.inputs[2].numel())
    throw ShapeError(str("put: index ", shape_str(c.shape(1)), " and source ", shape_str(c.shape(2)),
                         " must have the same number of elements"));
  if (c.inputs[0].numel() == 0 && c.inputs[1].numel() > 0) throw IndexError("put: cannot put into an empty tensor");
  return {{c.shape(0), c.dtype(0)}};
}

// x flattened with source written (or added, repeats summing) at index;
// the index range is checked first, so an error names put's own index.
std::vector<Tensor> put_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const int64_t n = in[0].numel();
  if (in[1].numel() > 0) {
    const int64_t lo = int64_t(call1("min", {in[1]}).item()), hi = int64_t(call1("max", {in[1]}).item());
    if (lo < -n || hi >= n)
      throw IndexError(str("put: index ", lo < -n ? lo : hi, " is out of bounds for a tensor of ", n, " elements"));
  }
  const Tensor flat = in[0].reshape({in[0].numel()});
  const Tensor idx = wrapped(in[1].reshape({in[1].numel()}), in[0].numel());
  const Tensor src = in[2].reshape({in[2].numel()});
  const char* write = a.get_bool("accumulate") ? "scatter_add" : "scatter";
  return {call1(write, {flat, idx, src}, {{"dim", int64_t(0)}}).reshape(in[0].shape())};
}

// ---- index_fill, index_copy ----

std::vector<TensorMeta> index_fill_infer(const InferContext& c) {
  require_index(c, 1, true);
  along(c);
  return {{c.shape(0), c.dtype(0)}};
}

// x with the slices along dim that index names set to value: a mark per
// position (index_add of ones, so repeats are fine) selects them.
std::vector<Tensor> index_fill_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t d = normalize_axis(a.get_int("dim"), std::max<int64_t>(x.dim(), 1));
  const int64_t n = x.dim() ? x.size(d) : 1;
  const Tensor index = wrapped(in[1].reshape({in[1].numel()}), n);
  const Tensor marks = call1("index_add", {Tensor::zeros({n}, DType::i32, x.device()), index,
                                           Tensor::ones({index.numel()}, DType::i32, x.device())},
                             {{"dim", int64_t(0)}});
  Shape view(size_t(x.dim()), 1);
  if (x.dim()) view[size_t(d)] = n;
  const Tensor chosen = op2("gt", marks, Tensor::zeros({}, DType::i32, x.device())).reshape(view);
  return {call1("where", {chosen, scalar_like(a.get_float("value"), x), x})};
}

std::vector<TensorMeta> index_copy_infer(const InferContext& c) {
  require_index(c, 1, true);
  const int64_t d = along(c);
  if (c.dtype(2) != c.dtype(0))
    throw DTypeError(str("index_copy: source is ", dtype_name(c.dtype(2)), " but x is ", dtype_name(c.dtype(0))));
  Shape want = c.ndim(0) ? c.shape(0) : Shape{1};
  want[size_t(d)] = c.inputs[1].numel();
  const Shape& source = c.shape(2);
  const bool scalar_ok = c.ndim(0) == 0 && c.inputs[2].numel() == 1 && c.inputs[1].numel() == 1;
  if (source != want && !scalar_ok)
    throw ShapeError(str("index_copy: source ", shape_str(source), " must be x's shape ", shape_str(c.shape(0)),
                         " with dim ", d, " of size ", c.inputs[1].numel(), " (one slice per index)"));
  return {{c.shape(0), c.dtype(0)}};
}

// scatter along dim with the index broadcast over source's other dims.
std::vector<Tensor> index_copy_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor x = in[0].dim() ? in[0] : in[0].reshape({1});
  const int64_t d = normalize_axis(a.get_int("dim"), x.dim());
  Shape want = x.shape();
  want[size_t(d)] = in[1].numel();
  Shape view(want.size(), 1);
  view[size_t(d)] = in[1].numel();
  const Tensor index = wrapped(in[1].reshape({in[1].numel()}), x.size(d)).reshape(view).expand(want);
  return {call1("scatter", {x, index, in[2].reshape(want)}, {{"dim", d}}).reshape(in[0].shape())};
}

}  // namespace

void register_index_composites(OpRegistry& r) {
  r.add(composite(make_schema("masked_fill", {InputSpec{"x"}, unpromoted("mask")}, {"y"},
                              {attr("value", AttrType::kFloat)}, masked_fill_infer,
                              "x with value where mask (broadcast to x) is true", DTypePolicy::kNone),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{call1("where", {in[1], scalar_like(a.get_float("value"), in[0]), in[0]})};
                  }),
        {"[3,4] [3,4] value=2.5", "[3,4] [4] value=-1", "[2,3] [] value=0"});
  r.add(composite(make_schema("take", {InputSpec{"x"}, unpromoted("index")}, {"y"}, {}, take_infer,
                              "x flattened, read at index (negative entries count from the end); index's shape",
                              DTypePolicy::kNone),
                  take_decompose),
        {"[3,4] [5]{-12:12}", "[6] [2,3]{0:6}", "[2,3] []{-6:6}"});
  r.add(composite(make_schema("put", {InputSpec{"x"}, unpromoted("index"), InputSpec{"source"}}, {"y"},
                              {attr("accumulate", AttrType::kBool, false)}, put_infer,
                              "x flattened, with source's elements written at index (negative entries count from the "
                              "end), or added with accumulate (repeats summing); x's shape",
                              DTypePolicy::kNone),
                  put_decompose),
        {"[3,4] [5]{-12:12} [5]", "[3,4] [2,3]{0:12} [6] accumulate=true", "[6] []{0:6} []"});
  r.add(composite(make_schema("index_fill", {InputSpec{"x"}, unpromoted("index")}, {"y"},
                              {attr("dim", AttrType::kInt), attr("value", AttrType::kFloat)}, index_fill_infer,
                              "x with the slices along dim that index names (repeats allowed, negative from the end) "
                              "set to value",
                              DTypePolicy::kNone),
                  index_fill_decompose),
        {"[4,5] [2]{0:4} dim=0 value=3", "[4,5] [3]{-5:5} dim=1 value=-1", "[6] []{0:6} dim=0 value=0"});
  r.add(composite(make_schema("index_copy", {InputSpec{"x"}, unpromoted("index"), InputSpec{"source"}}, {"y"},
                              {attr("dim", AttrType::kInt)}, index_copy_infer,
                              "x with slice index[i] along dim replaced by source's slice i (with repeats, the last "
                              "one wins)",
                              DTypePolicy::kNone),
                  index_copy_decompose),
        {"[5,3] [2]{0:5} [2,3] dim=0", "[3,6] [4]{0:6} [3,4] dim=1"});
}

}  // namespace oar
