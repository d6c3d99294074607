// CPU instantiation of the reductions of kernel_primitives/ (sum, prod,
// mean, var, max, min, argmax, argmin): the reducers over the CPU reduce
// primitive, registered by any plugin whose memory the host can address.
// Floating sums accumulate in double on the CPU for accuracy.
#pragma once

#include <limits>
#include <vector>

#include "oar/kp/cpu/reduce.h"
#include "oar/kp/reduce_ops.h"
#include "oar/kp/reducers.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::kp::cpu {

namespace reduction_detail {

using namespace oar;

// Geometry from the input view, the output view and the `dims`/`keepdim` attrs.
kp::ReduceGeometry geometry(const sdk::KernelArgs& a) {
  const auto& x = a.input(0);
  return kp::reduce_geometry_for(x.ndim, x.shape, x.strides, a.output(0).strides, a.attr_ints("dims"),
                                 a.attr_bool("keepdim"));
}

template <class T> using wide_t = std::conditional_t<kp::is_floating_v<T>, double, int64_t>;

using Kind = kp::ReduceKind;

template <Kind K>
oar_status_t reduce_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    auto g = geometry(a);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      const T* in = sdk::data_of<T>(x);
      using C = kp::compute_t<T>;
      if constexpr (K == Kind::kSum || K == Kind::kProd) {
        using Acc = wide_t<T>;
        sdk::visit_dtype(y.dtype, [&]<class Out>() {
          if constexpr (K == Kind::kSum)
            kp::cpu::reduce(in, sdk::data_of<Out>(y), g, kp::SumReducer<Acc>{});
          else
            kp::cpu::reduce(in, sdk::data_of<Out>(y), g, kp::ProdReducer<Acc>{});
        });
      } else if constexpr (K == Kind::kMean) {
        if constexpr (kp::is_floating_v<T>) kp::cpu::reduce(in, sdk::data_of<T>(y), g, kp::MeanReducer<double>{});
        else sdk::fail(OAR_STATUS_UNSUPPORTED, "mean needs a floating input");
      } else if constexpr (K == Kind::kVar) {
        if constexpr (kp::is_floating_v<T>) {
          kp::VarReducer<double> r;
          r.correction = a.attr_int("correction");
          kp::cpu::reduce(in, sdk::data_of<T>(y), g, r);
        } else {
          sdk::fail(OAR_STATUS_UNSUPPORTED, "var needs a floating input");
        }
      } else if constexpr (K == Kind::kMax || K == Kind::kMin) {
        constexpr bool kMax = K == Kind::kMax;
        C identity = kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
        if constexpr (kp::is_floating_v<T>) identity = kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
        kp::cpu::reduce(in, sdk::data_of<T>(y), g, kp::MinMaxReducer<C, kMax>{identity});
      } else {
        kp::cpu::reduce(in, sdk::data_of<int64_t>(y), g, kp::ArgReducer<C, K == Kind::kArgMax>{});
      }
    });
  });
}

}  // namespace reduction_detail

inline oar_status_t register_reduction_kernels(const oar_kernel_registrar* r, const char* impl) {
  using namespace reduction_detail;
  return kp::register_reduction_ops(r, impl, []<Kind K>() -> oar_kernel_fn { return reduce_kernel<K>; });
}

}  // namespace oar::kp::cpu
