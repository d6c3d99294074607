// CUDA max/avg pool2d and their backward ops over dense NCHW, as kernels of
// this file rather than cuDNN: the CPU plugin's semantics (PyTorch's window
// clipping, ceil_mode, the count_include_pad divisor measured within the
// padded input, the first maximum in row-major window order, a NaN winning
// outright, backward recomputing the argmax from x) are not all cuDNN's
// (its windows, divisor and tie/NaN rules differ at the edges).
//
// Forward: a thread per output element. Backward gathers instead of
// scattering: a thread per input element visits the few windows that cover
// it in the CPU's output order and adds each contribution rounded to the
// storage type, as the CPU's accumulation into its output does, so the
// result matches it bit for bit without atomics.
#include <cmath>

#include "ops/ops.h"
#include "ops/vendor_common.cuh"

namespace oar_gpu {

namespace {

using namespace nn;

struct PoolParams {
  int64_t planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw;
  bool include_pad;
};

// Offset within the plane of the window's first maximum; a NaN ends the scan
// (it wins). An all -inf window keeps its first element.
template <class T>
__device__ int64_t window_argmax(const T* xp, int64_t hb, int64_t he, int64_t wb, int64_t we, int64_t W) {
  using C = kp::compute_t<T>;
  C best = -C(INFINITY);
  int64_t at = hb * W + wb;
  bool nan = false;
  for (int64_t h = hb; h < he && !nan; ++h)
    for (int64_t w = wb; w < we && !nan; ++w) {
      const C v = C(xp[h * W + w]);
      if (!(v <= best)) {
        best = v;
        at = h * W + w;
        nan = v != v;
      }
    }
  return at;
}

// The avg divisor: the clipped window, or the window within the padded input.
__device__ inline int64_t window_divisor(const PoolParams& p, int64_t h0, int64_t w0, int64_t hb, int64_t he,
                                         int64_t wb, int64_t we) {
  if (!p.include_pad) return (he - hb) * (we - wb);
  const int64_t hh = (h0 + p.kh < p.H + p.ph ? h0 + p.kh : p.H + p.ph) - h0;
  const int64_t ww = (w0 + p.kw < p.W + p.pw ? w0 + p.kw : p.W + p.pw) - w0;
  return hh * ww;
}

struct Window {
  int64_t h0, w0, hb, he, wb, we;  // unclipped start, clipped [begin, end) per axis
};

__device__ inline Window window_of(const PoolParams& p, int64_t oh, int64_t ow) {
  Window r;
  r.h0 = oh * p.sh - p.ph;
  r.w0 = ow * p.sw - p.pw;
  r.hb = r.h0 > 0 ? r.h0 : 0;
  r.he = r.h0 + p.kh < p.H ? r.h0 + p.kh : p.H;
  r.wb = r.w0 > 0 ? r.w0 : 0;
  r.we = r.w0 + p.kw < p.W ? r.w0 + p.kw : p.W;
  return r;
}

template <class T, bool kMax>
__global__ void pool_forward(PoolParams p, const T* x, T* y) {
  using C = kp::compute_t<T>;
  const int64_t n = p.planes * p.OH * p.OW;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < n; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ow = o % p.OW, oh = (o / p.OW) % p.OH, plane = o / (p.OH * p.OW);
    const T* xp = x + plane * p.H * p.W;
    const Window r = window_of(p, oh, ow);
    if (kMax) {
      y[o] = xp[window_argmax(xp, r.hb, r.he, r.wb, r.we, p.W)];
    } else {
      C sum = 0;
      for (int64_t h = r.hb; h < r.he; ++h)
        for (int64_t w = r.wb; w < r.we; ++w) sum += C(xp[h * p.W + w]);
      y[o] = T(sum / C(window_divisor(p, r.h0, r.w0, r.hb, r.he, r.wb, r.we)));
    }
  }
}

// First window index along an axis whose window [o*s - p, o*s - p + k) holds i.
__device__ inline int64_t first_window(int64_t i, int64_t k, int64_t s, int64_t p) {
  const int64_t t = i + p - k + 1;
  return t > 0 ? (t + s - 1) / s : 0;
}

template <class T, bool kMax>
__global__ void pool_backward(PoolParams p, const T* gy, const T* x, T* gx) {
  using C = kp::compute_t<T>;
  const int64_t n = p.planes * p.H * p.W;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = i % p.W, h = (i / p.W) % p.H, plane = i / (p.H * p.W);
    const T* xp = x + plane * p.H * p.W;
    const T* gp = gy + plane * p.OH * p.OW;
    const int64_t oh_end = (h + p.ph) / p.sh + 1 < p.OH ? (h + p.ph) / p.sh + 1 : p.OH;
    const int64_t ow_end = (w + p.pw) / p.sw + 1 < p.OW ? (w + p.pw) / p.sw + 1 : p.OW;
    const int64_t ow_first = first_window(w, p.kw, p.sw, p.pw);
    C acc = 0;
    for (int64_t oh = first_window(h, p.kh, p.sh, p.ph); oh < oh_end; ++oh)
      for (int64_t ow = ow_first; ow < ow_end; ++ow) {
        const Window r = window_of(p, oh, ow);
        const C g = C(gp[oh * p.OW + ow]);
        if (kMax) {
          if (window_argmax(xp, r.hb, r.he, r.wb, r.we, p.W) == h * p.W + w) acc = round_to<T>(acc + g);
        } else {
          acc = round_to<T>(acc + g / C(window_divisor(p, r.h0, r.w0, r.hb, r.he, r.wb, r.we)));
        }
      }
    gx[i] = T(acc);
  }
}

template <bool kMax, bool kBackward>
oar_status_t pool_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const oar_tensor_view& out_view = a.output(0);
    if (sdk::numel(out_view) == 0) return;
    OpContext c(a);
    const oar_tensor_view& xv = a.input(kBackward ? 1 : 0);
    const oar_tensor_view& yv = kBackward ? a.input(0) : out_view;  // the pooled shape
    auto k = a.attr_ints("kernel_size"), s = a.attr_ints("stride"), pad = a.attr_ints("padding");
    if (s.empty()) s = k;
    PoolParams p{xv.shape[0] * xv.shape[1], xv.shape[2], xv.shape[3], yv.shape[2], yv.shape[3],
                 k.front(),  k.back(),  s.front(),  s.back(),  pad.front(), pad.back(),
                 !kMax && a.attr_bool("count_include_pad")};
    DenseOutput out(c, out_view);
    visit_float(out_view.dtype, [&]<class T>() {
      const T* x = dense_input_as<T>(c, xv);
      if (kBackward) {
        const T* gy = dense_input_as<T>(c, a.input(0));
        pool_backward<T, kMax><<<gpu::grid_for(p.planes * p.H * p.W), gpu::kBlock, 0, c.stream>>>(p, gy, x,
                                                                                                  out.as<T>());
      } else {
        pool_forward<T, kMax><<<gpu::grid_for(p.planes * p.OH * p.OW), gpu::kBlock, 0, c.stream>>>(p, x,
                                                                                                  out.as<T>());
      }
    });
    c.check_launch(a.context().op_name);
    out.finish();
  });
}

}  // namespace

oar_status_t register_pool_kernels(const oar_kernel_registrar* r) {
  auto reg = [r](const char* op, int arity, oar_kernel_fn fn) {
    return oar::sdk::register_same_dtype(r, op, oar::sdk::kFloatDTypes, arity, fn, "kp-" OAR_GPU_BACKEND_NAME);
  };
  if (auto st = reg("max_pool2d", 1, pool_kernel<true, false>)) return st;
  if (auto st = reg("max_pool2d_backward", 2, pool_kernel<true, true>)) return st;
  if (auto st = reg("avg_pool2d", 1, pool_kernel<false, false>)) return st;
  return reg("avg_pool2d_backward", 2, pool_kernel<false, true>);
}

}  // namespace oar_gpu
