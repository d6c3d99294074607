// CPU max/avg pool2d and their backward ops: oneDNN pooling primitives for f32
// (and bf16 where the CPU has it) on NCHW memory, plus PyTorch-exact
// reference loops for every float dtype. ceil_mode becomes a larger right
// padding for oneDNN; max-pool backward recomputes the forward to get
// oneDNN's argmax workspace. oneDNN's include-padding average divides by the
// full kernel area even where a ceil-mode window hangs past the padding,
// whereas PyTorch clips that window to the padded input, so that one case is
// declined to the reference loop.
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
  int64_t prh, prw;  // right padding that yields y's size in oneDNN's floor formula
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
  g.prh = std::max(g.ph, (g.y[2] - 1) * g.sh + g.kh - g.x[2] - g.ph);
  g.prw = std::max(g.pw, (g.y[3] - 1) * g.sw + g.kw - g.x[3] - g.pw);
  return g;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

CachedPtr lookup(const PoolGeom& g) {
  Key key;
  key.add(g.max).add(g.backward).add(g.include_pad).add(g.dtype).add(g.x).add(g.y);
  key.add(g.kh).add(g.kw).add(g.sh).add(g.sw).add(g.ph).add(g.pw).add(g.prh).add(g.prw);
  return cache().get(key, [&](Cached& e) {
    using namespace dnnl;
    if (!g.max && g.include_pad && (g.prh > g.ph || g.prw > g.pw))
      throw sdk::KernelError{OAR_STATUS_UNSUPPORTED,
                             "a ceil_mode window hangs past the padding and oneDNN's include-padding divisor "
                             "would count it"};
    memory::desc x_md = dense_md(g.x, g.dtype), y_md = dense_md(g.y, g.dtype);
    algorithm alg = g.max ? algorithm::pooling_max
                          : (g.include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding);
    Dims strides{g.sh, g.sw}, kernel{g.kh, g.kw}, dil{0, 0}, pl{g.ph, g.pw}, pr{g.prh, g.prw};
    pooling_v2_forward::primitive_desc fwd(
        pooling_v2_forward::desc(g.backward ? prop_kind::forward_training : prop_kind::forward_inference, alg, x_md,
                                 y_md, strides, kernel, dil, pl, pr),
        engine());
    e.mds = {x_md, y_md};
    if (!g.backward) {
      e.prim = pooling_v2_forward(fwd);
      return;
    }
    pooling_v2_backward::primitive_desc bwd(
        pooling_v2_backward::desc(alg, x_md, y_md, strides, kernel, dil, pl, pr), engine(), fwd);
    e.prim = pooling_v2_backward(bwd);
    if (g.max) {
      e.fwd = pooling_v2_forward(fwd);
      e.workspace_md = fwd.workspace_desc();
    }
  });
}

template <bool kMax, bool kBackward>
int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    PoolGeom g = geometry(a, kMax, kBackward);
    const std::string& err = lookup(g)->error;
    return err.empty() ? err : std::string("oneDNN pooling (") + dtype_str(g.dtype) + "): " + err;
  });
}

template <bool kMax, bool kBackward>
oar_status_t dnnl_pool_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    PoolGeom g = geometry(a, kMax, kBackward);
    const Cached& c = require_ok(lookup(g), kMax ? "max_pool2d" : "avg_pool2d");
    DenseOutput out(a, 0);
    if (!kBackward) {
      execute(c.prim, {{DNNL_ARG_SRC, make_memory(c.mds[0], dense_input(a, 0))},
                       {DNNL_ARG_DST, make_memory(c.mds[1], out.data())}});
      return out.finish();
    }
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, make_memory(c.mds[1], dense_input(a, 0))},
                                               {DNNL_ARG_DIFF_SRC, make_memory(c.mds[0], out.data())}};
    if (kMax) {  // recompute the forward for its argmax workspace
      void* y = a.workspace(c.mds[1].get_size());
      dnnl::memory ws = make_memory(c.workspace_md, a.workspace(c.workspace_md.get_size()));
      execute(c.fwd, {{DNNL_ARG_SRC, make_memory(c.mds[0], dense_input(a, 1))},
                      {DNNL_ARG_DST, make_memory(c.mds[1], y)},
                      {DNNL_ARG_WORKSPACE, ws}});
      args[DNNL_ARG_WORKSPACE] = ws;
    }
    execute(c.prim, args);
    out.finish();
  });
}

// ---- direct loops (PyTorch's window clipping and divisor) ----
// Windows are separable: the clipped row range depends only on oh and the
// column range only on ow, so both are computed once per call. Arithmetic is
// in the compute type (float for f32/f16/bf16), parallel over (n, c) planes.
// This path is also preferred over oneDNN for plain NCHW layouts, where
// oneDNN 2.6 only has its slow `simple_nchw` pooling.

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
  if (auto st = register_float_kernels(r, op, arity, kDnnlDTypes, dnnl_pool_kernel<kMax, kBackward>, "onednn", 10,
                                       dnnl_supports<kMax, kBackward>))
    return st;
  // The direct loops beat oneDNN 2.6's plain-layout pooling (measured: 5-10x on
  // [64,16,8,8]), so they run first for every float dtype.
  return register_float_kernels(r, op, arity, kRefDTypes, ref_pool_kernel<kMax, kBackward>, "direct", 20);
}

}  // namespace

oar_status_t register_pool_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_pool<true, false>(r, "max_pool2d")) return st;
  if (auto st = register_pool<true, true>(r, "max_pool2d_backward")) return st;
  if (auto st = register_pool<false, false>(r, "avg_pool2d")) return st;
  return register_pool<false, true>(r, "avg_pool2d_backward");
}

}  // namespace oar_cpu
