// OpenCL kernels for nll_loss, cross_entropy and their backward ops, with the
// CPU plugin's semantics: scores viewed as [N, C, S] (a 1-D input is
// [1, C, 1]), targets as [N, S]; targets are validated (and the non-ignored
// ones counted, for 'mean') by indexing.cpp's scan before any loss kernel
// runs. Per-position math follows the CPU step by step in its accumulate type
// (a max-shifted log-sum-exp with log1p), one work-item per position for few
// classes, one work-group per position (local-memory reductions) for many;
// 'sum' and 'mean' then reduce the per-position losses in one work-group in
// P_acc (double when the device has fp64, as the CPU's double).
#include <algorithm>
#include <string>
#include <vector>

#include "launch.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/index_check.h"
#include "ops/ops.h"

namespace oar_ocl {


namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

constexpr size_t kGroup = 64;     // work-group size of the per-position and reduce kernels
constexpr int64_t kRowsFrom = 64;  // classes from which a position gets a whole work-group

using sdk::LossShape;
using Reduction = sdk::LossReduction;

// X: scores, grads and outputs (one dtype); targets are i32 or i64 (`wide`),
// read with oar_index_at so one program serves both. ACC is the CPU's
// accumulate type (the compute type of a floating dtype); X_acc holds
// per-position losses and their sum (double with fp64).
std::string loss_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + "#pragma OPENCL FP_CONTRACT OFF\n" + kcl::operand_defs("X", dt) +
                  index_at_source() + "typedef X_c ACC;\n#define OAR_GROUP " + std::to_string(kGroup) + "\n";
  s += R"CLC(
#define OAR_NO_ARG LONG_MAX

/* Log-sum-exp of one position, sequentially in class order (the CPU's loop). */
inline void oar_lse_seq(__global const X_t* x, long base, long C, long S, ACC* m_out, ACC* log_s_out) {
  ACC m = -INFINITY;
  long arg = 0;
  for (long c = 0; c < C; ++c) {
    ACC v = X_LOAD(x, base + c * S);
    if (v > m) m = v, arg = c;
  }
  ACC rest = 0;  /* the max term contributes exactly 1: log1p keeps tiny remainders */
  for (long c = 0; c < C; ++c)
    if (c != arg) rest += exp(X_LOAD(x, base + c * S) - m);
  *m_out = m;
  *log_s_out = log1p(rest);
}

/* The same with the work-group sharing the classes; every item gets the result. */
inline void oar_lse_group(__global const X_t* x, long base, long C, long S, __local ACC* lv, __local long* la,
                          ACC* m_out, ACC* log_s_out) {
  int l = get_local_id(0);
  ACC m = -INFINITY;
  long arg = OAR_NO_ARG;
  for (long c = l; c < C; c += OAR_GROUP) {
    ACC v = X_LOAD(x, base + c * S);
    if (v > m) m = v, arg = c;
  }
  lv[l] = m;
  la[l] = arg;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = OAR_GROUP / 2; h > 0; h >>= 1) {
    /* the larger value, the first class on ties (the CPU's strict > in class order) */
    if (l < h && la[l + h] != OAR_NO_ARG &&
        (la[l] == OAR_NO_ARG || lv[l + h] > lv[l] || (lv[l + h] == lv[l] && la[l + h] < la[l])))
      lv[l] = lv[l + h], la[l] = la[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = la[0] == OAR_NO_ARG ? -INFINITY : lv[0];
  arg = la[0] == OAR_NO_ARG ? 0 : la[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  ACC rest = 0;
  for (long c = l; c < C; c += OAR_GROUP)
    if (c != arg) rest += exp(X_LOAD(x, base + c * S) - m);
  lv[l] = rest;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = OAR_GROUP / 2; h > 0; h >>= 1) {
    if (l < h) lv[l] += lv[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *m_out = m;
  *log_s_out = log1p(lv[0]);
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* (1 - eps) * nll + eps / C * sum_c -log_softmax_c, in X_acc as the CPU's double. */
inline X_acc oar_smoothed(ACC nll, ACC smooth, X_acc eps, long C) {
  return ((X_acc)1 - eps) * (X_acc)nll + eps / (X_acc)C * (X_acc)smooth;
}

inline void oar_put_loss(__global X_t* y, long yo, __global X_acc* per, long p, int to_y, X_acc loss) {
  if (to_y) X_STORE(y, yo + p, (X_c)loss);
  else per[p] = loss;
}

/* Per-position loss, one work-item per position: into y ('none') or per[]. */
__kernel void oar_loss_fwd_items(__global const X_t* x, long xo, __global const int* t, long to, int wide,
                                 __global X_t* y, long yo, __global X_acc* per, long N, long C, long S, long ignore,
                                 int fused, const X_acc eps, int to_y) {
  long p = get_global_id(0);
  if (p >= N * S) return;
  long tgt = oar_index_at(t, to + p, wide);
  X_acc loss = 0;
  if (tgt != ignore) {
    long base = xo + (p / S) * C * S + p % S;
    if (!fused) {
      loss = -(X_acc)(ACC)X_LOAD(x, base + tgt * S);
    } else {
      ACC m, log_s;
      oar_lse_seq(x, base, C, S, &m, &log_s);
      ACC nll = (m - X_LOAD(x, base + tgt * S)) + log_s;
      if (eps == 0) {
        loss = nll;
      } else {
        ACC smooth = 0;
        for (long c = 0; c < C; ++c) smooth += (m - X_LOAD(x, base + c * S)) + log_s;
        loss = oar_smoothed(nll, smooth, eps, C);
      }
    }
  }
  oar_put_loss(y, yo, per, p, to_y, loss);
}

/* The same, one work-group per position (cross_entropy with many classes). */
__kernel void oar_loss_fwd_rows(__global const X_t* x, long xo, __global const int* t, long to, int wide,
                                __global X_t* y, long yo, __global X_acc* per, long N, long C, long S, long ignore,
                                int fused, const X_acc eps, int to_y) {
  __local ACC lv[OAR_GROUP];
  __local long la[OAR_GROUP];
  long p = get_group_id(0);
  int l = get_local_id(0);
  if (p >= N * S) return;
  long tgt = oar_index_at(t, to + p, wide);
  long base = xo + (p / S) * C * S + p % S;
  if (tgt == ignore || !fused) {
    if (l == 0) oar_put_loss(y, yo, per, p, to_y, tgt == ignore ? 0 : -(X_acc)(ACC)X_LOAD(x, base + tgt * S));
    return;
  }
  ACC m, log_s;
  oar_lse_group(x, base, C, S, lv, la, &m, &log_s);
  ACC nll = (m - X_LOAD(x, base + tgt * S)) + log_s;
  if (eps == 0) {
    if (l == 0) oar_put_loss(y, yo, per, p, to_y, nll);
    return;
  }
  ACC smooth = 0;
  for (long c = l; c < C; c += OAR_GROUP) smooth += (m - X_LOAD(x, base + c * S)) + log_s;
  lv[l] = smooth;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = OAR_GROUP / 2; h > 0; h >>= 1) {
    if (l < h) lv[l] += lv[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) oar_put_loss(y, yo, per, p, to_y, oar_smoothed(nll, lv[0], eps, C));
}

/* y = sum (or mean over `count`) of per[0, P), by one work-group. */
__kernel void oar_loss_reduce(__global const X_acc* per, long P, __global X_t* y, long yo, int mean, long count) {
  __local X_acc part[OAR_GROUP];
  int l = get_local_id(0);
  X_acc s = 0;
  for (long p = l; p < P; p += OAR_GROUP) s += per[p];
  part[l] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = OAR_GROUP / 2; h > 0; h >>= 1) {
    if (l < h) part[l] += part[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) {
    X_acc v = part[0];
    if (mean) v /= (X_acc)count;  /* 0 / 0 = NaN when every target is ignored */
    X_STORE(y, yo, (X_c)v);
  }
}

/* gp: the position's incoming gradient, scaled by 1 / count for 'mean'. */
inline ACC oar_grad_of(__global const X_t* g, long go, long p, int g_each, X_acc scale) {
  return (ACC)((X_acc)(ACC)X_LOAD(g, go + (g_each ? p : 0)) * scale);
}

/* grad_x = gp * (softmax - (1 - eps) [c == t] - eps / C) (cross_entropy) or
   -gp [c == t] (nll_loss), zero at ignored positions; one work-item per position. */
__kernel void oar_loss_bwd_items(__global const X_t* g, long go, __global const X_t* x, long xo,
                                 __global const int* t, long to, int wide, __global X_t* dx, long dxo, long N, long C,
                                 long S, long ignore, int fused, int g_each, const X_acc scale, const ACC off,
                                 const ACC one_minus_eps) {
  long p = get_global_id(0);
  if (p >= N * S) return;
  long tgt = oar_index_at(t, to + p, wide), rel = (p / S) * C * S + p % S;
  if (tgt == ignore || !fused) {
    for (long c = 0; c < C; ++c) X_STORE(dx, dxo + rel + c * S, (ACC)0);
    if (tgt != ignore) X_STORE(dx, dxo + rel + tgt * S, -oar_grad_of(g, go, p, g_each, scale));
    return;
  }
  ACC gp = oar_grad_of(g, go, p, g_each, scale);
  ACC m, log_s;
  oar_lse_seq(x, xo + rel, C, S, &m, &log_s);
  ACC inv_s = (ACC)1 / exp(log_s), on = one_minus_eps + off;
  for (long c = 0; c < C; ++c) {
    ACC q = c == tgt ? on : off;
    X_STORE(dx, dxo + rel + c * S, gp * (exp(X_LOAD(x, xo + rel + c * S) - m) * inv_s - q));
  }
}

/* The same, one work-group per position. */
__kernel void oar_loss_bwd_rows(__global const X_t* g, long go, __global const X_t* x, long xo,
                                __global const int* t, long to, int wide, __global X_t* dx, long dxo, long N, long C,
                                long S, long ignore, int fused, int g_each, const X_acc scale, const ACC off,
                                const ACC one_minus_eps) {
  __local ACC lv[OAR_GROUP];
  __local long la[OAR_GROUP];
  long p = get_group_id(0);
  int l = get_local_id(0);
  if (p >= N * S) return;
  long tgt = oar_index_at(t, to + p, wide), rel = (p / S) * C * S + p % S;
  if (tgt == ignore || !fused) {
    ACC gt = tgt == ignore ? 0 : -oar_grad_of(g, go, p, g_each, scale);
    for (long c = l; c < C; c += OAR_GROUP) X_STORE(dx, dxo + rel + c * S, c == tgt ? gt : (ACC)0);
    return;
  }
  ACC gp = oar_grad_of(g, go, p, g_each, scale);
  ACC m, log_s;
  oar_lse_group(x, xo + rel, C, S, lv, la, &m, &log_s);
  ACC inv_s = (ACC)1 / exp(log_s), on = one_minus_eps + off;
  for (long c = l; c < C; c += OAR_GROUP) {
    ACC q = c == tgt ? on : off;
    X_STORE(dx, dxo + rel + c * S, gp * (exp(X_LOAD(x, xo + rel + c * S) - m) * inv_s - q));
  }
}
)CLC";
  return s;
}

cl_kernel loss_kernel(OpContext& c, oar_dtype_t dt, const char* name) {
  // The kernel name is part of the key: the program cache maps a key to one kernel.
  return get_kernel(c.dev, "loss:" + std::to_string(dt) + ":" + name, [&] { return loss_source(dt, c.dev.fp64); },
                    name);
}

// A value in the kernels' X_acc type (double when the device has fp64).
Scalar acc_scalar(const OpContext& c, double v) {
  return compute_scalar(c.dev.fp64 ? OAR_DTYPE_F64 : OAR_DTYPE_F32, v);
}

void require_float(oar_dtype_t d) {
  if (!kcl::type_info(d).floating) sdk::fail(OAR_STATUS_UNSUPPORTED, "losses take floating dtypes only");
}

// Validates the targets with the CPU's message; returns the non-ignored count.
int64_t check_targets(OpContext& c, const char* op, const oar_tensor_view& tv, int64_t C, int64_t ignore) {
  if (tv.dtype != OAR_DTYPE_I64 && tv.dtype != OAR_DTYPE_I32)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "targets must be i32 or i64");
  int64_t value = 0, count = 0;
  int64_t p = scan_indices(c, tv, C, &ignore, &value, &count);
  if (p >= 0)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": target " + std::to_string(value) + " at position " +
                                           std::to_string(p) + " is out of range for " + std::to_string(C) +
                                           " classes (valid range [0, " + std::to_string(C) + "), or ignore_index " +
                                           std::to_string(ignore) + ")");
  return count;
}

// Forward of nll_loss, or of cross_entropy when `fused`.
oar_status_t loss_forward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &tv = a.input(1), &yv = a.output(0);
    LossShape sh(xv);
    Reduction red = sdk::loss_reduction(a);
    int64_t ignore = a.attr_int("ignore_index");
    double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    int64_t count = check_targets(c, fused ? "cross_entropy" : "nll_loss", tv, sh.C, ignore);
    require_float(xv.dtype);
    const int64_t P = sh.positions();
    const bool to_y = red == Reduction::kNone;
    const size_t acc_size = c.dev.fp64 ? 8 : 4;
    cl_mem per = to_y ? nullptr : static_cast<cl_mem>(a.workspace(std::max<int64_t>(P, 1) * acc_size));
    const Scalar e = acc_scalar(c, eps);
    if (P > 0) {
      const bool rows = fused && sh.C >= kRowsFrom;
      cl_kernel k = loss_kernel(c, xv.dtype, rows ? "oar_loss_fwd_rows" : "oar_loss_fwd_items");
      Launch l(k);
      l.view(xv).view(tv).scalar<cl_int>(tv.dtype == OAR_DTYPE_I64).view(yv).mem(per);
      l.scalar<cl_long>(sh.N).scalar<cl_long>(sh.C).scalar<cl_long>(sh.S);
      l.scalar<cl_long>(ignore).scalar<cl_int>(fused ? 1 : 0).raw(e.bytes, e.size).scalar<cl_int>(to_y ? 1 : 0);
      if (rows) l.run(c.queue, size_t(P) * kGroup, kGroup);
      else l.run(c.queue, size_t(P), kGroup);
    }
    if (to_y) return;
    cl_kernel k = loss_kernel(c, xv.dtype, "oar_loss_reduce");
    Launch(k)
        .mem(per)
        .scalar<cl_long>(P)
        .view(yv)
        .scalar<cl_int>(red == Reduction::kMean ? 1 : 0)
        .scalar<cl_long>(count)
        .run(c.queue, kGroup, kGroup);
  });
}

// Backward: grad_x from grad_y, the scores and the targets.
oar_status_t loss_backward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &gv = a.input(0), &xv = a.input(1), &tv = a.input(2), &dxv = a.output(0);
    LossShape sh(xv);
    Reduction red = sdk::loss_reduction(a);
    int64_t ignore = a.attr_int("ignore_index");
    double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    int64_t count = check_targets(c, fused ? "cross_entropy_backward" : "nll_loss_backward", tv, sh.C, ignore);
    require_float(xv.dtype);
    const int64_t P = sh.positions();
    if (P == 0 || sh.C == 0) return;
    const Scalar scale = acc_scalar(c, red == Reduction::kMean ? 1.0 / double(count) : 1.0);
    const Scalar off = compute_scalar(xv.dtype, eps / double(sh.C)), keep = compute_scalar(xv.dtype, 1 - eps);
    const bool rows = sh.C >= kRowsFrom;
    cl_kernel k = loss_kernel(c, xv.dtype, rows ? "oar_loss_bwd_rows" : "oar_loss_bwd_items");
    Launch l(k);
    l.view(gv).view(xv).view(tv).scalar<cl_int>(tv.dtype == OAR_DTYPE_I64).view(dxv);
    l.scalar<cl_long>(sh.N).scalar<cl_long>(sh.C).scalar<cl_long>(sh.S);
    l.scalar<cl_long>(ignore).scalar<cl_int>(fused ? 1 : 0).scalar<cl_int>(red == Reduction::kNone ? 1 : 0);
    l.raw(scale.bytes, scale.size).raw(off.bytes, off.size).raw(keep.bytes, keep.size);
    if (rows) l.run(c.queue, size_t(P) * kGroup, kGroup);
    else l.run(c.queue, size_t(P), kGroup);
  });
}

oar_status_t nll_loss_kernel(const oar_kernel_context* ctx) { return loss_forward(ctx, false); }
oar_status_t cross_entropy_kernel(const oar_kernel_context* ctx) { return loss_forward(ctx, true); }
oar_status_t nll_loss_backward_kernel(const oar_kernel_context* ctx) { return loss_backward(ctx, false); }
oar_status_t cross_entropy_backward_kernel(const oar_kernel_context* ctx) { return loss_backward(ctx, true); }

}  // namespace

oar_status_t register_loss_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-opencl";
  for (oar_dtype_t ix : {OAR_DTYPE_I64, OAR_DTYPE_I32})
    for (oar_dtype_t d : sdk::kFloatDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "nll_loss", {d, ix}, nll_loss_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "cross_entropy", {d, ix}, cross_entropy_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "nll_loss_backward", {d, d, ix}, nll_loss_backward_kernel, impl))
        return st;
      if (oar_status_t st =
              sdk::register_kernel(r, "cross_entropy_backward", {d, d, ix}, cross_entropy_backward_kernel, impl))
        return st;
    }
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
