// View ops: reshape, permute, slice, select, expand, and to_device. Eagerly
// these are Tensor methods (no kernel, no copy); they are in the catalog so a
// graph can name them, infer their shapes and run them. Each runs as its
// Tensor method, which records its own gradient, and its inference is the
// same method applied to a storage-less tensor, so the two cannot disagree.
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

OpSchema view_op(const std::string& name, std::vector<AttrSpec> attrs, ViewFn fn, std::string doc) {
  OpSchema s = make_schema(
      name, {unpromoted("x")}, {"y"}, std::move(attrs),
      [fn](const InferContext& c) {
        autograd::NoGradGuard no_grad;
        Tensor y = fn(c.input(0), c.attrs);
        return std::vector<TensorMeta>{{y.shape(), y.dtype()}};
      },
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
