// Catalog: fused scaled-dot-product attention, softmax(scale q k^T + mask) v,
// and its backward kernel. Memory-efficient: the kernels (kernel_primitives'
// attention family) keep one log-sum-exp per query row (output `lse`) instead
// of the [L, S] scores. The frontends broadcast batch dims and turn bool masks
// into additive ones before calling (oar.nn.functional.scaled_dot_product_attention).
#include "catalog_util.h"

namespace oar {

using namespace catalog;

namespace {

// q [..., L, E], k [..., S, E], v [..., S, F] with equal batch dims; mask [..., L, S] or absent.
void check_qkv(const InferContext& c, size_t q, size_t mask) {
  const char* fn = "scaled_dot_product_attention";
  for (size_t i = q; i < q + 3; ++i) {
    if (c.ndim(i) < 2)
      throw ShapeError(str(fn, ": '", c.schema.inputs[i].name, "' must have at least 2 dims, got ",
                           shape_str(c.shape(i))));
    if (c.dtype(i) != DType::f32 && c.dtype(i) != DType::f64)
      throw DTypeError(str(fn, " (fused kernel): '", c.schema.inputs[i].name, "' must be float32 or float64, got ",
                           dtype_name(c.dtype(i))));
    if (c.dtype(i) != c.dtype(q))
      throw DTypeError(str(fn, ": query, key and value must have one dtype, got ", dtype_name(c.dtype(q)), " and ",
                           dtype_name(c.dtype(i))));
  }
  const Shape &sq = c.shape(q), &sk = c.shape(q + 1), &sv = c.shape(q + 2);
  const Shape batch(sq.begin(), sq.end() - 2);
  if (Shape(sk.begin(), sk.end() - 2) != batch || Shape(sv.begin(), sv.end() - 2) != batch ||
      sk.back() != sq.back() || sv[sv.size() - 2] != sk[sk.size() - 2])
    throw ShapeError(str(fn, ": query ", shape_str(sq), ", key ", shape_str(sk), " and value ", shape_str(sv),
                         " do not fit ([..., L, E], [..., S, E], [..., S, F] with one batch shape)"));
  if (c.input(mask).defined()) {
    Shape want = batch;
    want.push_back(sq[sq.size() - 2]);
    want.push_back(sk[sk.size() - 2]);
    if (c.shape(mask) != want)
      throw ShapeError(str(fn, ": attn_mask has shape ", shape_str(c.shape(mask)), ", expected ", shape_str(want),
                           " (expanded by the caller)"));
    if (c.dtype(mask) != c.dtype(q))
      throw DTypeError(str(fn, ": the additive attn_mask must have the query's dtype ", dtype_name(c.dtype(q)),
                           ", got ", dtype_name(c.dtype(mask))));
  }
}

std::vector<AttrSpec> attention_attrs() {
  return {attr("causal", AttrType::kBool, false), attr("scale", AttrType::kFloat)};
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  r.add(make_schema("attention_fused", {InputSpec{"query"}, InputSpec{"key"}, InputSpec{"value"},
                                        optional_input("attn_mask")},
                    {"out", "lse"}, attention_attrs(),
                    [](const InferContext& c) -> std::vector<TensorMeta> {
                      check_qkv(c, 0, 3);
                      Shape out = c.shape(0);
                      out.back() = c.shape(2).back();
                      Shape lse(c.shape(0).begin(), c.shape(0).end() - 1);
                      return {{out, c.dtype(0)}, {lse, c.dtype(0)}};
                    },
                    "softmax(scale * query key^T + attn_mask) value, causal: key j seen by query i when j <= i; lse "
                    "= log-sum-exp of each query row's scores. No [L, S] matrix is stored (but for the gradient "
                    "of an attn_mask that requires one)",
                    DTypePolicy::kNone),
        {"[2,5,4] [2,6,4] [2,6,3] - scale=0.5", "[4,3] [4,3] [4,2] - causal=true scale=0.7",
         "[2,3,4] [2,5,4] [2,5,4] [2,3,5] scale=1.0"});
  r.add(backward_kernel(
            make_schema("attention_fused_backward",
                        {InputSpec{"grad_out"}, InputSpec{"query"}, InputSpec{"key"}, InputSpec{"value"},
                         optional_input("attn_mask"), InputSpec{"out"}, InputSpec{"lse"}, optional_input("grad_lse")},
                        {"grad_query", "grad_key", "grad_value"}, attention_attrs(),
                        [](const InferContext& c) -> std::vector<TensorMeta> {
                          check_qkv(c, 1, 4);
                          return {{c.shape(1), c.dtype(1)}, {c.shape(2), c.dtype(2)}, {c.shape(3), c.dtype(3)}};
                        },
                        "gradients of attention_fused, recomputing each probability from lse",
                        DTypePolicy::kNone),
            Gradient::kFirstOrderOnly),
        {"[2,5,3] [2,5,4] [2,6,4] [2,6,3] - [2,5,3] [2,5] - scale=0.5"});
}

}  // namespace oar
