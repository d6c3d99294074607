// Registration of every op functor of kernel_primitives/ (unary_ops.def,
// binary_ops.def) for the dtypes its kind names, so a plugin supplies only
// how to build a kernel from a functor and never lists the ops.
#pragma once

#include <algorithm>
#include <limits>
#include <type_traits>

#include "oar/kp/functors.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::sdk {

// A functor with its float parameters filled from the attributes it names
// (p0_attr, p1_attr in unary_ops.def).
template <class Op>
Op make_functor(const KernelArgs& a) {
  Op op;
  if (*Op::p0_attr) op.p0 = a.attr_float(Op::p0_attr);
  if (*Op::p1_attr) op.p1 = a.attr_float(Op::p1_attr);
  return op;
}

// Integer kernels see float parameters (clamp's bounds) clamped to T's range,
// so converting them to T is defined.
template <class T>
void clamp_params_to_type(double& lo, double& hi) {
  if constexpr (std::is_integral_v<T>) {
    double tmin = double(std::numeric_limits<T>::lowest());
    double tmax = double(std::numeric_limits<T>::max());
    if (sizeof(T) == 8) tmax = 9.2e18;  // largest double below 2^63
    lo = std::min(std::max(lo, tmin), tmax);
    hi = std::max(std::min(hi, tmax), tmin);
  }
}

// The `approximate` attribute of gelu and gelu_backward: true for "tanh".
inline bool gelu_tanh_form(const oar_kernel_context* ctx) {
  for (int i = 0; i < ctx->num_attrs; ++i)
    if (std::strcmp(ctx->attrs[i].name, "approximate") == 0) return ctx->attrs[i].s && std::strcmp(ctx->attrs[i].s, "tanh") == 0;
  return false;
}

// kernel_for.template operator()<Op>() returns the oar_kernel_fn for functor
// Op. VARIANT functors (one form of an op picked by an attribute) are skipped:
// the plugin registers their op by hand.
template <class KernelFor>
oar_status_t register_functor_kernels(const oar_kernel_registrar* r, const char* impl_name, KernelFor&& kernel_for) {
  oar_status_t status = OAR_STATUS_OK;
  kp::for_each_functor([&]<class Op>() {
    if (status || Op::kind == kp::VARIANT) return;
    oar_kernel_fn fn = kernel_for.template operator()<Op>();
    auto each = [&](const auto& dtypes) {
      for (oar_dtype_t d : dtypes) {
        status = Op::arity == 1 ? register_kernel(r, Op::op_name, {d}, fn, impl_name)
                                : register_kernel(r, Op::op_name, {d, d}, fn, impl_name);
        if (status) return;
      }
    };
    if (Op::kind == kp::FLOATING) each(kFloatDTypes);
    else if (Op::kind == kp::NUMERIC) each(kNumericDTypes);
    else if (Op::kind == kp::INTEGRAL) each(kIntegralDTypes);
    else each(kAllDTypes);
  });
  return status;
}

}  // namespace oar::sdk
