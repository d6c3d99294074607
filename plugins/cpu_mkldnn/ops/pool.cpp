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

// ---- reference loops (PyTorch's window clipping and divisor) ----

struct Window {
  int64_t h0, h1, w0, w1;  // clipped to the input
  int64_t area;            // divisor with count_include_pad: clipped to the padded input
};

Window window(const PoolGeom& g, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = std::min(h0 + g.kh, g.x[2] + g.ph), w1 = std::min(w0 + g.kw, g.x[3] + g.pw);
  Window w{std::max<int64_t>(h0, 0), std::min(h1, g.x[2]), std::max<int64_t>(w0, 0), std::min(w1, g.x[3]),
           (h1 - h0) * (w1 - w0)};
  return w;
}

// Index within the plane of the window's max; NaN wins, ties keep the first (as PyTorch).
template <class T>
int64_t argmax(const T* plane, int64_t W, const Window& w) {
  int64_t best_i = w.h0 * W + w.w0;
  double best = -std::numeric_limits<double>::infinity();
  for (int64_t h = w.h0; h < w.h1; ++h)
    for (int64_t c = w.w0; c < w.w1; ++c) {
      double v = to_d(plane[h * W + c]);
      if (v > best || std::isnan(v)) {
        best = v;
        best_i = h * W + c;
        if (std::isnan(v)) return best_i;
      }
    }
  return best_i;
}

template <class T>
void ref_pool(const PoolGeom& g, const T* x, const T* gy, T* out) {
  int64_t H = g.x[2], W = g.x[3], OH = g.y[2], OW = g.y[3];
  kp::cpu::parallel_for(g.x[0] * g.x[1], 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T* xp = x + p * H * W;
      std::vector<double> acc(g.backward ? size_t(H * W) : 0, 0.0);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          Window w = window(g, oh, ow);
          int64_t o = p * OH * OW + oh * OW + ow;
          int64_t divisor = g.include_pad ? w.area : (w.h1 - w.h0) * (w.w1 - w.w0);
          if (g.max && !g.backward) {
            out[o] = xp[argmax(xp, W, w)];
          } else if (g.max) {
            acc[size_t(argmax(xp, W, w))] += to_d(gy[o]);
          } else if (!g.backward) {
            double sum = 0;
            for (int64_t h = w.h0; h < w.h1; ++h)
              for (int64_t c = w.w0; c < w.w1; ++c) sum += to_d(xp[h * W + c]);
            out[o] = from_d<T>(sum / double(divisor));
          } else {
            for (int64_t h = w.h0; h < w.h1; ++h)
              for (int64_t c = w.w0; c < w.w1; ++c) acc[size_t(h * W + c)] += to_d(gy[o]) / double(divisor);
          }
        }
      if (g.backward)
        for (int64_t i = 0; i < H * W; ++i) out[p * H * W + i] = from_d<T>(acc[size_t(i)]);
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
      ref_pool<T>(g, x, gy, out.as<T>());
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
  return register_float_kernels(r, op, arity, kRefDTypes, ref_pool_kernel<kMax, kBackward>, "reference", 0);
}

}  // namespace

oar_status_t register_pool_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_pool<true, false>(r, "max_pool2d")) return st;
  if (auto st = register_pool<true, true>(r, "max_pool2d_backward")) return st;
  if (auto st = register_pool<false, false>(r, "avg_pool2d")) return st;
  return register_pool<false, true>(r, "avg_pool2d_backward");
}

}  // namespace oar_cpu
