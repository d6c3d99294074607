// CUDA/HIP kernels for layer_norm and layer_norm_backward, with the CPU
// plugin's semantics (its reference loops): x is [M, D] (D = the last
// normalized_ndim dims, sdk::norm_extents), two-pass statistics with the
// biased variance, outputs y, mean and var (not rstd), absent weight / bias as
// ones / zeros. One block per row combines its threads with block_reduce
// (kp/gpu/reduce.cuh); statistics accumulate in the accumulate type (float
// for f16/bf16/f32, double for f64). The parameter gradients are sums over
// rows: a tile of 32 columns x 8 row lanes per block, the rows split over
// blockIdx.y when there are few columns, the splits summed in order after.
#include <algorithm>
#include <cmath>

#include "launch.h"
#include "oar/kp/gpu/reduce.cuh"
#include "oar/kp/reducers.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

constexpr int kMaxRowThreads = 256;  // a power of two: block_reduce halves it
constexpr int kTileCols = 32, kTileRows = 8;
constexpr int64_t kMaxBlocks = 65535LL * 32;

template <class A>
__device__ __forceinline__ A sqrt_(A v) {
  if constexpr (std::is_same_v<A, float>) return sqrtf(v);
  else return sqrt(v);
}

// block_reduce, and a barrier so that the shared buffer can be reused.
template <class R>
__device__ __forceinline__ typename R::acc_t block_all_reduce(typename R::acc_t v, const R& r,
                                                              typename R::acc_t* shared) {
  typename R::acc_t out = gpu::block_reduce(v, r, shared);
  __syncthreads();
  return out;
}

template <class A>
struct Pair {
  A u, v;
};

template <class A>
struct PairSum {
  using acc_t = Pair<A>;
  OAR_KP_HD acc_t combine(acc_t a, acc_t b) const { return {a.u + b.u, a.v + b.v}; }
};

// Threads per row block: the power of two covering D, from a warp to kMaxRowThreads.
int row_threads(int64_t D) {
  int t = 32;
  while (t < kMaxRowThreads && t < D) t *= 2;
  return t;
}

unsigned row_grid(int64_t M) { return unsigned(M < kMaxBlocks ? M : kMaxBlocks); }

template <class T, class A>
__global__ void layer_norm_fwd(const T* x, const T* w, const T* b, T* y, T* mean_out, T* var_out, int64_t M,
                               int64_t D, A eps) {
  __shared__ A sh[kMaxRowThreads];
  const kp::SumReducer<A> sum;
  for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
    const T* xr = x + row * D;
    T* yr = y + row * D;
    A s = 0;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) s += static_cast<A>(xr[i]);
    const A mean = block_all_reduce(s, sum, sh) / A(D);
    s = 0;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      const A d = static_cast<A>(xr[i]) - mean;
      s += d * d;
    }
    const A var = block_all_reduce(s, sum, sh) / A(D);
    const A invstd = A(1) / sqrt_(var + eps);
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      const A wi = w ? static_cast<A>(w[i]) : A(1), bi = b ? static_cast<A>(b[i]) : A(0);
      yr[i] = static_cast<T>((static_cast<A>(xr[i]) - mean) * invstd * wi + bi);
    }
    if (threadIdx.x == 0) {
      mean_out[row] = static_cast<T>(mean);
      var_out[row] = static_cast<T>(var);
    }
  }
}

// grad_x = invstd / n * (n * gk - sum(gk) - xhat * sum(gk * xhat)), gk = grad_y * weight;
// also keeps each row's invstd for the parameter gradients.
template <class T, class A>
__global__ void layer_norm_bwd_rows(const T* gy, const T* x, const T* w, const T* mean, const T* var, T* gx,
                                    A* rstd, int64_t M, int64_t D, A eps) {
  __shared__ Pair<A> sh[kMaxRowThreads];
  const A n = A(D);
  for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
    const T* gr = gy + row * D;
    const T* xr = x + row * D;
    const A m = static_cast<A>(mean[row]), is = A(1) / sqrt_(static_cast<A>(var[row]) + eps);
    Pair<A> s{A(0), A(0)};
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      const A gk = static_cast<A>(gr[i]) * (w ? static_cast<A>(w[i]) : A(1));
      s.u += gk;
      s.v += gk * (static_cast<A>(xr[i]) - m) * is;
    }
    s = block_all_reduce(s, PairSum<A>{}, sh);
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      const A gk = static_cast<A>(gr[i]) * (w ? static_cast<A>(w[i]) : A(1));
      gx[row * D + i] = static_cast<T>(is / n * (n * gk - s.u - (static_cast<A>(xr[i]) - m) * is * s.v));
    }
    if (threadIdx.x == 0) rstd[row] = is;
  }
}

// Column p of the parameter gradients over rows [split * rows, ...): grad_bias
// sums grad_y, grad_weight sums grad_y * xhat. One split writes the result,
// several write partials for layer_norm_param_sum.
template <class T, class A>
__global__ void layer_norm_bwd_params(const T* gy, const T* x, const T* mean, const A* rstd, int64_t M, int64_t D,
                                      int64_t rows, Pair<A>* partial, T* gw, T* gb) {
  __shared__ Pair<A> sh[kTileRows][kTileCols];
  const int tc = threadIdx.x, tr = threadIdx.y;
  const int64_t p = int64_t(blockIdx.x) * kTileCols + tc;
  const int64_t r0 = int64_t(blockIdx.y) * rows, r1 = r0 + rows < M ? r0 + rows : M;
  Pair<A> s{A(0), A(0)};
  if (p < D)
    for (int64_t r = r0 + tr; r < r1; r += kTileRows) {
      const A g = static_cast<A>(gy[r * D + p]);
      s.u += g;
      s.v += g * (static_cast<A>(x[r * D + p]) - static_cast<A>(mean[r])) * rstd[r];
    }
  sh[tr][tc] = s;
  __syncthreads();
  for (int k = kTileRows / 2; k > 0; k >>= 1) {
    if (tr < k) sh[tr][tc] = PairSum<A>{}.combine(sh[tr][tc], sh[tr + k][tc]);
    __syncthreads();
  }
  if (tr != 0 || p >= D) return;
  if (gridDim.y == 1) {
    gw[p] = static_cast<T>(sh[0][tc].v);
    gb[p] = static_cast<T>(sh[0][tc].u);
  } else {
    partial[int64_t(blockIdx.y) * D + p] = sh[0][tc];
  }
}

template <class T, class A>
__global__ void layer_norm_param_sum(const Pair<A>* partial, int64_t splits, int64_t D, T* gw, T* gb) {
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < D; p += int64_t(gridDim.x) * blockDim.x) {
    Pair<A> s{A(0), A(0)};
    for (int64_t k = 0; k < splits; ++k) s = PairSum<A>{}.combine(s, partial[k * D + p]);
    gw[p] = static_cast<T>(s.v);
    gb[p] = static_cast<T>(s.u);
  }
}

template <class F>
void visit_float(oar_dtype_t d, F&& f) {
  switch (d) {
    case OAR_DTYPE_F32: return f.template operator()<float>();
    case OAR_DTYPE_F64: return f.template operator()<double>();
    case OAR_DTYPE_F16: return f.template operator()<kp::half>();
    case OAR_DTYPE_BF16: return f.template operator()<kp::bfloat16>();
    default: sdk::fail(OAR_STATUS_UNSUPPORTED, "layer_norm: floating dtypes only");
  }
}

template <class T>
const T* optional_input(const sdk::KernelArgs& a, int i) {
  return a.has_input(i) ? ptr<const T>(a.input(i)) : nullptr;
}

oar_status_t layer_norm_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& xv = a.input(0);
    const sdk::NormExtents e = sdk::norm_extents(xv, false, a.attr_int("normalized_ndim"));
    const int64_t M = e.channels, D = e.inner;
    if (M == 0) return;
    visit_float(a.output(0).dtype, [&]<class T>() {
      using A = kp::accumulate_t<T>;
      layer_norm_fwd<T, A><<<row_grid(M), row_threads(D), 0, c.stream>>>(
          ptr<const T>(xv), optional_input<T>(a, 1), optional_input<T>(a, 2), ptr<T>(a.output(0)),
          ptr<T>(a.output(1)), ptr<T>(a.output(2)), M, D, A(a.attr_float("eps")));
      c.check_launch("layer_norm");
    });
  });
}

oar_status_t layer_norm_backward_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &gv = a.input(0), &xv = a.input(1), &mv = a.input(3), &vv = a.input(4);
    const sdk::NormExtents e = sdk::norm_extents(xv, false, a.attr_int("normalized_ndim"));
    const int64_t M = e.channels, D = e.inner;
    if (D == 0) return;  // every output is empty
    visit_float(a.output(0).dtype, [&]<class T>() {
      using A = kp::accumulate_t<T>;
      const A eps = A(a.attr_float("eps"));
      T *gx = ptr<T>(a.output(0)), *gw = ptr<T>(a.output(1)), *gb = ptr<T>(a.output(2));
      A* rstd = static_cast<A*>(c.workspace(uint64_t(M) * sizeof(A)));
      if (M > 0) {
        layer_norm_bwd_rows<T, A><<<row_grid(M), row_threads(D), 0, c.stream>>>(
            ptr<const T>(gv), ptr<const T>(xv), optional_input<T>(a, 2), ptr<const T>(mv), ptr<const T>(vv), gx, rstd,
            M, D, eps);
        c.check_launch("layer_norm_backward");
      }
      // Split the rows while the column tiles alone give few blocks, each split keeping >= 64 rows.
      const int64_t col_blocks = (D + kTileCols - 1) / kTileCols;
      int64_t splits = std::min<int64_t>((M + 63) / 64, std::max<int64_t>(1, 1024 / col_blocks));
      splits = std::clamp<int64_t>(splits, 1, 65535);
      const int64_t rows = std::max<int64_t>(1, (M + splits - 1) / splits);
      splits = std::max<int64_t>(1, (M + rows - 1) / rows);
      Pair<A>* partial =
          splits > 1 ? static_cast<Pair<A>*>(c.workspace(uint64_t(splits * D) * sizeof(Pair<A>))) : nullptr;
      if (col_blocks > 0x7fffffff) sdk::fail(OAR_STATUS_UNSUPPORTED, "layer_norm_backward: too many columns");
      layer_norm_bwd_params<T, A><<<dim3(unsigned(col_blocks), unsigned(splits)), dim3(kTileCols, kTileRows), 0,
                                    c.stream>>>(ptr<const T>(gv), ptr<const T>(xv), ptr<const T>(mv), rstd, M, D,
                                                rows, partial, gw, gb);
      if (splits > 1)
        layer_norm_param_sum<T, A><<<gpu::grid_for(D), gpu::kBlock, 0, c.stream>>>(partial, splits, D, gw, gb);
      c.check_launch("layer_norm_backward");
    });
  });
}

}  // namespace

oar_status_t register_layer_norm_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-" OAR_GPU_BACKEND_NAME;
  // Signatures hold the required inputs only: x; grad_y, x, mean, var.
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "layer_norm", {d}, layer_norm_entry, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "layer_norm_backward", {d, d, d, d}, layer_norm_backward_entry, impl))
      return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
