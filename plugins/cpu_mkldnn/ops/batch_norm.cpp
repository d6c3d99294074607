// batch_norm and batch_norm_backward on the CPU for f32 [N, C, S]. A thread
// takes whole channels: a channel's N blocks of S elements are read from
// memory once for the statistics (or the gradient sums) and read again from
// cache for the output, where oneDNN 2.6's plain-layout kernel (ncsp_bnorm)
// streams them from memory twice and sums in f32. Statistics are exact to
// f32: each chunk of a block is summed around its own mean, and the chunks
// are combined in double (Chan et al.), so a channel with a large mean and a
// small spread keeps its variance. Where S is short (BatchNorm1d on [N, C])
// the operands are first transposed to [C, N * S], so every loop still runs
// over long contiguous rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "oar/kp/cpu/parallel.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/dnnl_common.h"
#include "oar/kp/cpu/isa_clones.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace bn_loops {

// Contiguous runs are processed in chunks this long: f32 partial sums over a
// chunk stay exact to a few ulps, and a chunk of x and dy stays in L1.
constexpr int64_t kChunk = 2048;

OAR_KP_CPU_ISA_CLONES float sum(const float* x, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

// {sum (x - m), sum (x - m)^2} over n elements: the first corrects a centre m
// that rounding moved off the mean.
OAR_KP_CPU_ISA_CLONES void deviation_sums(const float* x, int64_t n, float m, float* out) {
  float s = 0, s2 = 0;
#pragma omp simd reduction(+ : s, s2)
  for (int64_t i = 0; i < n; ++i) {
    s += x[i] - m;
    s2 += (x[i] - m) * (x[i] - m);
  }
  out[0] = s, out[1] = s2;
}

// {sum dy, sum dy * (x - m)} over n elements.
OAR_KP_CPU_ISA_CLONES void grad_sums(const float* dy, const float* x, int64_t n, float m, float* out) {
  float s = 0, sx = 0;
#pragma omp simd reduction(+ : s, sx)
  for (int64_t i = 0; i < n; ++i) {
    s += dy[i];
    sx += dy[i] * (x[i] - m);
  }
  out[0] = s, out[1] = sx;
}

// y = (x - m - m_lo) * a + b: centred first, as x * a + (b - m * a) would
// cancel catastrophically where the mean is large against the spread, and
// by the mean's f32 rounding error m_lo too.
OAR_KP_CPU_ISA_CLONES void normalize(const float* __restrict x, float* __restrict y, int64_t n, float m, float m_lo,
                                  float a, float b) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - m) - m_lo) * a + b;
}

// dx = dy * k1 + (x - m) * k2 + k3 (the batch-norm input gradient, folded per channel).
OAR_KP_CPU_ISA_CLONES void input_grad(const float* __restrict dy, const float* __restrict x, float* __restrict dx,
                                   int64_t n, float m, float k1, float k2, float k3) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * k1 + ((x[i] - m) * k2 + k3);
}

}  // namespace bn_loops

namespace {

namespace sdk = oar::sdk;
using namespace bn_loops;
using namespace nn;

// Below this spatial extent the kernel works on a channel-major copy.
constexpr int64_t kMinInner = 16;

struct Extents {
  int64_t n, c, s;
  int64_t count() const { return n * s; }  // elements per channel
  // Calls f(ptr offset, length) over channel ch's contiguous chunks.
  template <class F>
  void each_chunk(int64_t ch, F&& f) const {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; k += kChunk) f((i * c + ch) * s + k, std::min(kChunk, s - k));
  }
};

Extents extents(const oar_tensor_view& x) {
  sdk::NormExtents e = sdk::norm_extents(x, true, 0);
  return {e.outer, e.channels, e.inner};
}

// Channels in parallel; a small tensor stays on the calling thread.
template <class F>
void for_channels(const Extents& e, F&& f) {
  int64_t grain = std::max<int64_t>(1, oar::kp::cpu::kGrainSize / std::max<int64_t>(1, e.count()));
  oar::kp::cpu::parallel_for(e.c, grain, [&](int64_t b, int64_t end) {
    for (int64_t ch = b; ch < end; ++ch) f(ch);
  });
}

// [N, C, S] <-> [C, N * S] (to_channels false: back), channels in parallel.
void transpose_channels(const float* src, float* dst, const Extents& e, bool to_channels) {
  for_channels(e, [&](int64_t ch) {
    for (int64_t i = 0; i < e.n; ++i) {
      const int64_t nchw = (i * e.c + ch) * e.s, cm = (ch * e.n + i) * e.s;
      std::memcpy(to_channels ? dst + cm : dst + nchw, to_channels ? src + nchw : src + cm,
                  size_t(e.s) * sizeof(float));
    }
  });
}

// The operands a kernel loops over: the tensors themselves, or for a short S
// channel-major workspace copies, seen as [1, C, N * S], whose outputs
// finish() transposes back.
struct Operands {
  const sdk::KernelArgs& a;
  Extents given, e;
  std::vector<std::pair<float*, float*>> outputs;  // (workspace, destination)
  Operands(const sdk::KernelArgs& args, const oar_tensor_view& x) : a(args), given(extents(x)), e(given) {
    if (given.s < kMinInner) e = {1, given.c, given.n * given.s};
  }
  bool transposed() const { return e.n != given.n; }
  const float* input(int i) {
    const float* p = static_cast<const float*>(dense_input(a, i));
    if (!transposed()) return p;
    float* t = static_cast<float*>(a.workspace(uint64_t(given.count() * given.c) * sizeof(float)));
    transpose_channels(p, t, given, true);
    return t;
  }
  float* output(float* dest) {
    if (!transposed()) return dest;
    float* t = static_cast<float*>(a.workspace(uint64_t(given.count() * given.c) * sizeof(float)));
    outputs.push_back({t, dest});
    return t;
  }
  void finish() {
    for (auto [t, dest] : outputs) transpose_channels(t, dest, given, false);
  }
};

const float* optional_input(const sdk::KernelArgs& a, int i) {
  return a.has_input(i) ? static_cast<const float*>(dense_input(a, i)) : nullptr;
}

// Mean and biased variance of channel ch: chunk moments merged in double.
void channel_moments(const float* x, const Extents& e, int64_t ch, double& mean, double& var) {
  double count = 0, m = 0, m2 = 0;
  e.each_chunk(ch, [&](int64_t at, int64_t len) {
    const float centre = sum(x + at, len) / float(len);
    float dev[2];
    deviation_sums(x + at, len, centre, dev);
    const double cm = double(centre) + double(dev[0]) / double(len);  // the chunk's mean and its
    const double c2 = std::max(0.0, double(dev[1]) - double(dev[0]) * dev[0] / double(len));  // squared deviations
    const double d = cm - m, total = count + double(len);
    m += d * double(len) / total;
    m2 += c2 + d * d * count * double(len) / total;
    count = total;
  });
  mean = m;
  var = count > 0 ? m2 / count : 0;
}

oar_status_t forward(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    Operands op(a, a.input(0));
    const Extents& e = op.e;
    const float* x = op.input(0);
    const float *w = optional_input(a, 1), *b = optional_input(a, 2);
    const bool training = a.attr_bool("training");
    const float *running_mean = training ? nullptr : optional_input(a, 3),
                *running_var = training ? nullptr : optional_input(a, 4);
    if (!training && !(running_mean && running_var))
      sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "batch_norm: eval mode needs running_mean and running_var");
    const double eps = a.attr_float("eps");
    DenseOutput y(a, 0), mean_out(a, 1), var_out(a, 2);
    float *yp = op.output(y.as<float>()), *mp = mean_out.as<float>(), *vp = var_out.as<float>();
    for_channels(e, [&](int64_t ch) {
      double mean, var;
      if (training) {
        channel_moments(x, e, ch, mean, var);
      } else {
        mean = running_mean[ch], var = running_var[ch];
      }
      const double scale = (w ? double(w[ch]) : 1.0) / std::sqrt(var + eps);
      const float m = float(mean), m_lo = float(mean - double(m)), shift = b ? b[ch] : 0.0f;
      e.each_chunk(ch, [&](int64_t at, int64_t len) { normalize(x + at, yp + at, len, m, m_lo, float(scale), shift); });
      mp[ch] = float(mean), vp[ch] = float(var);
    });
    op.finish();
    y.finish(), mean_out.finish(), var_out.finish();
  });
}

// Inputs: grad_y, x, weight (optional), saved mean, saved biased variance.
oar_status_t backward(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    Operands op(a, a.input(1));
    const Extents& e = op.e;
    const float* dy = op.input(0);
    const float* x = op.input(1);
    const float* w = optional_input(a, 2);
    const float* mean = static_cast<const float*>(dense_input(a, 3));
    const float* var = static_cast<const float*>(dense_input(a, 4));
    const double eps = a.attr_float("eps"), count = double(e.count());
    DenseOutput dx(a, 0), dw(a, 1), db(a, 2);
    float *dxp = op.output(dx.as<float>()), *dwp = dw.as<float>(), *dbp = db.as<float>();
    for_channels(e, [&](int64_t ch) {
      const float m = mean[ch];
      double s = 0, sx = 0;  // sum dy, sum dy * (x - mean)
      e.each_chunk(ch, [&](int64_t at, int64_t len) {
        float part[2];
        grad_sums(dy + at, x + at, len, m, part);
        s += part[0], sx += part[1];
      });
      const double is = 1.0 / std::sqrt(double(var[ch]) + eps), wv = w ? double(w[ch]) : 1.0;
      dbp[ch] = float(s);
      dwp[ch] = float(sx * is);
      // dx = w * is * (dy - s / count - (x - mean) * is^2 * sx / count)
      const double k1 = wv * is, k2 = -wv * is * is * is * sx / count;
      const double k3 = -k1 * s / count;
      e.each_chunk(ch, [&](int64_t at, int64_t len) {
        input_grad(dy + at, x + at, dxp + at, len, m, float(k1), float(k2), float(k3));
      });
    });
    op.finish();
    dx.finish(), dw.finish(), db.finish();
  });
}

template <int kX>
int32_t supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    const oar_tensor_view& x = a.input(kX);
    if (x.ndim < 2) return "batch_norm needs [N, C, ...]";
    return extents(x).count() == 0 ? "empty input" : "";
  });
}

}  // namespace

oar_status_t register_batch_norm_kernels(const oar_kernel_registrar* r) {
  static constexpr oar_dtype_t kF32[] = {OAR_DTYPE_F32};
  if (auto st = sdk::register_same_dtype(r, "batch_norm", kF32, 1, forward, "cpu_channels", 20, supports<0>))
    return st;
  return sdk::register_same_dtype(r, "batch_norm_backward", kF32, 4, backward, "cpu_channels", 20, supports<1>);
}

}  // namespace oar_cpu
