// Catalog: reductions over any set of axes. `dims` empty means all axes.
// Kernels receive the input strided and the output already shaped with the
// reduced axes kept (size 1) or dropped, per `keepdim`.
#include <set>

#include "catalog_util.h"

namespace oar {

using namespace catalog;

namespace {

std::vector<int64_t> reduced_axes(const InferContext& c) {
  const auto& dims = c.attrs.get_ints("dims");
  std::set<int64_t> axes;
  for (int64_t d : dims) {
    int64_t a = normalize_axis(d, c.ndim(0));
    if (!axes.insert(a).second)
      throw ValueError(str("op '", c.schema.name, "': dimension ", a, " appears twice in dims"));
  }
  if (dims.empty())
    for (int64_t i = 0; i < c.ndim(0); ++i) axes.insert(i);
  return {axes.begin(), axes.end()};
}

Shape reduced_shape(const InferContext& c) {
  auto axes = reduced_axes(c);
  bool keep = c.attrs.get_bool("keepdim");
  Shape out;
  for (int64_t i = 0; i < c.ndim(0); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced) out.push_back(c.shape(0)[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

void require_nonempty_reduction(const InferContext& c) {
  auto axes = reduced_axes(c);
  for (int64_t a : axes)
    if (c.ndim(0) > 0 && c.shape(0)[a] == 0)
      throw ValueError(str("op '", c.schema.name, "': cannot reduce over an empty dimension ", a,
                           " (no identity)"));
}

OpSchema reduction(const std::string& name, std::string doc, InferFn infer,
                   std::vector<AttrSpec> extra = {}) {
  OpSchema s;
  s.name = name;
  s.inputs = {InputSpec{"x"}};
  s.outputs = {"y"};
  s.attrs = {attr("dims", AttrType::kInts, std::vector<int64_t>{}),
             attr("keepdim", AttrType::kBool, false)};
  for (auto& a : extra) s.attrs.push_back(std::move(a));
  s.infer = std::move(infer);
  s.strided_inputs = true;
  s.doc = std::move(doc);
  return s;
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  r.add(reduction("sum", "sum; integer and bool inputs give i64", [](const InferContext& c) {
    DType d = is_floating(c.dtype(0)) ? c.dtype(0) : DType::i64;
    return std::vector<TensorMeta>{{reduced_shape(c), d}};
  }), {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true", "[3,4,5] dims=[-1] keepdim=true", "large:[1031,1029] dims=[1]"});
  r.add(reduction("prod", "product; integer and bool inputs give i64", [](const InferContext& c) {
    DType d = is_floating(c.dtype(0)) ? c.dtype(0) : DType::i64;
    return std::vector<TensorMeta>{{reduced_shape(c), d}};
  }), {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true", "[3,4,5] dims=[-1] keepdim=true", "large:[1031,1029] dims=[1]"});
  r.add(reduction("mean", "arithmetic mean (floating inputs only)", [](const InferContext& c) {
    require_floating(c, 0);
    return std::vector<TensorMeta>{{reduced_shape(c), c.dtype(0)}};
  }), {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true", "[3,4,5] dims=[-1] keepdim=true", "large:[1031,1029] dims=[1]"});
  r.add(reduction("var", "variance with Bessel's correction `correction` (floating only)",
                  [](const InferContext& c) {
                    require_floating(c, 0);
                    if (c.attrs.get_int("correction") < 0)
                      throw ValueError("var: correction must be >= 0");
                    return std::vector<TensorMeta>{{reduced_shape(c), c.dtype(0)}};
                  },
                  {attr("correction", AttrType::kInt, int64_t(1))}),
        {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true correction=0", "large:[1031,1029] dims=[1]"});
  for (const char* n : {"max", "min"})
    r.add(reduction(n, std::string(n) + " (NaN propagates)", [](const InferContext& c) {
      require_nonempty_reduction(c);
      return std::vector<TensorMeta>{{reduced_shape(c), c.dtype(0)}};
    }), {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[0,2] keepdim=true", "[3,4,5] dims=[-1] keepdim=true", "large:[1031,1029] dims=[1]"});
  for (const char* n : {"argmax", "argmin"})
    r.add(no_gradient(reduction(n, std::string("index of the ") + (n[3] == 'm' && n[4] == 'a' ? "max" : "min") +
                           " along one dim, or of the flattened tensor when dims is empty; i64",
                    [](const InferContext& c) {
                      if (c.attrs.get_ints("dims").size() > 1)
                        throw ValueError(str("op '", c.schema.name, "' reduces one dim at a time"));
                      if (c.dtype(0) == DType::boolean)
                        throw DTypeError(str("op '", c.schema.name, "' does not accept bool"));
                      require_nonempty_reduction(c);
                      return std::vector<TensorMeta>{{reduced_shape(c), DType::i64}};
                    })), {"*", "[3,4,5] dims=[1]", "[3,4,5] dims=[-1] keepdim=true", "[3,4,5] dims=[0]", "large:[1031,1029] dims=[1]"});
}

}  // namespace oar
