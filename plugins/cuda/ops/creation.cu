// CUDA/HIP kernels for fill, arange and the random ops (uniform, normal,
// bernoulli, dropout), with the CPU plugin's semantics. Random values come
// from the shared counter-based Philox (kp/philox.h), element i from
// (seed, offset + i), and are turned into values with the CPU's double
// arithmetic, so a seed gives the same tensor on every device. The scalings
// (lo + span * u, start + i * step, ...) are done with explicitly rounded
// operations: a fused multiply-add would round once where the CPU rounds
// twice. Outputs (and bernoulli/dropout inputs) are contiguous.
#include <limits>
#include <string>
#include <type_traits>

#include "launch.h"
#include "oar/kp/gpu/elementwise.cuh"
#include "oar/kp/philox.h"
#include "ops/index_check.h"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

// The CPU's conversion of a double result: bool is v != 0, integers
// truncate through int64, 16-bit floats round through float.
template <class T>
__host__ __device__ T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return static_cast<T>(static_cast<kp::compute_t<T>>(v));
}

// a + b * c with the product and the sum rounded separately (never fused).
__device__ __forceinline__ double mul_add_rn(double a, double b, double c) {
#if defined(__HIPCC__)
#pragma clang fp contract(off)
  return a + b * c;
#else
  return __dadd_rn(a, __dmul_rn(b, c));
#endif
}

struct ArangeGen {
  double start, step;
  __device__ double operator()(int64_t i) const { return mul_add_rn(start, double(i), step); }
};

struct UniformGen {
  double low, span;  // span = high - low, as the CPU computes it
  uint64_t seed, offset;
  __device__ double operator()(int64_t i) const { return mul_add_rn(low, span, kp::philox_uniform(seed, offset, i)); }
};

struct NormalGen {
  double mean, std;
  uint64_t seed, offset;
  __device__ double operator()(int64_t i) const { return mul_add_rn(mean, std, kp::philox_normal(seed, offset, i)); }
};

template <class T, class Gen>
__global__ void generate_kernel(T* y, int64_t n, Gen gen) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = from_double<T>(gen(i));
}

// y[i] = gen(i) over the contiguous output 0.
template <class Gen>
void generate(const OpContext& c, const char* op, const oar_tensor_view& y, Gen gen) {
  const int64_t n = sdk::numel(y);
  if (n == 0) return;
  sdk::visit_dtype(y.dtype, [&]<class T>() {
    generate_kernel<T><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(ptr<T>(y), n, gen);
  });
  c.check_launch(op);
}

template <class T>
struct Constant {
  T value;
  __host__ __device__ T operator()() const { return value; }
};

oar_status_t fill_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& y = a.output(0);
    const double v = a.attr_float("value");
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      check(gpu::elementwise<T>(c.stream, y.ndim, y.shape, gpu::Operand<T>{ptr<T>(y), y.strides},
                                Constant<T>{from_double<T>(v)}),
            "fill");
    });
  });
}

oar_status_t arange_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    generate(c, "arange", a.output(0), ArangeGen{a.attr_float("start"), a.attr_float("step")});
  });
}

uint64_t seed_of(const sdk::KernelArgs& a) { return uint64_t(a.attr_int("seed")); }
uint64_t offset_of(const sdk::KernelArgs& a) { return uint64_t(a.attr_int("offset")); }

oar_status_t uniform_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const double lo = a.attr_float("low"), hi = a.attr_float("high");
    generate(c, "uniform", a.output(0), UniformGen{lo, hi - lo, seed_of(a), offset_of(a)});
  });
}

oar_status_t normal_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    generate(c, "normal", a.output(0), NormalGen{a.attr_float("mean"), a.attr_float("std"), seed_of(a), offset_of(a)});
  });
}

// A probability outside [0, 1] (or NaN) lowers *bad to its position; the host
// reports the smallest, as the CPU's sequential check does.
template <class T>
__global__ void bernoulli_kernel(const T* p, T* y, int64_t n, uint64_t seed, uint64_t offset, unsigned long long* bad) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double q = double(kp::compute_t<T>(p[i]));
    if (!(q >= 0 && q <= 1)) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    y[i] = from_double<T>(kp::philox_uniform(seed, offset, i) < q ? 1.0 : 0.0);
  }
}

oar_status_t bernoulli_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &pv = a.input(0), &yv = a.output(0);
    const int64_t n = sdk::numel(pv);
    if (n == 0) return;
    auto* bad = static_cast<unsigned long long*>(c.workspace(sizeof(unsigned long long)));
    check(OAR_GPU(MemsetAsync)(bad, 0xff, sizeof(*bad), c.stream), OAR_GPU_BACKEND_NAME "MemsetAsync");
    sdk::visit_dtype(pv.dtype, [&]<class T>() {
      if constexpr (!kp::is_floating_v<T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bernoulli: floating dtypes only");
      } else {
        bernoulli_kernel<T><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(ptr<const T>(pv), ptr<T>(yv), n, seed_of(a),
                                                                             offset_of(a), bad);
        c.check_launch("bernoulli");
        unsigned long long first = 0;
        copy_to_host(c, &first, bad, sizeof(first));
        if (first == std::numeric_limits<unsigned long long>::max()) return;
        T value{};
        copy_to_host(c, &value, ptr<const T>(pv) + first, sizeof(T));
        sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "bernoulli: probabilities must be in [0, 1], got " +
                                                   std::to_string(double(kp::compute_t<T>(value))));
      }
    });
  });
}

// mask = (u >= p), y = x * mask * scale with the mask read back in its dtype
// (0 or 1 exactly), as the CPU computes it.
template <class T>
__global__ void dropout_kernel(const T* x, T* y, T* mask, int64_t n, double p, double scale, uint64_t seed,
                               uint64_t offset) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const T m = from_double<T>(kp::philox_uniform(seed, offset, i) >= p ? 1.0 : 0.0);
    mask[i] = m;
    y[i] = from_double<T>(double(kp::compute_t<T>(x[i])) * double(kp::compute_t<T>(m)) * scale);
  }
}

oar_status_t dropout_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &yv = a.output(0), &mv = a.output(1);
    const int64_t n = sdk::numel(xv);
    if (n == 0) return;
    const double p = a.attr_float("p");
    const double scale = 1.0 / (1.0 - p);
    sdk::visit_dtype(xv.dtype, [&]<class T>() {
      if constexpr (!kp::is_floating_v<T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "dropout: floating dtypes only");
      } else {
        dropout_kernel<T><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(ptr<const T>(xv), ptr<T>(yv), ptr<T>(mv), n,
                                                                           p, scale, seed_of(a), offset_of(a));
        c.check_launch("dropout");
      }
    });
  });
}

}  // namespace

oar_status_t register_creation_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-" OAR_GPU_BACKEND_NAME;
  const char* philox = "philox-" OAR_GPU_BACKEND_NAME;
  // Creation ops have no tensor inputs: their signature is empty and the
  // output dtype comes from the `dtype` attribute.
  if (oar_status_t st = sdk::register_kernel(r, "fill", {}, fill_kernel, impl)) return st;
  if (oar_status_t st = sdk::register_kernel(r, "arange", {}, arange_kernel, impl)) return st;
  if (oar_status_t st = sdk::register_kernel(r, "uniform", {}, uniform_kernel, philox)) return st;
  if (oar_status_t st = sdk::register_kernel(r, "normal", {}, normal_kernel, philox)) return st;
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "bernoulli", {d}, bernoulli_entry, philox)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "dropout", {d}, dropout_entry, philox)) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
