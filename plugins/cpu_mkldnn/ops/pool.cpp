// CPU max/avg pool2d and their backward ops as direct loops over NCHW planes,
// with PyTorch's window clipping, ceil_mode and count_include_pad divisor, for
// every float dtype. oneDNN 2.6 pools plain NCHW memory only with its slow
// `simple_nchw` implementation (measured here: 25 ms vs 15 ms for a 2x2 max
// pool of [32,64,56,56], 0.38 ms vs ~0.15 ms for [64,16,8,8]), so this plugin
// does not use oneDNN for pooling; a blocked-layout oneDNN path would be the
// way back if layouts other than NCHW arrive.
#include <cmath>
#include <limits>

#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

struct PoolGeom {
  bool max, backward, include_pad = false;
  oar_dtype_t dtype;
  Dims x, y;
  int64_t kh, kw, sh, sw, ph, pw;
};

PoolGeom geometry(const sdk::KernelArgs& a, bool max, bool backward) {
  PoolGeom g;
  g.max = max;
  g.backward = backward;
  g.dtype = a.output(0).dtype;
  if (!max) g.include_pad = a.attr_bool("count_include_pad");
  g.x = dims_of(backward ? a.input(1) : a.input(0));
  g.y = dims_of(backward ? a.input(0) : a.output(0));
  auto k = a.attr_ints("kernel_size"), s = a.attr_ints("stride"), p = a.attr_ints("padding");
  if (s.empty()) s = k;
  g.kh = k.front(), g.kw = k.back(), g.sh = s.front(), g.sw = s.back(), g.ph = p.front(), g.pw = p.back();
  return g;
}

// ---- direct loops (PyTorch's window clipping and divisor) ----
// Windows are separable: the clipped row range depends only on oh and the
// column range only on ow, so both are computed once per call. Arithmetic is
// in the compute type (float for f32/f16/bf16), parallel over (n, c) planes.

struct Span {
  int64_t begin, end;  // clipped to the input
  int64_t padded;      // extent within the padded input (count_include_pad divisor)
};

std::vector<Span> spans(int64_t out, int64_t in, int64_t k, int64_t s, int64_t p) {
  std::vector<Span> v(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t lo = o * s - p, hi = std::min(lo + k, in + p);
    v[size_t(o)] = {std::max<int64_t>(lo, 0), std::min(hi, in), hi - lo};
  }
  return v;
}

// First maximum wins; a NaN wins outright (as PyTorch). Returns true on NaN.
template <class C>
inline bool take_max(C v, int64_t i, C& best, int64_t& best_i) {
  if (!(v <= best)) {
    best = v;
    best_i = i;
    return v != v;
  }
  return false;
}

// One output window. KH/KW > 0: the window is known to be full and that size,
// so the loops unroll (2x2 and 3x3 are most pools); 0: runtime extents.
template <class T, int KH, int KW>
inline void pool_window(const PoolGeom& g, const T* xp, const T* gy, T* op, int64_t W, const Span& r,
                        const Span& c, int64_t o, int64_t oi) {
  using C = kp::compute_t<T>;
  const int64_t kh = KH ? KH : r.end - r.begin, kw = KW ? KW : c.end - c.begin;
  const T* base = xp + r.begin * W + c.begin;
  if (g.max) {
    C best = -std::numeric_limits<C>::infinity();
    int64_t best_i = 0;
    bool nan = false;
    for (int64_t h = 0; h < kh && !nan; ++h)
      for (int64_t w = 0; w < kw && !nan; ++w) nan = take_max(C(base[h * W + w]), h * W + w, best, best_i);
    const int64_t at = r.begin * W + c.begin + best_i;
    if (g.backward) op[at] = T(C(op[at]) + C(gy[o]));
    else op[oi] = xp[at];
    return;
  }
  const int64_t divisor = g.include_pad ? r.padded * c.padded : kh * kw;
  if (!g.backward) {
    C sum = 0;
    for (int64_t h = 0; h < kh; ++h)
      for (int64_t w = 0; w < kw; ++w) sum += C(base[h * W + w]);
    op[oi] = T(sum / C(divisor));
  } else {
    const C share = C(gy[o]) / C(divisor);
    T* ob = op + r.begin * W + c.begin;
    for (int64_t h = 0; h < kh; ++h)
      for (int64_t w = 0; w < kw; ++w) ob[h * W + w] = T(C(ob[h * W + w]) + share);
  }
}

template <class T, int K>
void ref_pool(const PoolGeom& g, const T* x, const T* gy, T* out) {
  using C = kp::compute_t<T>;
  const int64_t H = g.x[2], W = g.x[3], OH = g.y[2], OW = g.y[3];
  const auto rows = spans(OH, H, g.kh, g.sh, g.ph), cols = spans(OW, W, g.kw, g.sw, g.pw);
  kp::cpu::parallel_for(g.x[0] * g.x[1], std::max<int64_t>(1, 4096 / std::max<int64_t>(1, H * W)),
                        [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T* xp = x + p * H * W;
      T* op = out + p * (g.backward ? H * W : OH * OW);
      if (g.backward)
        for (int64_t i = 0; i < H * W; ++i) op[i] = T(C(0));
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Span& r = rows[size_t(oh)];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Span& c = cols[size_t(ow)];
          const int64_t o = p * OH * OW + oh * OW + ow, oi = oh * OW + ow;
          if (K > 0 && r.end - r.begin == K && c.end - c.begin == K)
            pool_window<T, K, K>(g, xp, gy, op, W, r, c, o, oi);
          else
            pool_window<T, 0, 0>(g, xp, gy, op, W, r, c, o, oi);
        }
      }
    }
  });
}

template <bool kMax, bool kBackward>
oar_status_t ref_pool_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    PoolGeom g = geometry(a, kMax, kBackward);
    DenseOutput out(a, 0);
    visit_float(g.dtype, [&]<class T>() {
      const T* x = static_cast<const T*>(dense_input(a, kBackward ? 1 : 0));
      const T* gy = kBackward ? static_cast<const T*>(dense_input(a, 0)) : nullptr;
      if (g.kh == 2 && g.kw == 2) ref_pool<T, 2>(g, x, gy, out.as<T>());
      else if (g.kh == 3 && g.kw == 3) ref_pool<T, 3>(g, x, gy, out.as<T>());
      else ref_pool<T, 0>(g, x, gy, out.as<T>());
    });
    out.finish();
  });
}

template <bool kMax, bool kBackward>
oar_status_t register_pool(const oar_kernel_registrar* r, const char* op) {
  int arity = kBackward ? 2 : 1;
  return sdk::register_same_dtype(r, op, kRefDTypes, arity, ref_pool_kernel<kMax, kBackward>, "direct", 0);
}

}  // namespace

oar_status_t register_pool_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_pool<true, false>(r, "max_pool2d")) return st;
  if (auto st = register_pool<true, true>(r, "max_pool2d_backward")) return st;
  if (auto st = register_pool<false, false>(r, "avg_pool2d")) return st;
  return register_pool<false, true>(r, "avg_pool2d_backward");
}

}  // namespace oar_cpu
