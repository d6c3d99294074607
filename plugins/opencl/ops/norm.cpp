// OpenCL batch_norm / layer_norm and their backward ops, with the CPU
// plugin's semantics (its reference loops): two-pass statistics with the
// biased variance, absent weight / bias as ones / zeros, inference batch norm
// using and returning the running statistics. Both ops are written over
// (outer, channels, inner), element (o, c, i) at (o * C + c) * S + i: batch
// norm normalizes each channel over (o, i) with per-channel parameters
// (x [N, C, ...] is N, C, S), layer norm (outer 1) each row over i with
// per-position parameters. One work-group per channel / row reduces in local
// memory, accumulating in double where the device has fp64 (no barrier sits
// in a branch on an argument: PoCL 3.1 miscompiles those, so inference batch
// norm is a kernel of its own, elementwise). Layer norm's
// parameter gradients are sums over rows; a separate kernel gathers them, a
// 16-column tile of work-items per group so neighbouring items read
// neighbouring elements.
#include "launch.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "oar/kp/opencl/nn.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

enum NormKind { kBatchNorm, kBatchNormBackward, kLayerNorm, kLayerNormBackward };

struct NormGeom {
  int64_t outer, channels, inner;  // batch norm: N, C, S; layer norm: 1, M, D
  bool batch, backward, training = true;
  double eps;
};

NormGeom geometry(const sdk::KernelArgs& a, NormKind kind) {
  NormGeom g;
  g.batch = kind == kBatchNorm || kind == kBatchNormBackward;
  g.backward = kind == kBatchNormBackward || kind == kLayerNormBackward;
  g.eps = a.attr_float("eps");
  const oar_tensor_view& x = a.input(g.backward ? 1 : 0);
  sdk::NormExtents e = sdk::norm_extents(x, g.batch, g.batch ? 0 : a.attr_int("normalized_ndim"));
  g.outer = e.outer, g.channels = e.channels, g.inner = e.inner;
  if (kind == kBatchNorm) g.training = a.attr_bool("training");
  return g;
}

// Column tile of the parameter-gradient kernel: kCols columns x kRows row lanes.
constexpr int kCols = 16, kRows = 8;

std::string norm_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + kcl::operand_defs("T", dt) + kcl::group_reduce_source("T_acc");
  s += "#define TILE_C " + std::to_string(kCols) + "\n#define TILE_R " + std::to_string(kRows) + "\n";
  s += R"CLC(
#define LD(p, i) ((T_acc)T_LOAD(p, p##_off + (i)))
/* Element k (of the group's O * S) of group g. */
inline long norm_at(long g, long k, long C, long S) { return (k / S * C + g) * S + k % S; }

/* Statistics from x (training batch norm, layer norm). */
__kernel void oar_norm_fwd(__global T_t* y, long y_off, __global T_t* mo, long mo_off, __global T_t* vo, long vo_off,
                           __global const T_t* x, long x_off, __global const T_t* w, long w_off,
                           __global const T_t* b, long b_off, long O, long C, long S, int batch, int has_w,
                           int has_b, T_acc eps) {
  __local T_acc sc[OAR_G];
  const long g = get_group_id(0), l = get_local_id(0), n = O * S;
  T_acc t = 0;
  for (long k = l; k < n; k += OAR_G) t += LD(x, norm_at(g, k, C, S));
  const T_acc mean = oar_wg_sum(t, sc) / (T_acc)n;
  t = 0;
  for (long k = l; k < n; k += OAR_G) {
    const T_acc d = LD(x, norm_at(g, k, C, S)) - mean;
    t += d * d;
  }
  const T_acc var = oar_wg_sum(t, sc) / (T_acc)n;
  const T_acc invstd = (T_acc)1 / sqrt(var + eps);
  for (long k = l; k < n; k += OAR_G) {
    const long at = norm_at(g, k, C, S), p = batch ? g : k % S;
    const T_acc wp = has_w ? LD(w, p) : (T_acc)1, bp = has_b ? LD(b, p) : (T_acc)0;
    T_STORE(y, y_off + at, (LD(x, at) - mean) * invstd * wp + bp);
  }
  if (l == 0) {
    T_STORE(mo, mo_off + g, mean);
    T_STORE(vo, vo_off + g, var);
  }
}

/* Inference batch norm: the running statistics, returned as they are; a
   work-item per element (and per channel for the returned statistics). */
__kernel void oar_norm_fwd_running(__global T_t* y, long y_off, __global T_t* mo, long mo_off, __global T_t* vo,
                                   long vo_off, __global const T_t* x, long x_off, __global const T_t* w, long w_off,
                                   __global const T_t* b, long b_off, __global const T_t* rm, long rm_off,
                                   __global const T_t* rv, long rv_off, long total, long C, long S, int has_w,
                                   int has_b, T_acc eps) {
  const long k = get_global_id(0);
  if (k < C) {
    T_STORE(mo, mo_off + k, LD(rm, k));
    T_STORE(vo, vo_off + k, LD(rv, k));
  }
  if (k >= total) return;
  const long c = k / S % C;
  const T_acc invstd = (T_acc)1 / sqrt(LD(rv, c) + eps);
  const T_acc wp = has_w ? LD(w, c) : (T_acc)1, bp = has_b ? LD(b, c) : (T_acc)0;
  T_STORE(y, y_off + k, (LD(x, k) - LD(rm, c)) * invstd * wp + bp);
}

/* grad_x = invstd / n * (n * gk - sum(gk) - xhat * sum(gk * xhat)), gk = grad_y * weight.
   Batch norm's weight is the group's, so the sums are taken of grad_y and scaled,
   and they are its parameter gradients too. */
__kernel void oar_norm_bwd(__global T_t* gx, long gx_off, __global T_t* gw, long gw_off, __global T_t* gb,
                           long gb_off, __global const T_t* gy, long gy_off, __global const T_t* x, long x_off,
                           __global const T_t* w, long w_off, __global const T_t* mean, long mean_off,
                           __global const T_t* var, long var_off, long O, long C, long S, int batch, int has_w,
                           T_acc eps) {
  __local T_acc sc[2 * OAR_G];
  const long g = get_group_id(0), l = get_local_id(0), n = O * S;
  const T_acc m = LD(mean, g), is = (T_acc)1 / sqrt(LD(var, g) + eps);
  const int row_w = has_w && !batch;
  T_acc u = 0, v = 0;
  for (long k = l; k < n; k += OAR_G) {
    const long at = norm_at(g, k, C, S);
    const T_acc gk = LD(gy, at) * (row_w ? LD(w, k % S) : (T_acc)1);
    u += gk;
    v += gk * (LD(x, at) - m) * is;
  }
  oar_wg_sum2(&u, &v, sc);
  const T_acc wc = batch && has_w ? LD(w, g) : (T_acc)1, s1 = wc * u, s2 = wc * v, nn = (T_acc)n;
  if (batch && l == 0) {
    T_STORE(gw, gw_off + g, v);
    T_STORE(gb, gb_off + g, u);
  }
  for (long k = l; k < n; k += OAR_G) {
    const long at = norm_at(g, k, C, S);
    const T_acc gk = LD(gy, at) * (row_w ? LD(w, k % S) : wc);
    T_STORE(gx, gx_off + at, is / nn * (nn * gk - s1 - (LD(x, at) - m) * is * s2));
  }
}

/* Layer norm's parameter gradients: column p sums grad_y * xhat and grad_y over
   the M rows; TILE_R row lanes per column, combined in local memory. */
__kernel void oar_norm_param_bwd(__global T_t* gw, long gw_off, __global T_t* gb, long gb_off,
                                 __global const T_t* gy, long gy_off, __global const T_t* x, long x_off,
                                 __global const T_t* mean, long mean_off, __global const T_t* var, long var_off,
                                 long M, long D, T_acc eps) {
  __local T_acc su[TILE_R][TILE_C], sv[TILE_R][TILE_C];
  const int lc = get_local_id(0), lr = get_local_id(1);
  const long p = get_global_id(0);
  T_acc u = 0, v = 0;
  if (p < D)
    for (long r = lr; r < M; r += TILE_R) {
      const long at = r * D + p;
      const T_acc gv = LD(gy, at);
      u += gv;
      v += gv * (LD(x, at) - LD(mean, r)) * ((T_acc)1 / sqrt(LD(var, r) + eps));
    }
  su[lr][lc] = u;
  sv[lr][lc] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = TILE_R / 2; k > 0; k >>= 1) {
    if (lr < k) {
      su[lr][lc] += su[lr + k][lc];
      sv[lr][lc] += sv[lr + k][lc];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lr == 0 && p < D) {
    T_STORE(gw, gw_off + p, sv[0][lc]);
    T_STORE(gb, gb_off + p, su[0][lc]);
  }
}
)CLC";
  return s;
}

template <NormKind kind>
oar_status_t norm_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    NormGeom g = geometry(a, kind);
    for (int i = 0; i < 3; ++i)
      if (!kcl::is_dense(a.output(i)))
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(a.context().op_name) + ": OpenCL kernel expects dense outputs");
    for (int i = 0; i < a.num_inputs(); ++i)
      if (a.has_input(i) && !kcl::is_dense(a.input(i)))
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(a.context().op_name) + ": OpenCL kernel expects dense inputs");
    OpContext c = op_context(a);
    const oar_dtype_t dt = a.output(0).dtype;
    auto kernel = [&](const char* name) {
      // The cache keys kernels, not programs: the key names the kernel too.
      return get_kernel(c.dev, "nn/norm:" + std::to_string(dt) + ":" + name,
                        [&] { return norm_source(dt, c.dev.fp64); }, name);
    };
    // Absent optional inputs are passed as x's buffer, flagged unused.
    const oar_tensor_view& x = a.input(g.backward ? 1 : 0);
    auto opt = [&](int i) -> const oar_tensor_view& { return a.has_input(i) ? a.input(i) : x; };
    auto eps = [&](Launch& l) {
      if (c.dev.fp64) l.scalar<cl_double>(g.eps);
      else l.scalar<cl_float>(cl_float(g.eps));
    };
    const size_t groups = size_t(g.channels) * kcl::kNNGroup;
    const cl_long O = g.outer, C = g.channels, S = g.inner;
    if (!g.backward && g.batch && !g.training) {
      const int64_t total = sdk::numel(x);
      Launch l(kernel("oar_norm_fwd_running"));
      l.view(a.output(0)).view(a.output(1)).view(a.output(2)).view(x).view(opt(1)).view(opt(2));
      l.view(a.input(3)).view(a.input(4));
      l.scalar<cl_long>(total).scalar<cl_long>(C).scalar<cl_long>(S);
      l.scalar<cl_int>(a.has_input(1)).scalar<cl_int>(a.has_input(2));
      eps(l);
      l.run(c.queue, size_t(std::max(total, g.channels)));
      return;
    }
    if (!g.backward) {
      Launch l(kernel("oar_norm_fwd"));
      l.view(a.output(0)).view(a.output(1)).view(a.output(2)).view(x).view(opt(1)).view(opt(2));
      l.scalar<cl_long>(O).scalar<cl_long>(C).scalar<cl_long>(S).scalar<cl_int>(g.batch);
      l.scalar<cl_int>(a.has_input(1)).scalar<cl_int>(a.has_input(2));
      eps(l);
      l.run(c.queue, groups, kcl::kNNGroup);
      return;
    }
    {
      Launch l(kernel("oar_norm_bwd"));
      l.view(a.output(0)).view(a.output(1)).view(a.output(2)).view(a.input(0)).view(x).view(opt(2));
      l.view(a.input(3)).view(a.input(4));
      l.scalar<cl_long>(O).scalar<cl_long>(C).scalar<cl_long>(S).scalar<cl_int>(g.batch);
      l.scalar<cl_int>(a.has_input(2));
      eps(l);
      l.run(c.queue, groups, kcl::kNNGroup);
    }
    if (!g.batch) {
      Launch l(kernel("oar_norm_param_bwd"));
      l.view(a.output(1)).view(a.output(2)).view(a.input(0)).view(x).view(a.input(3)).view(a.input(4));
      l.scalar<cl_long>(C).scalar<cl_long>(S);
      eps(l);
      l.run2d(c.queue, size_t(S), kRows, kCols, kRows);
    }
  });
}

template <NormKind kind>
oar_status_t register_norm(const oar_kernel_registrar* r, const char* op, int arity) {
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    std::vector<oar_dtype_t> sig(size_t(arity), d);
    oar_kernel_def def{};
    def.struct_size = sizeof(def);
    def.op_name = op;
    def.dtypes = sig.data();
    def.num_dtypes = arity;
    def.impl_name = "opencl";
    def.fn = norm_kernel<kind>;
    if (oar_status_t st = r->register_kernel(r->registry, &def)) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_norm_kernels(const oar_kernel_registrar* r) {
  // Signatures hold the required inputs only (optional ones are not part of the key).
  if (auto st = register_norm<kBatchNorm>(r, "batch_norm", 1)) return st;
  if (auto st = register_norm<kBatchNormBackward>(r, "batch_norm_backward", 4)) return st;
  if (auto st = register_norm<kLayerNorm>(r, "layer_norm", 1)) return st;
  return register_norm<kLayerNormBackward>(r, "layer_norm_backward", 4);
}

}  // namespace oar_ocl
