// CPU layer_norm and its backward op: oneDNN's layer normalization primitive
// for f32, above the normalisation family of kernel_primitives/ (every float
// dtype, registered in families.cpp). Layer norm sees x as [M, D] (leading x
// normalized dims). Absent weight / bias become ones / zeros so one primitive
// shape serves both. oneDNN's normalization keeps statistics and scale/shift
// in f32, so only f32 goes to it. Batch norm has its own kernels
// (batch_norm.cpp): oneDNN 2.6's plain-layout one measured slower.
#include <cmath>
#include <cstring>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

enum NormKind : int64_t { kLayerNorm, kLayerNormBackward };

struct NormGeom {
  NormKind kind;
  oar_dtype_t dtype;
  int64_t channels, inner;  // M rows of D
  double eps;
  bool is_backward() const { return kind == kLayerNormBackward; }
};

NormGeom geometry(const sdk::KernelArgs& a, NormKind kind) {
  NormGeom g;
  g.kind = kind;
  g.dtype = a.output(0).dtype;
  g.eps = a.attr_float("eps");
  const oar_tensor_view& x = a.input(g.is_backward() ? 1 : 0);
  sdk::NormExtents e = sdk::norm_extents(x, false, a.attr_int("normalized_ndim"));
  g.channels = e.channels, g.inner = e.inner;
  return g;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

CachedPtr lookup(const NormGeom& g) {
  int64_t eps_bits;
  std::memcpy(&eps_bits, &g.eps, sizeof(eps_bits));
  Key key;
  key.add(g.kind).add(g.dtype).add(g.channels).add(g.inner).add(eps_bits);
  return cache().get(key, [&](Cached& e) {
    using namespace dnnl;
    if (g.dtype != OAR_DTYPE_F32) throw sdk::KernelError{OAR_STATUS_UNSUPPORTED, "only f32 goes to oneDNN"};
    auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
    memory::desc x_md = dense_md({g.channels, g.inner}, g.dtype), stat_md = dense_md({g.channels}, g.dtype);
    layer_normalization_forward::primitive_desc fwd(
        layer_normalization_forward::desc(prop_kind::forward_training, x_md, stat_md, float(g.eps), flags), engine());
    if (g.kind == kLayerNorm) {
      e.prim = layer_normalization_forward(fwd);
    } else {
      layer_normalization_backward::primitive_desc bwd(
          layer_normalization_backward::desc(prop_kind::backward, x_md, x_md, stat_md, float(g.eps), flags), engine(),
          fwd);
      e.prim = layer_normalization_backward(bwd);
    }
    e.mds = {x_md, stat_md, dense_md({g.inner}, g.dtype)};
  });
}

template <NormKind kind>
int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    if (sdk::numel(a.input(kind == kLayerNorm ? 0 : 1)) == 0) return "empty input";
    const std::string& err = lookup(geometry(a, kind))->error;
    return err.empty() ? err : "oneDNN normalization: " + err;
  });
}

// Input i, or a buffer of `n` copies of `fill` when the optional input is absent (i < 0: always).
const void* param_or(const sdk::KernelArgs& a, int i, int64_t n, float fill) {
  if (i >= 0 && a.has_input(i)) return dense_input(a, i);
  float* p = static_cast<float*>(a.workspace(uint64_t(std::max<int64_t>(n, 1)) * sizeof(float)));
  std::fill(p, p + n, fill);
  return p;
}

template <NormKind kind>
oar_status_t dnnl_norm_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    NormGeom g = geometry(a, kind);
    const Cached& c = require_ok(lookup(g), a.context().op_name);
    const dnnl::memory::desc &x_md = c.mds[0], &stat_md = c.mds[1], &param_md = c.mds[2];
    int64_t params = g.inner;
    DenseOutput o0(a, 0), o1(a, 1), o2(a, 2);
    std::unordered_map<int, dnnl::memory> args;
    if (!g.is_backward()) {
      args = {{DNNL_ARG_SRC, make_memory(x_md, dense_input(a, 0))},
              {DNNL_ARG_DST, make_memory(x_md, o0.data())},
              {DNNL_ARG_SCALE, make_memory(param_md, param_or(a, 1, params, 1.0f))},
              {DNNL_ARG_SHIFT, make_memory(param_md, param_or(a, 2, params, 0.0f))},
              {DNNL_ARG_MEAN, make_memory(stat_md, o1.data())},
              {DNNL_ARG_VARIANCE, make_memory(stat_md, o2.data())}};
    } else {
      args = {{DNNL_ARG_DIFF_DST, make_memory(x_md, dense_input(a, 0))},
              {DNNL_ARG_SRC, make_memory(x_md, dense_input(a, 1))},
              {DNNL_ARG_SCALE, make_memory(param_md, param_or(a, 2, params, 1.0f))},
              {DNNL_ARG_SHIFT, make_memory(param_md, param_or(a, -1, params, 0.0f))},  // required, unused
              {DNNL_ARG_MEAN, make_memory(stat_md, dense_input(a, 3))},
              {DNNL_ARG_VARIANCE, make_memory(stat_md, dense_input(a, 4))},
              {DNNL_ARG_DIFF_SRC, make_memory(x_md, o0.data())},
              {DNNL_ARG_DIFF_SCALE, make_memory(param_md, o1.data())},
              {DNNL_ARG_DIFF_SHIFT, make_memory(param_md, o2.data())}};
    }
    execute(c.prim, args);
    o0.finish(), o1.finish(), o2.finish();
  });
}

template <NormKind kind>
oar_status_t register_norm(const oar_kernel_registrar* r, const char* op, int arity) {
  static constexpr oar_dtype_t kDnnlF32[] = {OAR_DTYPE_F32};  // oneDNN's normalisation here is f32 only
  return sdk::register_same_dtype(r, op, kDnnlF32, arity, dnnl_norm_kernel<kind>, "onednn", 10, dnnl_supports<kind>);
}

}  // namespace

oar_status_t register_norm_kernels(const oar_kernel_registrar* r) {
  // Signatures hold the required inputs only (optional ones are not part of the key).
  if (auto st = register_norm<kLayerNorm>(r, "layer_norm", 1)) return st;
  return register_norm<kLayerNormBackward>(r, "layer_norm_backward", 4);
}

}  // namespace oar_cpu
