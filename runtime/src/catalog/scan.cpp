// Catalog: scans and sorts along one dim (cumsum, cumprod, cummax, cummin,
// logcumsumexp, sort) and the ops written with them (topk, kthvalue,
// median along a dim). Kernels: kernel_primitives' scan family.
#include "catalog_util.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// One input (or the gradient and what the backward reads), a `dim`; outputs
// the input's shape: the scan itself, and i64 positions when `with_indices`.
OpSchema along_dim(const std::string& name, std::vector<InputSpec> inputs, std::vector<std::string> outputs,
                   std::string doc, bool floating_only, std::vector<AttrSpec> extra = {}) {
  const size_t data = inputs.size() - 1;  // the last input has the data's shape (x)
  const bool with_indices = outputs.size() == 2;
  std::vector<AttrSpec> attrs{attr("dim", AttrType::kInt)};
  for (auto& a : extra) attrs.push_back(std::move(a));
  return make_schema(
      name, std::move(inputs), std::move(outputs), std::move(attrs),
      [data, with_indices, floating_only](const InferContext& c) {
        if (floating_only) require_floating(c, data);
        else if (c.dtype(data) == DType::boolean)
          throw DTypeError(str("op '", c.schema.name, "' does not accept bool tensors; convert to an integer dtype"));
        normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(c.ndim(data), 1));
        for (size_t i = 0; i < data; ++i)
          if (c.shape(i) != c.shape(data))
            throw ShapeError(str("op '", c.schema.name, "': input '", c.schema.inputs[i].name, "' has shape ",
                                 shape_str(c.shape(i)), ", expected ", shape_str(c.shape(data))));
        std::vector<TensorMeta> out{{c.shape(data), c.dtype(data)}};
        if (with_indices) out.push_back({c.shape(data), DType::i64});
        return out;
      },
      std::move(doc), DTypePolicy::kPromote);
}

// A 0-d input scans as one element: kernels see it as [1].
std::vector<Tensor> topk_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t dim = normalize_axis(a.get_int("dim"), std::max<int64_t>(x.dim(), 1));
  auto sorted = call("sort", {x}, {{"dim", dim}, {"descending", a.get_bool("largest")}});
  const int64_t k = a.get_int("k");
  if (x.dim() == 0) return sorted;
  return {sorted[0].narrow(dim, 0, k).contiguous(), sorted[1].narrow(dim, 0, k).contiguous()};
}

std::vector<TensorMeta> topk_infer(const InferContext& c) {
  if (c.dtype(0) == DType::boolean) throw DTypeError("topk: bool tensors are not supported; convert to an integer dtype");
  const int64_t ndim = c.ndim(0);
  const int64_t dim = normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(ndim, 1));
  const int64_t size = ndim == 0 ? 1 : c.shape(0)[size_t(dim)];
  const int64_t k = c.attrs.get_int("k");
  if (k < 0 || k > size)
    throw ValueError(str("topk: k (", k, ") is out of range for dimension ", dim, " of size ", size));
  Shape s = c.shape(0);
  if (ndim > 0) s[size_t(dim)] = k;
  return {{s, c.dtype(0)}, {s, DType::i64}};
}

// The k-th smallest (1-based) along dim, keepdim as PyTorch's kthvalue.
std::vector<Tensor> kthvalue_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const int64_t dim = normalize_axis(a.get_int("dim"), std::max<int64_t>(x.dim(), 1));
  auto sorted = call("sort", {x}, {{"dim", dim}, {"descending", false}});
  if (x.dim() == 0) return sorted;
  const int64_t at = a.get_int("k") - 1;
  Tensor v = sorted[0].narrow(dim, at, 1);
  Tensor i = sorted[1].narrow(dim, at, 1);
  if (!a.get_bool("keepdim")) {
    v = v.squeeze(dim);
    i = i.squeeze(dim);
  }
  return {v.contiguous(), i.contiguous()};
}

std::vector<TensorMeta> kthvalue_infer(const InferContext& c) {
  if (c.dtype(0) == DType::boolean) throw DTypeError(str(c.schema.name, ": bool tensors are not supported"));
  const int64_t ndim = c.ndim(0);
  const int64_t dim = normalize_axis(c.attrs.get_int("dim"), std::max<int64_t>(ndim, 1));
  const int64_t size = ndim == 0 ? 1 : c.shape(0)[size_t(dim)];
  const int64_t k = c.attrs.get_int("k");
  if (k < 1 || k > size)
    throw ValueError(str(c.schema.name, ": k (", k, ") is out of range for dimension ", dim, " of size ", size,
                         " (valid range [1, ", size, "])"));
  Shape s = c.shape(0);
  if (ndim > 0) {
    if (c.attrs.get_bool("keepdim")) s[size_t(dim)] = 1;
    else s.erase(s.begin() + dim);
  }
  return {{s, c.dtype(0)}, {s, DType::i64}};
}

}  // namespace

void register_scan_ops(OpRegistry& r) {
  const auto rev = attr("reverse", AttrType::kBool, false);
  r.add(along_dim("cumsum", {InputSpec{"x"}}, {"y"}, "running sum along dim (from the end when reverse)", false, {rev}),
        {"[5] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1 reverse=true", "[2,7] dim=0", "large:[64,4099] dim=1"});
  r.add(along_dim("cumprod", {InputSpec{"x"}}, {"y"}, "running product along dim", false),
        {"[5]{-2:2} dim=0", "[3,4,5]{-2:2} dim=1", "[3,4,5]{-2:2} dim=-1"});
  r.add(along_dim("cummax", {InputSpec{"x"}}, {"values", "indices"},
                  "running maximum along dim and where it was last reached (NaN propagates)", false),
        {"[6] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1"});
  r.add(along_dim("cummin", {InputSpec{"x"}}, {"values", "indices"},
                  "running minimum along dim and where it was last reached (NaN propagates)", false),
        {"[6] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1"});
  r.add(along_dim("logcumsumexp", {InputSpec{"x"}}, {"y"}, "log of the running sum of exp(x) along dim, overflow-free",
                  true),
        {"[6] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1"});
  r.add(backward_kernel(along_dim("cumprod_backward", {InputSpec{"grad_y"}, InputSpec{"x"}}, {"grad_x"},
                                  "gradient of cumprod, exact where x has zeros", true),
                        Gradient::kFirstOrderOnly),
        {"[6] [6] dim=0", "[3,4,5] [3,4,5] dim=1"});
  r.add(backward_kernel(along_dim("logcumsumexp_backward", {InputSpec{"grad_y"}, InputSpec{"x"}, InputSpec{"y"}},
                                  {"grad_x"}, "gradient of logcumsumexp (y is its output)", true),
                        Gradient::kFirstOrderOnly),
        {"[6] [6] [6] dim=0", "[3,4,5] [3,4,5] [3,4,5] dim=1"});
  OpSchema sort = along_dim("sort", {InputSpec{"x"}}, {"values", "indices"},
                            "stable sort along dim; NaN sorts above every number", false,
                            {attr("descending", AttrType::kBool, false)});
  sort.attrs[0].default_value = int64_t(-1);
  r.add(std::move(sort), {"[7] dim=0", "[3,4,5] dim=1", "[3,4,5] dim=-1 descending=true", "[4,9]{0:3} dim=1",
                          "large:[128,2049] dim=1"});

  const std::vector<InputSpec> x{InputSpec{"x"}};
  r.add(composite(make_schema("topk", x, {"values", "indices"},
                              {attr("k", AttrType::kInt), attr("dim", AttrType::kInt, int64_t(-1)),
                               attr("largest", AttrType::kBool, true), attr("sorted", AttrType::kBool, true)},
                              topk_infer, "the k largest (or smallest) elements along dim, in order, and their positions",
                              DTypePolicy::kPromote),
                  topk_decompose),
        {"[7] k=3", "[3,4,5] k=2 dim=1", "[3,4,5] k=4 dim=-1 largest=false"});
  r.add(composite(make_schema("kthvalue", x, {"values", "indices"},
                              {attr("k", AttrType::kInt), attr("dim", AttrType::kInt, int64_t(-1)),
                               attr("keepdim", AttrType::kBool, false)},
                              kthvalue_infer, "the k-th smallest element along dim (k from 1) and its position",
                              DTypePolicy::kPromote),
                  kthvalue_decompose),
        {"[7] k=3", "[3,4,5] k=2 dim=1", "[3,4,5] k=5 dim=-1 keepdim=true"});
}

}  // namespace oar
