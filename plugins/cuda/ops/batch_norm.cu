// CUDA batch_norm and batch_norm_backward as kernels of this file, with the
// CPU plugin's semantics (its reference loops): training normalizes with the
// batch statistics (two passes: mean, then the biased variance) and returns
// them as save_mean / save_var; inference uses the running statistics and
// returns them unchanged; running statistics are never updated; absent
// weight / bias act as ones / zeros. cuDNN's batch norm does not fit: it
// returns the inverse standard deviation rather than the variance, updates
// the running variance with the unbiased estimate, and wants f32 scale/bias
// for f16 / bf16 data.
//
// x [N, C, ...] is seen as (outer O = N, channels C, inner S), element
// (o, c, i) at (o * C + c) * S + i. Per-channel sums are split over blocks
// (blockIdx.x = channel, blockIdx.y = a slice of its O * S elements) whose
// partials a second kernel adds in a fixed order, so results do not depend
// on scheduling. Statistics accumulate in double, as the CPU's loops do.
#include <cmath>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/ops.h"
#include "ops/vendor_common.cuh"

namespace oar_gpu {

namespace {

using namespace nn;

struct Geo {
  int64_t O, C, S;
  __host__ __device__ int64_t count() const { return O * S; }
  // Flat index of the channel's k-th element.
  __device__ int64_t at(int64_t c, int64_t k) const { return (k / S * C + c) * S + k % S; }
};

struct Pair {
  double a, b;
};
__device__ inline Pair operator+(Pair x, Pair y) { return {x.a + y.a, x.b + y.b}; }
__device__ inline double zero_of(double*) { return 0.0; }
__device__ inline Pair zero_of(Pair*) { return {0.0, 0.0}; }

// partial[c * gridDim.y + blockIdx.y] = sum over the block's slice of channel c of f(state, flat index).
template <class Acc, class F>
__global__ void channel_partials(Geo g, F f, Acc* partial) {
  extern __shared__ unsigned char smem[];
  Acc* shared = reinterpret_cast<Acc*>(smem);
  const int64_t c = blockIdx.x, n = g.count();
  const int64_t chunk = (n + gridDim.y - 1) / gridDim.y;
  const int64_t begin = int64_t(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  const auto state = f.channel(c);
  Acc acc = zero_of(static_cast<Acc*>(nullptr));
  for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x) acc = acc + f(state, g.at(c, k));
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = shared[threadIdx.x] + shared[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[c * gridDim.y + blockIdx.y] = shared[0];
}

template <class Acc>
__device__ Acc sum_partials(const Acc* partial, int64_t c, int splits) {
  Acc s = zero_of(static_cast<Acc*>(nullptr));
  for (int i = 0; i < splits; ++i) s = s + partial[c * splits + i];
  return s;
}

template <class T>
__device__ inline double param(const T* p, int64_t c, double absent) {
  return p ? double(kp::compute_t<T>(p[c])) : absent;
}

// ---- forward ----

template <class T>
struct SumX {
  const T* x;
  __device__ int channel(int64_t) const { return 0; }
  __device__ double operator()(int, int64_t i) const { return double(kp::compute_t<T>(x[i])); }
};

template <class T>
struct SquaredDeviation {
  const T* x;
  const double* mean;
  __device__ double channel(int64_t c) const { return mean[c]; }
  __device__ double operator()(double m, int64_t i) const {
    const double d = double(kp::compute_t<T>(x[i])) - m;
    return d * d;
  }
};

__global__ void mean_from_partials(Geo g, const double* partial, int splits, double* mean) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < g.C; c += int64_t(gridDim.x) * blockDim.x)
    mean[c] = sum_partials(partial, c, splits) / double(g.count());
}

// Training: variance from the partials; save_mean / save_var in T, invstd for the normalize pass.
template <class T>
__global__ void finish_train_stats(Geo g, const double* partial, int splits, const double* mean, double eps,
                                   double* invstd, T* save_mean, T* save_var) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < g.C; c += int64_t(gridDim.x) * blockDim.x) {
    const double var = sum_partials(partial, c, splits) / double(g.count());
    invstd[c] = 1.0 / sqrt(var + eps);
    save_mean[c] = T(kp::compute_t<T>(mean[c]));
    save_var[c] = T(kp::compute_t<T>(var));
  }
}

// Inference: the running statistics, returned as they are.
template <class T>
__global__ void running_stats(Geo g, const T* rmean, const T* rvar, double eps, double* mean, double* invstd,
                              T* save_mean, T* save_var) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < g.C; c += int64_t(gridDim.x) * blockDim.x) {
    mean[c] = double(kp::compute_t<T>(rmean[c]));
    invstd[c] = 1.0 / sqrt(double(kp::compute_t<T>(rvar[c])) + eps);
    save_mean[c] = rmean[c];
    save_var[c] = rvar[c];
  }
}

template <class T>
__global__ void normalize(Geo g, const T* x, const double* mean, const double* invstd, const T* w, const T* b, T* y) {
  const int64_t n = g.O * g.C * g.S;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / g.S) % g.C;
    const double v = (double(kp::compute_t<T>(x[i])) - mean[c]) * invstd[c] * param(w, c, 1.0) + param(b, c, 0.0);
    y[i] = T(kp::compute_t<T>(v));
  }
}

// ---- backward ----

// Per element: (grad_y, grad_y * xhat), xhat = (x - mean) * invstd.
template <class T>
struct GradSums {
  const T* gy;
  const T* x;
  const T* mean;
  const T* var;
  double eps;
  struct State {
    double m, is;
  };
  __device__ State channel(int64_t c) const {
    return {double(kp::compute_t<T>(mean[c])), 1.0 / sqrt(double(kp::compute_t<T>(var[c])) + eps)};
  }
  __device__ Pair operator()(const State& s, int64_t i) const {
    const double g = double(kp::compute_t<T>(gy[i]));
    return {g, g * (double(kp::compute_t<T>(x[i])) - s.m) * s.is};
  }
};

// grad_weight / grad_bias, and per channel (mean, invstd, s1 = sum g*w, s2 = sum g*w*xhat) for grad_x.
template <class T>
__global__ void finish_grad_stats(Geo g, const Pair* partial, int splits, const T* w, const T* mean, const T* var,
                                  double eps, double* coef, T* gw, T* gb) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < g.C; c += int64_t(gridDim.x) * blockDim.x) {
    const Pair s = sum_partials(partial, c, splits);
    const double wc = param(w, c, 1.0);
    gb[c] = T(kp::compute_t<T>(s.a));
    gw[c] = T(kp::compute_t<T>(s.b));
    coef[4 * c + 0] = double(kp::compute_t<T>(mean[c]));
    coef[4 * c + 1] = 1.0 / sqrt(double(kp::compute_t<T>(var[c])) + eps);
    coef[4 * c + 2] = s.a * wc;
    coef[4 * c + 3] = s.b * wc;
  }
}

// grad_x = invstd / n * (n * g - s1 - xhat * s2), g = grad_y * weight.
template <class T>
__global__ void grad_input(Geo g, const T* gy, const T* x, const T* w, const double* coef, T* gx) {
  const int64_t total = g.O * g.C * g.S;
  const double n = double(g.count());
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / g.S) % g.C;
    const double m = coef[4 * c], is = coef[4 * c + 1], s1 = coef[4 * c + 2], s2 = coef[4 * c + 3];
    const double gk = double(kp::compute_t<T>(gy[i])) * param(w, c, 1.0);
    const double v = is / n * (n * gk - s1 - (double(kp::compute_t<T>(x[i])) - m) * is * s2);
    gx[i] = T(kp::compute_t<T>(v));
  }
}

// ---- launch ----

// Slices per channel: enough blocks to fill the GPU, each with >= 4 elements per thread.
int splits_for(const Geo& g) {
  const int64_t target_blocks = 2048;
  int64_t by_work = g.count() / (int64_t(gpu::kBlock) * 4);
  int64_t by_parallelism = (target_blocks + g.C - 1) / g.C;
  int64_t s = by_work < by_parallelism ? by_work : by_parallelism;
  if (s < 1) s = 1;
  if (s > 1024) s = 1024;
  return int(s);
}

template <class Acc, class F>
void launch_partials(const OpContext& c, const Geo& g, int splits, const F& f, Acc* partial) {
  if (g.C > 0x7fffffff) sdk::fail(OAR_STATUS_UNSUPPORTED, "batch_norm: more channels than a grid holds");
  dim3 grid(unsigned(g.C), unsigned(splits));
  channel_partials<Acc, F><<<grid, gpu::kBlock, gpu::kBlock * sizeof(Acc), c.stream>>>(g, f, partial);
}

template <class T>
const T* optional_input(const OpContext& c, const sdk::KernelArgs& a, int i) {
  return a.has_input(i) ? dense_input_as<T>(c, a.input(i)) : nullptr;
}

bool all_outputs_empty(const sdk::KernelArgs& a) {
  for (int i = 0; i < 3; ++i)
    if (sdk::numel(a.output(i)) != 0) return false;
  return true;
}

oar_status_t batch_norm_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (all_outputs_empty(a)) return;
    OpContext c(a);
    const oar_tensor_view& xv = a.input(0);
    sdk::NormExtents e = sdk::norm_extents(xv, true, 0);
    const Geo g{e.outer, e.channels, e.inner};
    const bool training = a.attr_bool("training");
    const double eps = a.attr_float("eps");
    DenseOutput y(c, a.output(0)), save_mean(c, a.output(1)), save_var(c, a.output(2));
    double* stats = static_cast<double*>(c.workspace(uint64_t(2 * g.C) * sizeof(double)));
    double *mean = stats, *invstd = stats + g.C;
    const unsigned per_channel_grid = gpu::grid_for(g.C);
    visit_float(xv.dtype, [&]<class T>() {
      const T* x = dense_input_as<T>(c, xv);
      const T* w = optional_input<T>(c, a, 1);
      const T* b = optional_input<T>(c, a, 2);
      if (training) {
        const int splits = splits_for(g);
        double* partial = static_cast<double*>(c.workspace(uint64_t(g.C) * uint64_t(splits) * sizeof(double)));
        launch_partials(c, g, splits, SumX<T>{x}, partial);
        mean_from_partials<<<per_channel_grid, gpu::kBlock, 0, c.stream>>>(g, partial, splits, mean);
        launch_partials(c, g, splits, SquaredDeviation<T>{x, mean}, partial);
        finish_train_stats<T><<<per_channel_grid, gpu::kBlock, 0, c.stream>>>(
            g, partial, splits, mean, eps, invstd, save_mean.as<T>(), save_var.as<T>());
      } else {
        const T* rmean = dense_input_as<T>(c, a.input(3));
        const T* rvar = dense_input_as<T>(c, a.input(4));
        running_stats<T><<<per_channel_grid, gpu::kBlock, 0, c.stream>>>(g, rmean, rvar, eps, mean, invstd,
                                                                         save_mean.as<T>(), save_var.as<T>());
      }
      const int64_t n = g.O * g.C * g.S;
      if (n > 0) normalize<T><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(g, x, mean, invstd, w, b, y.as<T>());
    });
    c.check_launch("batch_norm");
    y.finish(), save_mean.finish(), save_var.finish();
  });
}

oar_status_t batch_norm_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (all_outputs_empty(a)) return;
    OpContext c(a);
    const oar_tensor_view& xv = a.input(1);
    sdk::NormExtents e = sdk::norm_extents(xv, true, 0);
    const Geo g{e.outer, e.channels, e.inner};
    const double eps = a.attr_float("eps");
    DenseOutput gx(c, a.output(0)), gw(c, a.output(1)), gb(c, a.output(2));
    visit_float(xv.dtype, [&]<class T>() {
      const T* gy = dense_input_as<T>(c, a.input(0));
      const T* x = dense_input_as<T>(c, xv);
      const T* w = optional_input<T>(c, a, 2);
      const T* mean = dense_input_as<T>(c, a.input(3));
      const T* var = dense_input_as<T>(c, a.input(4));
      const int splits = splits_for(g);
      Pair* partial = static_cast<Pair*>(c.workspace(uint64_t(g.C) * uint64_t(splits) * sizeof(Pair)));
      double* coef = static_cast<double*>(c.workspace(uint64_t(4 * g.C) * sizeof(double)));
      launch_partials(c, g, splits, GradSums<T>{gy, x, mean, var, eps}, partial);
      finish_grad_stats<T><<<gpu::grid_for(g.C), gpu::kBlock, 0, c.stream>>>(g, partial, splits, w, mean, var, eps,
                                                                              coef, gw.as<T>(), gb.as<T>());
      const int64_t n = g.O * g.C * g.S;
      if (n > 0) grad_input<T><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(g, gy, x, w, coef, gx.as<T>());
    });
    c.check_launch("batch_norm_backward");
    gx.finish(), gw.finish(), gb.finish();
  });
}

}  // namespace

oar_status_t register_batch_norm_kernels(const oar_kernel_registrar* r) {
  // Signatures hold the required inputs only (optional ones are not part of the key).
  auto reg = [r](const char* op, int arity, oar_kernel_fn fn) {
    return oar::sdk::register_same_dtype(r, op, oar::sdk::kFloatDTypes, arity, fn, "kp-" OAR_GPU_BACKEND_NAME);
  };
  if (auto st = reg("batch_norm", 1, batch_norm_kernel)) return st;
  return reg("batch_norm_backward", 4, batch_norm_backward_kernel);
}

}  // namespace oar_gpu
