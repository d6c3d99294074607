// CPU softmax / log_softmax and their backward ops along any dim: oneDNN's
// softmax_v2 primitive (accurate or log algorithm) for f32 (and bf16 where the
// CPU has it), above the softmax family of kernel_primitives/ (every float
// dtype, registered in families.cpp). The contiguous
// input is seen as [outer, D, inner] with the softmax over D ([outer, D] when
// inner is 1, oneDNN's fast case), so one primitive serves every tensor with
// the same three extents whatever its rank.
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

struct SoftmaxGeom {
  bool log, backward;
  oar_dtype_t dtype;
  int64_t outer = 1, d = 1, inner = 1;
};

SoftmaxGeom geometry(const sdk::KernelArgs& a, bool log, bool backward) {
  SoftmaxGeom g{log, backward, a.output(0).dtype};
  sdk::AxisExtents e = sdk::axis_extents(a.input(0), a.attr_int("dim"));
  g.outer = e.outer, g.d = e.d, g.inner = e.inner;
  return g;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

CachedPtr lookup(const SoftmaxGeom& g) {
  Key key;
  key.add(g.log).add(g.backward).add(g.dtype).add(g.outer).add(g.d).add(g.inner);
  return cache().get(key, [&](Cached& e) {
    using namespace dnnl;
    Dims dims = g.inner == 1 ? Dims{g.outer, g.d} : Dims{g.outer, g.d, g.inner};
    memory::desc md = dense_md(dims, g.dtype);
    algorithm alg = g.log ? algorithm::softmax_log : algorithm::softmax_accurate;
    softmax_v2_forward::primitive_desc fwd(
        softmax_v2_forward::desc(g.backward ? prop_kind::forward_training : prop_kind::forward_inference, alg, md, md, 1),
        engine());
    if (g.backward)
      e.prim = softmax_v2_backward(softmax_v2_backward::primitive_desc(softmax_v2_backward::desc(alg, md, md, md, 1),
                                                                       engine(), fwd));
    else
      e.prim = softmax_v2_forward(fwd);
    e.mds = {md};
  });
}

template <bool kLog, bool kBackward>
int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    SoftmaxGeom g = geometry(a, kLog, kBackward);
    const std::string& err = lookup(g)->error;
    return err.empty() ? err : std::string("oneDNN softmax (") + sdk::dtype_name(g.dtype) + "): " + err;
  });
}

template <bool kLog, bool kBackward>
oar_status_t dnnl_softmax_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    SoftmaxGeom g = geometry(a, kLog, kBackward);
    const Cached& c = require_ok(lookup(g), a.context().op_name);
    const dnnl::memory::desc& md = c.mds[0];
    DenseOutput out(a, 0);
    if (kBackward)
      execute(c.prim, {{DNNL_ARG_DIFF_DST, make_memory(md, dense_input(a, 0))},
                       {DNNL_ARG_DST, make_memory(md, dense_input(a, 1))},
                       {DNNL_ARG_DIFF_SRC, make_memory(md, out.data())}});
    else
      execute(c.prim, {{DNNL_ARG_SRC, make_memory(md, dense_input(a, 0))}, {DNNL_ARG_DST, make_memory(md, out.data())}});
    out.finish();
  });
}

template <bool kLog, bool kBackward>
oar_status_t register_softmax(const oar_kernel_registrar* r, const char* op) {
  return sdk::register_same_dtype(r, op, kDnnlDTypes, kBackward ? 2 : 1, dnnl_softmax_kernel<kLog, kBackward>,
                                  "onednn", 10, dnnl_supports<kLog, kBackward>);
}

}  // namespace

oar_status_t register_softmax_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_softmax<false, false>(r, "softmax")) return st;
  if (auto st = register_softmax<false, true>(r, "softmax_backward")) return st;
  if (auto st = register_softmax<true, false>(r, "log_softmax")) return st;
  return register_softmax<true, true>(r, "log_softmax_backward");
}

}  // namespace oar_cpu
