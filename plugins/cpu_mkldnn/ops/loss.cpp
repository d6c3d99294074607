// CPU kernels for nll_loss, cross_entropy and their backward ops. Scores are
// viewed as [N, C, S] (S = product of the trailing dims, a 1-D input is
// [1, C, 1]) and targets as [N, S]. Targets are validated before any parallel
// work; per-position losses are computed in parallel in float (double for
// f64) and reduced sequentially in double, so results are deterministic.
// cross_entropy uses a max-shifted log-sum-exp, so large logits stay finite.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "oar/kp/cpu/parallel.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace oar;
using kp::cpu::kGrainSize;
using kp::cpu::parallel_for;

using sdk::LossShape;
using Reduction = sdk::LossReduction;

// Fails with OUT_OF_RANGE on the first target outside [0, C) other than
// ignore_index; returns the number of targets that are not ignored.
template <class I>
int64_t check_targets(const char* op, const I* t, int64_t n, int64_t C, int64_t ignore) {
  std::atomic<int64_t> first{n}, count{0};
  parallel_for(n, kGrainSize, [&](int64_t b, int64_t e) {
    int64_t local = 0;
    for (int64_t i = b; i < e; ++i) {
      int64_t v = int64_t(t[i]);
      if (v == ignore) continue;
      if (v < 0 || v >= C) {
        int64_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        break;
      }
      ++local;
    }
    count += local;
  });
  int64_t p = first.load();
  if (p < n)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": target " + std::to_string(int64_t(t[p])) +
                                           " at position " + std::to_string(p) + " is out of range for " +
                                           std::to_string(C) + " classes (valid range [0, " +
                                           std::to_string(C) + "), or ignore_index " +
                                           std::to_string(ignore) + ")");
  return count.load();
}

template <class F>
void visit_target(oar_dtype_t d, F&& f) {
  if (d == OAR_DTYPE_I64) return f.template operator()<int64_t>();
  if (d == OAR_DTYPE_I32) return f.template operator()<int32_t>();
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "targets must be i32 or i64");
}

template <class F>
void visit_float(oar_dtype_t d, F&& f) {
  sdk::visit_dtype(d, [&]<class T>() {
    if constexpr (kp::is_floating_v<T>)
      f.template operator()<T>();
    else
      sdk::fail(OAR_STATUS_UNSUPPORTED, "losses take floating dtypes only");
  });
}

// Runs f(p) for every position p = n * S + s, in parallel.
template <class F>
void over_positions(const LossShape& sh, F&& f) {
  parallel_for(sh.positions(), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(sh.C, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) f(p);
               });
}

// Max-shifted log-sum-exp of one position's scores x[c * S]: log_softmax_c is
// (x_c - m) - log_s, which keeps the small differences that lse - x_c would
// lose to rounding when the logits are large. A NaN score propagates.
template <class Acc>
struct Lse {
  Acc m, log_s;
};
template <class T, class Acc>
Lse<Acc> log_sum_exp(const T* x, int64_t C, int64_t S) {
  Acc m = -std::numeric_limits<Acc>::infinity();
  int64_t arg = 0;
  for (int64_t c = 0; c < C; ++c)
    if (Acc(x[c * S]) > m) m = Acc(x[c * S]), arg = c;
  Acc rest = 0;  // the max term contributes exactly 1: log1p keeps tiny remainders
  for (int64_t c = 0; c < C; ++c)
    if (c != arg) rest += std::exp(Acc(x[c * S]) - m);
  return {m, std::log1p(rest)};
}

// Writes per-position losses to y (reduction none) or their sum / mean.
template <class T>
void finish(const oar_tensor_view& yv, Reduction red, const std::vector<double>& loss, int64_t count) {
  T* y = sdk::data_of<T>(yv);
  if (red == Reduction::kNone) {
    for (size_t p = 0; p < loss.size(); ++p) y[p] = T(kp::compute_t<T>(loss[p]));
    return;
  }
  double s = 0;
  for (double v : loss) s += v;
  if (red == Reduction::kMean) s /= double(count);  // 0 / 0 = NaN when every target is ignored
  y[0] = T(kp::compute_t<T>(s));
}

// Forward of nll_loss, or of cross_entropy when `fused`.
oar_status_t loss_forward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    const auto &xv = a.input(0), &tv = a.input(1), &yv = a.output(0);
    LossShape sh(xv);
    Reduction red = sdk::loss_reduction(a);
    int64_t ignore = a.attr_int("ignore_index");
    double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    const char* op = fused ? "cross_entropy" : "nll_loss";
    visit_target(tv.dtype, [&]<class I>() {
      const I* t = sdk::data_of<I>(tv);
      int64_t count = check_targets(op, t, sh.positions(), sh.C, ignore);
      visit_float(xv.dtype, [&]<class T>() {
        using Acc = kp::accumulate_t<T>;
        const T* x = sdk::data_of<T>(xv);
        std::vector<double> loss(size_t(sh.positions()), 0.0);
        over_positions(sh, [&](int64_t p) {
          int64_t tgt = int64_t(t[p]);
          if (tgt == ignore) return;
          const T* xp = x + (p / sh.S) * sh.C * sh.S + p % sh.S;
          if (!fused) {
            loss[size_t(p)] = -double(Acc(xp[tgt * sh.S]));
            return;
          }
          Lse<Acc> l = log_sum_exp<T, Acc>(xp, sh.C, sh.S);
          Acc nll = (l.m - Acc(xp[tgt * sh.S])) + l.log_s;
          if (eps == 0) {
            loss[size_t(p)] = double(nll);
            return;
          }
          Acc smooth = 0;  // sum_c -log_softmax_c
          for (int64_t c = 0; c < sh.C; ++c) smooth += (l.m - Acc(xp[c * sh.S])) + l.log_s;
          loss[size_t(p)] = (1 - eps) * double(nll) + eps / double(sh.C) * double(smooth);
        });
        finish<T>(yv, red, loss, count);
      });
    });
  });
}

// Backward: grad_x[n, c, s] = g_p * (softmax_c - (1 - eps) [c == t] - eps / C)
// for cross_entropy, -g_p [c == t] for nll_loss; zero at ignored positions.
oar_status_t loss_backward(const oar_kernel_context* ctx, bool fused) {
  return sdk::run_kernel(ctx, [fused](const sdk::KernelArgs& a) {
    const auto &gv = a.input(0), &xv = a.input(1), &tv = a.input(2), &dxv = a.output(0);
    LossShape sh(xv);
    Reduction red = sdk::loss_reduction(a);
    int64_t ignore = a.attr_int("ignore_index");
    double eps = fused ? a.attr_float("label_smoothing") : 0.0;
    const char* op = fused ? "cross_entropy_backward" : "nll_loss_backward";
    visit_target(tv.dtype, [&]<class I>() {
      const I* t = sdk::data_of<I>(tv);
      int64_t count = check_targets(op, t, sh.positions(), sh.C, ignore);
      visit_float(xv.dtype, [&]<class T>() {
        using Acc = kp::accumulate_t<T>;
        const T* g = sdk::data_of<T>(gv);
        const T* x = sdk::data_of<T>(xv);
        T* dx = sdk::data_of<T>(dxv);
        double scale = red == Reduction::kMean ? 1.0 / double(count) : 1.0;
        over_positions(sh, [&](int64_t p) {
          int64_t base = (p / sh.S) * sh.C * sh.S + p % sh.S, tgt = int64_t(t[p]);
          const T* xp = x + base;
          T* dp = dx + base;
          if (tgt == ignore) {
            for (int64_t c = 0; c < sh.C; ++c) dp[c * sh.S] = T(Acc(0));
            return;
          }
          Acc gp = Acc(double(Acc(g[red == Reduction::kNone ? p : 0])) * scale);
          if (!fused) {
            for (int64_t c = 0; c < sh.C; ++c) dp[c * sh.S] = T(Acc(0));
            dp[tgt * sh.S] = T(-gp);
            return;
          }
          Lse<Acc> l = log_sum_exp<T, Acc>(xp, sh.C, sh.S);
          Acc inv_s = Acc(1) / std::exp(l.log_s);
          Acc off = Acc(eps / double(sh.C)), on = Acc(1 - eps) + off;
          for (int64_t c = 0; c < sh.C; ++c) {
            Acc q = c == tgt ? on : off;
            dp[c * sh.S] = T(gp * (std::exp(Acc(xp[c * sh.S]) - l.m) * inv_s - q));
          }
        });
      });
    });
  });
}

oar_status_t nll_loss_kernel(const oar_kernel_context* ctx) { return loss_forward(ctx, false); }
oar_status_t cross_entropy_kernel(const oar_kernel_context* ctx) { return loss_forward(ctx, true); }
oar_status_t nll_loss_backward_kernel(const oar_kernel_context* ctx) { return loss_backward(ctx, false); }
oar_status_t cross_entropy_backward_kernel(const oar_kernel_context* ctx) { return loss_backward(ctx, true); }

}  // namespace

oar_status_t register_loss_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-cpu";
  for (oar_dtype_t ix : {OAR_DTYPE_I64, OAR_DTYPE_I32})
    for (oar_dtype_t d : sdk::kFloatDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "nll_loss", {d, ix}, nll_loss_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "cross_entropy", {d, ix}, cross_entropy_kernel, impl))
        return st;
      if (oar_status_t st =
              sdk::register_kernel(r, "nll_loss_backward", {d, d, ix}, nll_loss_backward_kernel, impl))
        return st;
      if (oar_status_t st = sdk::register_kernel(r, "cross_entropy_backward", {d, d, ix},
                                                 cross_entropy_backward_kernel, impl))
        return st;
    }
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
