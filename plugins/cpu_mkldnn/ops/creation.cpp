// CPU kernels for fill, arange and the random ops (uniform, normal,
// bernoulli, dropout). Random values come from the shared counter-based
// Philox in kernel_primitives/, element i from (seed, offset + i).
#include "oar/kp/cpu/parallel.h"
#include "oar/kp/philox.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace oar;

template <class T> T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return static_cast<T>(static_cast<kp::compute_t<T>>(v));
}

// out[i] = gen(i) over a contiguous output, in parallel.
template <class T, class Gen>
void generate(const oar_tensor_view& y, Gen gen) {
  T* out = sdk::data_of<T>(y);
  kp::cpu::parallel_for(sdk::numel(y), kp::cpu::kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = gen(i);
  });
}

oar_status_t fill_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& y = a.output(0);
    double v = a.attr_float("value");
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      T value = from_double<T>(v);
      generate<T>(y, [value](int64_t) { return value; });
    });
  });
}

oar_status_t arange_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& y = a.output(0);
    double start = a.attr_float("start"), step = a.attr_float("step");
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      generate<T>(y, [&](int64_t i) { return from_double<T>(start + double(i) * step); });
    });
  });
}

uint64_t seed_of(const sdk::KernelArgs& a) { return uint64_t(a.attr_int("seed")); }
uint64_t offset_of(const sdk::KernelArgs& a) { return uint64_t(a.attr_int("offset")); }

oar_status_t uniform_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& y = a.output(0);
    double lo = a.attr_float("low"), hi = a.attr_float("high");
    uint64_t seed = seed_of(a), off = offset_of(a);
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      generate<T>(y, [&](int64_t i) { return from_double<T>(lo + (hi - lo) * kp::philox_uniform(seed, off, i)); });
    });
  });
}

oar_status_t normal_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& y = a.output(0);
    double mean = a.attr_float("mean"), std = a.attr_float("std");
    uint64_t seed = seed_of(a), off = offset_of(a);
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      generate<T>(y, [&](int64_t i) { return from_double<T>(mean + std * kp::philox_normal(seed, off, i)); });
    });
  });
}

oar_status_t bernoulli_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& p = a.input(0);
    const auto& y = a.output(0);
    uint64_t seed = seed_of(a), off = offset_of(a);
    sdk::visit_dtype(y.dtype, [&]<class T>() {
      const T* prob = sdk::data_of<T>(p);
      for (int64_t i = 0, n = sdk::numel(p); i < n; ++i) {
        double q = double(kp::compute_t<T>(prob[i]));
        if (!(q >= 0 && q <= 1))
          sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "bernoulli: probabilities must be in [0, 1], got " + std::to_string(q));
      }
      generate<T>(y, [&](int64_t i) {
        return from_double<T>(kp::philox_uniform(seed, off, i) < double(kp::compute_t<T>(prob[i])) ? 1.0 : 0.0);
      });
    });
  });
}

oar_status_t dropout_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    const auto& mask = a.output(1);
    double p = a.attr_float("p");
    double scale = 1.0 / (1.0 - p);
    uint64_t seed = seed_of(a), off = offset_of(a);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      const T* in = sdk::data_of<T>(x);
      generate<T>(mask, [&](int64_t i) { return from_double<T>(kp::philox_uniform(seed, off, i) >= p ? 1.0 : 0.0); });
      const T* m = sdk::data_of<T>(mask);
      generate<T>(y, [&](int64_t i) {
        return from_double<T>(double(kp::compute_t<T>(in[i])) * double(kp::compute_t<T>(m[i])) * scale);
      });
    });
  });
}

}  // namespace

oar_status_t register_creation_kernels(const oar_kernel_registrar* r) {
  // Creation ops have no tensor inputs: their signature is empty and the
  // output dtype comes from the `dtype` attribute.
  if (oar_status_t st = sdk::register_kernel(r, "fill", {}, fill_kernel, "kp-cpu")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "arange", {}, arange_kernel, "kp-cpu")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "uniform", {}, uniform_kernel, "philox-cpu")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "normal", {}, normal_kernel, "philox-cpu")) return st;
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "bernoulli", {d}, bernoulli_kernel, "philox-cpu")) return st;
    if (oar_status_t st = sdk::register_kernel(r, "dropout", {d}, dropout_kernel, "philox-cpu")) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
