// Catalog: reduction composites (std, var_mean, std_mean, all, any,
// count_nonzero, vector_norm, aminmax, nansum, nanmean), written with the
// sum/mean/var/max/min reductions and elementwise ops. PyTorch's semantics;
// see composites.h.
#include <cmath>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

Attrs over(const std::vector<int64_t>& dims, bool keepdim) { return {{"dims", dims}, {"keepdim", keepdim}}; }

Shape out_shape(const InferContext& c) {
  return reduced(c.shape(0), c.attrs.get_ints("dims"), c.attrs.get_bool("keepdim")).second;
}

void require_floating_input(const InferContext& c) {
  if (!is_floating(c.dtype(0)))
    throw DTypeError(str(c.schema.name, ": input dtype should be floating point, got ", dtype_name(c.dtype(0))));
}

// ---- std, var_mean, std_mean ----

void require_correction(const InferContext& c) {
  require_floating_input(c);
  if (c.attrs.get_int("correction") < 0) throw ValueError(str(c.schema.name, ": correction must be >= 0"));
}

Tensor variance(const Tensor& x, const Attrs& a) {
  return call1("var", {x}, {{"dims", a.get_ints("dims")}, {"keepdim", a.get_bool("keepdim")},
                            {"correction", a.get_int("correction")}});
}

// ---- all, any, count_nonzero ----

// Entries equal to 0 (for all) or not (any, count_nonzero), counted over dims.
Tensor count(const Tensor& x, const char* cmp, const Attrs& a) {
  return op1("sum", op2(cmp, x, scalar_like(0, x)), over(a.get_ints("dims"), a.get_bool("keepdim")));
}

// bool, or uint8 for a uint8 input (as PyTorch).
DType truth_dtype(DType in) { return in == DType::u8 ? DType::u8 : DType::boolean; }

std::vector<Tensor> all_any(const std::vector<Tensor>& in, const Attrs& a, bool all) {
  const Tensor hits = count(in[0], all ? "eq" : "ne", a);
  Tensor y = all ? op2("eq", hits, scalar_like(0, hits)) : op2("gt", hits, scalar_like(0, hits));
  return {in[0].dtype() == DType::u8 ? y.to(DType::u8) : y};
}

// ---- vector_norm ----

// s ** (1/p), with a zero gradient (not NaN) where s is 0, as PyTorch's norms.
Tensor root(const Tensor& s, double p) {
  Tensor zero = op2("eq", s, scalar_like(0, s));
  Tensor safe = call1("where", {zero, scalar_like(1, s), s});
  Tensor r = p == 2 ? op1("sqrt", safe) : op2("pow", safe, scalar_like(1.0 / p, s));
  return call1("where", {zero, scalar_like(0, s), r});
}

std::vector<Tensor> vector_norm_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor& x = in[0];
  const double p = a.get_float("ord");
  const Attrs o = over(a.get_ints("dims"), a.get_bool("keepdim"));
  if (x.numel() == 0 && (std::isinf(p) || p < 0))
    throw ValueError(str("vector_norm: the norm of order ", p, " of an empty tensor is not defined"));
  if (p == 0) return {op1("sum", op2("ne", x, scalar_like(0, x)).to(x.dtype()), o)};
  const Tensor m = op1("abs", x);
  if (std::isinf(p)) return {op1(p > 0 ? "max" : "min", m, o)};
  if (p == 1) return {op1("sum", m, o)};
  if (p == 2) return {root(op1("sum", op2("mul", x, x), o), 2)};
  if (p < 0) return {op2("pow", op1("sum", op2("pow", m, scalar_like(p, m)), o), scalar_like(1.0 / p, m))};
  return {root(op1("sum", op2("pow", m, scalar_like(p, m)), o), p)};
}

// ---- aminmax, nansum, nanmean ----

std::vector<TensorMeta> aminmax_infer(const InferContext& c) {
  const auto& dims = c.attrs.get_ints("dims");
  if (dims.size() > 1) throw ValueError(str("aminmax: reduces one dim or all of them, got dims of length ", dims.size()));
  if (c.inputs[0].numel() == 0 && dims.empty())
    throw ValueError("aminmax: cannot compute aminmax over an empty tensor without a dim");
  const Shape out = out_shape(c);
  if (!dims.empty() && c.ndim(0) > 0 && c.shape(0)[size_t(normalize_axis(dims[0], c.ndim(0)))] == 0)
    throw ValueError(str("aminmax: cannot reduce over the empty dimension ", dims[0]));
  return {{out, c.dtype(0)}, {out, c.dtype(0)}};
}

Tensor without_nan(const Tensor& x) {
  return is_floating(x.dtype()) ? call1("where", {op2("ne", x, x), scalar_like(0, x), x}) : x;
}

OpSchema reduction(const std::string& name, std::vector<std::string> outputs, std::vector<AttrSpec> extra,
                   InferFn infer, std::string doc) {
  std::vector<AttrSpec> attrs{attr("dims", AttrType::kInts, std::vector<int64_t>{}),
                              attr("keepdim", AttrType::kBool, false)};
  for (auto& e : extra) attrs.push_back(std::move(e));
  return make_schema(name, {InputSpec{"x"}}, std::move(outputs), std::move(attrs), std::move(infer), std::move(doc),
                     DTypePolicy::kNone);
}

}  // namespace

void register_reduce_composites(OpRegistry& r) {
  const AttrSpec correction = attr("correction", AttrType::kInt, int64_t(1));
  const std::vector<std::string> y{"y"};
  r.add(composite(reduction("std", y, {correction},
                            [](const InferContext& c) {
                              require_correction(c);
                              return std::vector<TensorMeta>{{out_shape(c), c.dtype(0)}};
                            },
                            "standard deviation over dims (all when empty) with Bessel's correction `correction`"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{op1("sqrt", variance(in[0], a))};
                  }),
        {"[3,4,5] dims=[1]", "[6]", "[3,4] dims=[0,1] keepdim=true correction=0"});
  for (const bool root_of_var : {false, true}) {
    const std::string name = root_of_var ? "std_mean" : "var_mean";
    r.add(composite(reduction(name, {root_of_var ? "std" : "var", "mean"}, {correction},
                              [](const InferContext& c) {
                                require_correction(c);
                                const Shape out = out_shape(c);
                                return std::vector<TensorMeta>{{out, c.dtype(0)}, {out, c.dtype(0)}};
                              },
                              str(root_of_var ? "(std, mean)" : "(var, mean)",
                                  " over dims (all when empty), with Bessel's correction `correction`")),
                    [root_of_var](const std::vector<Tensor>& in, const Attrs& a) {
                      const Tensor v = variance(in[0], a);
                      return std::vector<Tensor>{root_of_var ? op1("sqrt", v) : v,
                                                 op1("mean", in[0], over(a.get_ints("dims"), a.get_bool("keepdim")))};
                    }),
          {"[3,4,5] dims=[1]", "[6] correction=0", "[3,4] dims=[-1] keepdim=true"});
  }
  for (const bool all : {true, false})
    r.add(no_gradient(composite(
              reduction(all ? "all" : "any", y, {},
                        [](const InferContext& c) {
                          return std::vector<TensorMeta>{{out_shape(c), truth_dtype(c.dtype(0))}};
                        },
                        all ? "whether every entry over dims (all when empty) is nonzero; bool (uint8 for uint8)"
                            : "whether any entry over dims (all when empty) is nonzero; bool (uint8 for uint8)"),
              [all](const std::vector<Tensor>& in, const Attrs& a) { return all_any(in, a, all); })),
          {"[3,4]{0:2}", "[3,4,5]{0:2} dims=[1]", "[3,4]{0:2} dims=[0] keepdim=true", "[0,3] dims=[0]"});
  r.add(no_gradient(composite(
            make_schema("count_nonzero", {InputSpec{"x"}}, y, {attr("dims", AttrType::kInts, std::vector<int64_t>{})},
                        [](const InferContext& c) {
                          return std::vector<TensorMeta>{
                              {reduced(c.shape(0), c.attrs.get_ints("dims"), false).second, DType::i64}};
                        },
                        "the number of nonzero entries over dims (all when empty); i64", DTypePolicy::kNone),
            [](const std::vector<Tensor>& in, const Attrs& a) {
              return std::vector<Tensor>{count(in[0], "ne", {{"dims", a.get_ints("dims")}, {"keepdim", false}})};
            })),
        {"[3,4]{-1:2}", "[3,4,5]{-1:2} dims=[0,2]"});
  r.add(composite(reduction("vector_norm", y, {attr("ord", AttrType::kFloat, 2.0)},
                            [](const InferContext& c) {
                              require_floating_input(c);
                              const double p = c.attrs.get_float("ord");
                              if (std::isnan(p)) throw ValueError("vector_norm: ord must be a number, got nan");
                              return std::vector<TensorMeta>{{out_shape(c), c.dtype(0)}};
                            },
                            "(sum |x|^ord)^(1/ord) over dims (all when empty); ord inf/-inf: max/min |x|, 0: the "
                            "number of nonzeros; the gradient is 0 where the norm is 0"),
                  vector_norm_decompose),
        {"[3,4]", "[3,4,5] dims=[1] ord=1", "[3,4] dims=[0] ord=inf keepdim=true", "[3,4] ord=-inf", "[5] ord=3",
         "[3,4]{0.5:2} dims=[1] ord=-1.5", "[4,3] ord=0"});
  r.add(composite(reduction("aminmax", {"min", "max"}, {}, aminmax_infer,
                            "(min, max) over one dim or all (dims empty); NaN propagates"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    const Attrs o = over(a.get_ints("dims"), a.get_bool("keepdim"));
                    return std::vector<Tensor>{op1("min", in[0], o), op1("max", in[0], o)};
                  }),
        {"[3,4]", "[3,4,5] dims=[1]", "[3,4] dims=[-1] keepdim=true"});
  r.add(composite(reduction("nansum", y, {},
                            [](const InferContext& c) {
                              return std::vector<TensorMeta>{
                                  {out_shape(c), is_floating(c.dtype(0)) ? c.dtype(0) : DType::i64}};
                            },
                            "sum over dims (all when empty) treating NaN as 0; integer and bool inputs give i64"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    return std::vector<Tensor>{
                        op1("sum", without_nan(in[0]), over(a.get_ints("dims"), a.get_bool("keepdim")))};
                  }),
        {"[3,4]", "[3,4,5] dims=[1] keepdim=true"});
  r.add(composite(reduction("nanmean", y, {},
                            [](const InferContext& c) {
                              require_floating_input(c);
                              return std::vector<TensorMeta>{{out_shape(c), c.dtype(0)}};
                            },
                            "mean over dims (all when empty) of the entries that are not NaN (NaN where all are)"),
                  [](const std::vector<Tensor>& in, const Attrs& a) {
                    const Tensor& x = in[0];
                    const Attrs o = over(a.get_ints("dims"), a.get_bool("keepdim"));
                    const Tensor n = op1("sum", op2("eq", x, x).to(x.dtype()), o);
                    return std::vector<Tensor>{op2("div", op1("sum", without_nan(x), o), n)};
                  }),
        {"[3,4]", "[3,4,5] dims=[0,2]"});
}

}  // namespace oar
