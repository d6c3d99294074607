// Registration of every op functor of kernel_primitives/ (unary_ops.def,
// binary_ops.def) for the dtypes its kind names, so a plugin supplies only
// how to build a kernel from a functor and never lists the ops.
#pragma once

#include "oar/kp/functors.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::sdk {

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
    else each(kAllDTypes);
  });
  return status;
}

}  // namespace oar::sdk
