// CUDA/HIP kernels for nll_loss, cross_entropy and their backward ops, with
// the CPU plugin's semantics: scores viewed as [N, C, S] (a 1-D input is
// [1, C, 1], sdk::LossShape), targets as [N, S]. Targets are validated (and
// the non-ignored ones counted, for 'mean') by the device scan of
// index_check.h before any loss kernel runs. Per-position math follows the
// CPU in its accumulate type (float for f16/bf16/f32, double for f64): a
// max-shifted log-sum-exp with log1p, so large logits stay finite. A position
// gets one thread when there are few classes and one block (block_reduce of
// kp/gpu/reduce.cuh) when there are many. 'sum' and 'mean' reduce the
// per-position losses in double with the reduction primitive, as the CPU
// sums in double (in another order, so the last bits may differ).
#include <cmath>
#include <string>

#include "launch.h"
#include "oar/kp/gpu/reduce.cuh"
#include "oar/kp/reducers.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/index_check.h"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

using sdk::LossShape;
using Reduction = sdk::LossReduction;

constexpr int kRowThreads = 128;   // threads of a per-position block (a power of two)
constexpr int64_t kRowsFrom = 64;  // classes from which a position gets a whole block
constexpr int64_t kMaxBlocks = 65535LL * 32;

template <class A>
__device__ __forceinline__ A exp_(A v) {
  if constexpr (std::is_same_v<A, float>) return expf(v);
  else return exp(v);
}

template <class A>
__device__ __forceinline__ A log1p_(A v) {
  if constexpr (std::is_same_v<A, float>) return log1pf(v);
  else return log1p(v);
}

struct Dims {
  int64_t N, C, S;
  __device__ int64_t base(int64_t p) const { return (p / S) * C * S + p % S; }  // x offset of (n, 0, s)
};

// ---- log-sum-exp of one position's scores x[c * S] ----

template <class A>
struct Lse {
  A m, log_s;
};

// Sequential, in class order: the CPU's loop. The max term contributes
// exactly 1 and is left out of `rest`, so log1p keeps tiny remainders; the
// first class holding the max is that term, and a NaN score propagates.
template <class A, class T>
__device__ Lse<A> lse_seq(const T* x, int64_t C, int64_t S) {
  A m = A(-INFINITY);
  int64_t arg = 0;
  for (int64_t c = 0; c < C; ++c) {
    const A v = static_cast<A>(x[c * S]);
    if (v > m) m = v, arg = c;
  }
  A rest = 0;
  for (int64_t c = 0; c < C; ++c)
    if (c != arg) rest += exp_(static_cast<A>(x[c * S]) - m);
  return {m, log1p_(rest)};
}

// The max and the first class holding it; index < 0: none seen yet.
template <class A>
struct MaxArg {
  A value;
  int64_t index;
};

template <class A>
struct MaxArgReducer {
  using acc_t = MaxArg<A>;
  OAR_KP_HD acc_t combine(acc_t a, acc_t b) const {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    return b.value > a.value || (b.value == a.value && b.index < a.index) ? b : a;
  }
};

// block_reduce, and a barrier so that the shared buffer can be reused.
template <class R>
__device__ __forceinline__ typename R::acc_t block_all_reduce(typename R::acc_t v, const R& r,
                                                              typename R::acc_t* shared) {
  typename R::acc_t out = gpu::block_reduce(v, r, shared);
  __syncthreads();
  return out;
}

template <class A>
struct RowShared {
  MaxArg<A> arg[kRowThreads];
  A sum[kRowThreads];
};

// The same with the block sharing the classes; every thread gets the result.
template <class A, class T>
__device__ Lse<A> lse_block(const T* x, int64_t C, int64_t S, RowShared<A>& sh) {
  MaxArg<A> best{A(-INFINITY), -1};
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const A v = static_cast<A>(x[c * S]);
    if (v > best.value) best = {v, c};
  }
  best = block_all_reduce(best, MaxArgReducer<A>{}, sh.arg);
  const A m = best.index < 0 ? A(-INFINITY) : best.value;
  const int64_t arg = best.index < 0 ? 0 : best.index;
  A rest = 0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
    if (c != arg) rest += exp_(static_cast<A>(x[c * S]) - m);
  rest = block_all_reduce(rest, kp::SumReducer<A>{}, sh.sum);
  return {m, log1p_(rest)};
}

// ---- forward ----

struct ForwardArgs {
  Dims d;
  int64_t ignore;
  bool fused;
  double eps;     // label smoothing
  double* per;    // per-position losses for 'sum'/'mean'; null: write y ('none')
};

// (1 - eps) * nll + eps / C * sum_c -log_softmax_c, in double as the CPU.
template <class A>
__device__ __forceinline__ double smoothed(A nll, A smooth, double eps, int64_t C) {
  return (1 - eps) * double(nll) + eps / double(C) * double(smooth);
}

template <class T>
__device__ __forceinline__ void put_loss(T* y, const ForwardArgs& f, int64_t p, double loss) {
  if (f.per) f.per[p] = loss;
  else y[p] = static_cast<T>(static_cast<kp::compute_t<T>>(loss));
}

// One thread per position.
template <class T, class I>
__global__ void loss_fwd_items(const T* x, const I* t, T* y, ForwardArgs f) {
  using A = kp::accumulate_t<T>;
  const int64_t P = f.d.N * f.d.S;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < P; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t tgt = static_cast<int64_t>(t[p]);
    double loss = 0;
    if (tgt != f.ignore) {
      const T* xp = x + f.d.base(p);
      if (!f.fused) {
        loss = -double(static_cast<A>(xp[tgt * f.d.S]));
      } else {
        const Lse<A> l = lse_seq<A>(xp, f.d.C, f.d.S);
        const A nll = (l.m - static_cast<A>(xp[tgt * f.d.S])) + l.log_s;
        if (f.eps == 0) {
          loss = double(nll);
        } else {
          A smooth = 0;
          for (int64_t c = 0; c < f.d.C; ++c) smooth += (l.m - static_cast<A>(xp[c * f.d.S])) + l.log_s;
          loss = smoothed(nll, smooth, f.eps, f.d.C);
        }
      }
    }
    put_loss(y, f, p, loss);
  }
}

// One block per position (cross_entropy with many classes).
template <class T, class I>
__global__ void loss_fwd_rows(const T* x, const I* t, T* y, ForwardArgs f) {
  using A = kp::accumulate_t<T>;
  __shared__ RowShared<A> sh;
  const int64_t P = f.d.N * f.d.S;
  for (int64_t p = blockIdx.x; p < P; p += gridDim.x) {
    const int64_t tgt = static_cast<int64_t>(t[p]);
    const T* xp = x + f.d.base(p);
    if (tgt == f.ignore) {
      if (threadIdx.x == 0) put_loss(y, f, p, 0.0);
      continue;
    }
    const Lse<A> l = lse_block<A>(xp, f.d.C, f.d.S, sh);
    const A nll = (l.m - static_cast<A>(xp[tgt * f.d.S])) + l.log_s;
    if (f.eps == 0) {
      if (threadIdx.x == 0) put_loss(y, f, p, double(nll));
      continue;
    }
    A smooth = 0;
    for (int64_t c = threadIdx.x; c < f.d.C; c += blockDim.x) smooth += (l.m - static_cast<A>(xp[c * f.d.S])) + l.log_s;
    smooth = block_all_reduce(smooth, kp::SumReducer<A>{}, sh.sum);
    if (threadIdx.x == 0) put_loss(y, f, p, smoothed(nll, smooth, f.eps, f.d.C));
  }
}

// The sum of the per-position losses, divided by the non-ignored count for
// 'mean' (0 / 0 = NaN when every target is ignored, as on the CPU).
struct LossTotal : kp::SumReducer<double> {
  bool mean;
  double count;
  OAR_KP_HD double finish(double a, int64_t) const { return mean ? a / count : a; }
};

// ---- backward ----

template <class A>
struct BackwardArgs {
  Dims d;
  int64_t ignore;
  bool fused;
  bool g_each;   // 'none': one incoming gradient per position
  double scale;  // 1 / count for 'mean'
  A off, on;     // eps / C, and (1 - eps) + eps / C: the target's smoothed weight
};

template <class A, class T>
__device__ __forceinline__ A grad_of(const T* g, const BackwardArgs<A>& b, int64_t p) {
  return static_cast<A>(double(static_cast<A>(g[b.g_each ? p : 0])) * b.scale);
}

// grad_x = gp * (softmax_c - q_c) for cross_entropy, -gp [c == t] for
// nll_loss, zero at ignored positions; one thread per position.
template <class T, class I, class A>
__global__ void loss_bwd_items(const T* g, const T* x, const I* t, T* dx, BackwardArgs<A> b) {
  const int64_t P = b.d.N * b.d.S, C = b.d.C, S = b.d.S;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < P; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t tgt = static_cast<int64_t>(t[p]), base = b.d.base(p);
    T* dp = dx + base;
    if (tgt == b.ignore || !b.fused) {
      for (int64_t c = 0; c < C; ++c) dp[c * S] = static_cast<T>(A(0));
      if (tgt != b.ignore) dp[tgt * S] = static_cast<T>(-grad_of(g, b, p));
      continue;
    }
    const A gp = grad_of(g, b, p);
    const T* xp = x + base;
    const Lse<A> l = lse_seq<A>(xp, C, S);
    const A inv_s = A(1) / exp_(l.log_s);
    for (int64_t c = 0; c < C; ++c) {
      const A q = c == tgt ? b.on : b.off;
      dp[c * S] = static_cast<T>(gp * (exp_(static_cast<A>(xp[c * S]) - l.m) * inv_s - q));
    }
  }
}

// The same, one block per position.
template <class T, class I, class A>
__global__ void loss_bwd_rows(const T* g, const T* x, const I* t, T* dx, BackwardArgs<A> b) {
  __shared__ RowShared<A> sh;
  const int64_t P = b.d.N * b.d.S, C = b.d.C, S = b.d.S;
  for (int64_t p = blockIdx.x; p < P; p += gridDim.x) {
    const int64_t tgt = static_cast<int64_t>(t[p]), base = b.d.base(p);
    T* dp = dx + base;
    if (tgt == b.ignore || !b.fused) {
      const A gt = tgt == b.ignore ? A(0) : -grad_of(g, b, p);
      for (int64_t c = threadIdx.x; c < C; c += blockDim.x) dp[c * S] = static_cast<T>(c == tgt ? gt : A(0));
      continue;
    }
    const A gp = grad_of(g, b, p);
    const T* xp = x + base;
    const Lse<A> l = lse_block<A>(xp, C, S, sh);
    const A inv_s = A(1) / exp_(l.log_s);
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const A q = c == tgt ? b.on : b.off;
      dp[c * S] = static_cast<T>(gp * (exp_(static_cast<A>(xp[c * S]) - l.m) * inv_s - q));
    }
  }
}

// ---- entry points ----

template <class F>
void visit_target(oar_dtype_t d, F&& f) {
  if (d == OAR_DTYPE_I64) return f.template operator()<int64_t>();
  if (d == OAR_DTYPE_I32) return f.template operator()<int32_t>();
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "targets must be i32 or i64");
}

template <class F>
void visit_float(oar_dtype_t d, F&& f) {
  switch (d) {
    case OAR_DTYPE_F32: return f.template operator()<float>();
    case OAR_DTYPE_F64: return f.template operator()<double>();
    case OAR_DTYPE_F16: return f.template operator()<kp::half>();
    case OAR_DTYPE_BF16: return f.template operator()<kp::bfloat16>();
    default: sdk::fail(OAR_STATUS_UNSUPPORTED, "losses take floating dtypes only");
  }
}

// Fails with OUT_OF_RANGE, in the CPU's words, on the first target outside
// [0, C) other than ignore_index; returns the number of targets not ignored.
int64_t check_targets(const OpContext& c, const char* op, const oar_tensor_view& tv, int64_t C, int64_t ignore) {
  IndexScan s = scan_indices(c, tv, C, &ignore);
  if (s.first >= 0)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": target " + std::to_string(s.value) + " at position " +
                                           std::to_string(s.first) + " is out of range for " + std::to_string(C) +
                                           " classes (valid range [0, " + std::to_string(C) + "), or ignore_index " +
                                           std::to_string(ignore) + ")");
  return s.count;
}

unsigned row_grid(int64_t P) { return unsigned(P < kMaxBlocks ? P : kMaxBlocks); }

// Forward of nll_loss, or of cross_entropy when `fused`.
oar_status_t loss_forward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &tv = a.input(1), &yv = a.output(0);
    const LossShape sh(xv);
    const Reduction red = sdk::loss_reduction(a);
    const int64_t ignore = a.attr_int("ignore_index");
    const double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    const char* op = fused ? "cross_entropy" : "nll_loss";
    visit_target(tv.dtype, [&]<class I>() {
      const int64_t count = check_targets(c, op, tv, sh.C, ignore);
      visit_float(xv.dtype, [&]<class T>() {
        const int64_t P = sh.positions();
        const bool to_y = red == Reduction::kNone;
        ForwardArgs f{{sh.N, sh.C, sh.S}, ignore, fused, eps, nullptr};
        if (!to_y) f.per = static_cast<double*>(c.workspace(uint64_t(P) * sizeof(double)));
        if (P > 0) {
          if (fused && sh.C >= kRowsFrom)
            loss_fwd_rows<T, I><<<row_grid(P), kRowThreads, 0, c.stream>>>(ptr<const T>(xv), ptr<const I>(tv),
                                                                           ptr<T>(yv), f);
          else
            loss_fwd_items<T, I><<<gpu::grid_for(P), gpu::kBlock, 0, c.stream>>>(ptr<const T>(xv), ptr<const I>(tv),
                                                                                 ptr<T>(yv), f);
          c.check_launch(op);
        }
        if (to_y) return;
        kp::ReduceGeometry g;  // every position into the one output
        g.red_shape = {P};
        g.red_strides = {1};
        g.n_red = P;
        g.n_out = 1;
        LossTotal total;
        total.mean = red == Reduction::kMean;
        total.count = double(count);
        check(gpu::reduce(c.stream, static_cast<const double*>(f.per), ptr<T>(yv), g, total,
                          [&](uint64_t bytes) { return c.workspace(bytes); }),
              op);
      });
    });
  });
}

// Backward: grad_x from grad_y, the scores and the targets.
oar_status_t loss_backward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &gv = a.input(0), &xv = a.input(1), &tv = a.input(2), &dxv = a.output(0);
    const LossShape sh(xv);
    const Reduction red = sdk::loss_reduction(a);
    const int64_t ignore = a.attr_int("ignore_index");
    const double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    const char* op = fused ? "cross_entropy_backward" : "nll_loss_backward";
    visit_target(tv.dtype, [&]<class I>() {
      const int64_t count = check_targets(c, op, tv, sh.C, ignore);
      visit_float(xv.dtype, [&]<class T>() {
        using A = kp::accumulate_t<T>;
        const int64_t P = sh.positions();
        if (P == 0 || sh.C == 0) return;
        BackwardArgs<A> b;
        b.d = {sh.N, sh.C, sh.S};
        b.ignore = ignore;
        b.fused = fused;
        b.g_each = red == Reduction::kNone;
        b.scale = red == Reduction::kMean ? 1.0 / double(count) : 1.0;
        b.off = A(eps / double(sh.C));
        b.on = A(1 - eps) + b.off;
        if (sh.C >= kRowsFrom)
          loss_bwd_rows<T, I, A><<<row_grid(P), kRowThreads, 0, c.stream>>>(
              ptr<const T>(gv), ptr<const T>(xv), ptr<const I>(tv), ptr<T>(dxv), b);
        else
          loss_bwd_items<T, I, A><<<gpu::grid_for(P), gpu::kBlock, 0, c.stream>>>(
              ptr<const T>(gv), ptr<const T>(xv), ptr<const I>(tv), ptr<T>(dxv), b);
        c.check_launch(op);
      });
    });
  });
}

oar_status_t nll_loss_entry(const oar_kernel_context* ctx) { return loss_forward(ctx, false); }
oar_status_t cross_entropy_entry(const oar_kernel_context* ctx) { return loss_forward(ctx, true); }
oar_status_t nll_loss_backward_entry(const oar_kernel_context* ctx) { return loss_backward(ctx, false); }
oar_status_t cross_entropy_backward_entry(const oar_kernel_context* ctx) { return loss_backward(ctx, true); }

}  // namespace

oar_status_t register_loss_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-" OAR_GPU_BACKEND_NAME;
  for (oar_dtype_t ix : {OAR_DTYPE_I64, OAR_DTYPE_I32})
    for (oar_dtype_t d : sdk::kFloatDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "nll_loss", {d, ix}, nll_loss_entry, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "cross_entropy", {d, ix}, cross_entropy_entry, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "nll_loss_backward", {d, d, ix}, nll_loss_backward_entry, impl))
        return st;
      if (oar_status_t st =
              sdk::register_kernel(r, "cross_entropy_backward", {d, d, ix}, cross_entropy_backward_entry, impl))
        return st;
    }
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
