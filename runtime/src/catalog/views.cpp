// View ops: reshape, permute, slice, select, expand, as_strided, and to_device. Eagerly
// these are Tensor methods (no kernel, no copy); they are in the catalog so a
// graph can name them, infer their shapes and run them. Each runs as its
// Tensor method, which records its own gradient, and its inference is the
// same method applied to a storage-less tensor, so the two cannot disagree
// (as_strided, which reaches past its input's entries, infers from its attributes).
#include "catalog_util.h"
#include "oar/autograd.h"

namespace oar {

namespace {

using namespace catalog;

using ViewFn = Tensor (*)(const Tensor& x, const Attrs& attrs);

Tensor reshape_view(const Tensor& x, const Attrs& a) { return x.reshape(a.get_ints("shape")); }
Tensor permute_view(const Tensor& x, const Attrs& a) { return x.permute(a.get_ints("dims")); }
Tensor slice_view(const Tensor& x, const Attrs& a) {
  return x.slice(a.get_int("dim"), a.get_int("start"), a.get_int("end"), a.get_int("step"));
}
Tensor select_view(const Tensor& x, const Attrs& a) { return x.select(a.get_int("dim"), a.get_int("index")); }
Tensor expand_view(const Tensor& x, const Attrs& a) { return x.expand(a.get_ints("shape")); }
Tensor as_strided_view(const Tensor& x, const Attrs& a) {
  return x.as_strided(a.get_ints("size"), a.get_ints("stride"), a.get_int("storage_offset"));
}

std::vector<TensorMeta> infer_by_applying(ViewFn fn, const InferContext& c) {
  autograd::NoGradGuard no_grad;
  Tensor y = fn(c.input(0), c.attrs);
  return {{y.shape(), y.dtype()}};
}

// as_strided reads memory outside x's own entries, which inference's storage-less inputs lack: its
// bounds are checked when it runs.
std::vector<TensorMeta> infer_as_strided(ViewFn, const InferContext& c) {
  const Shape size = c.attrs.get_ints("size");
  if (size.size() != c.attrs.get_ints("stride").size())
    throw ShapeError(str("as_strided: size ", shape_str(size), " and stride ",
                         shape_str(c.attrs.get_ints("stride")), " differ in length"));
  check_shape_nonnegative(size);
  return {{size, c.dtype(0)}};
}

OpSchema view_op(const std::string& name, std::vector<AttrSpec> attrs, ViewFn fn, std::string doc,
                 std::vector<TensorMeta> (*infer)(ViewFn, const InferContext&) = infer_by_applying) {
  OpSchema s = make_schema(
      name, {unpromoted("x")}, {"y"}, std::move(attrs), [fn, infer](const InferContext& c) { return infer(fn, c); },
      std::move(doc), DTypePolicy::kNone);
  s.view = true;
  s.gradient = Gradient::kTensorMethod;
  s.strided_inputs = true;
  s.decompose = [fn](const std::vector<Tensor>& in, const Attrs& attrs) { return std::vector<Tensor>{fn(in[0], attrs)}; };
  return s;
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  r.add(view_op("reshape", {attr("shape", AttrType::kInts)}, reshape_view,
                "x with a new shape (one entry may be -1); a view when the strides allow, else a copy"));
  r.add(view_op("permute", {attr("dims", AttrType::kInts)}, permute_view, "x with its dimensions reordered (a view)"));
  r.add(view_op("slice",
                {attr("dim", AttrType::kInt), attr("start", AttrType::kInt), attr("end", AttrType::kInt),
                 attr("step", AttrType::kInt, int64_t(1))},
                slice_view, "entries start, start+step, ... before end of dimension dim (a view)"));
  r.add(view_op("select", {attr("dim", AttrType::kInt), attr("index", AttrType::kInt)}, select_view,
                "entry index of dimension dim, which is removed (a view)"));
  r.add(view_op("expand", {attr("shape", AttrType::kInts)}, expand_view,
                "x broadcast to shape without copying (-1 keeps a dimension)"));
  r.add(view_op("as_strided",
                {attr("size", AttrType::kInts), attr("stride", AttrType::kInts),
                 attr("storage_offset", AttrType::kInt)},
                as_strided_view,
                "a view of x's memory with the given sizes, strides and offset (in elements from the "
                "start of the memory, not of x); entries may overlap",
                infer_as_strided));
  OpSchema to_device = make_schema(
      "to_device", {unpromoted("x")}, {"y"}, {attr("device", AttrType::kString)},
      [](const InferContext& c) { return std::vector<TensorMeta>{{c.shape(0), c.dtype(0)}}; },
      "x copied to another device (\"cpu\", \"cuda:1\"); x itself when it is there already",
      DTypePolicy::kNone);
  to_device.view = true;  // no kernel: runs as Tensor::to, which records its own gradient
  to_device.gradient = Gradient::kTensorMethod;
  to_device.strided_inputs = true;
  to_device.decompose = [](const std::vector<Tensor>& in, const Attrs& attrs) {
    return std::vector<Tensor>{in[0].to(Device::parse(attrs.get_string("device")))};
  };
  r.add(std::move(to_device));
}

}  // namespace oar
