// CPU instantiation of every elementwise op of kernel_primitives/: each
// unary/binary functor (unary_ops.def, binary_ops.def) over the CPU
// elementwise primitive, plus where, cast, copy and logical_not. Any plugin
// whose memory the host can address (the CPU plugin, a host-memory bring-up
// plugin) registers them with one call; no op semantics are written here.
#pragma once

#include <cstring>
#include <limits>

#include "oar/kp/copy_ops.h"
#include "oar/kp/cpu/elementwise.h"
#include "oar/kp/functors.h"
#include "oar/plugin_sdk/functor_kernels.hpp"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::kp::cpu {

namespace elementwise_detail {

using namespace oar;
using kp::CastTo;
using kp::Identity;
using kp::LogicalNot;
using kp::Select;
using sdk::clamp_params_to_type;
using sdk::make_functor;

template <class T> Operand<T> operand(const oar_tensor_view& v) {
  return {sdk::data_of<std::remove_const_t<T>>(v), v.strides};
}

template <class Op>
oar_status_t unary_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bool is not supported");
      } else if constexpr (!kp::functor_applies_v<Op::kind, T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs an integer input");
      } else {
        Op op = make_functor<Op>(a);
        clamp_params_to_type<T>(op.p0, op.p1);
        kp::cpu::elementwise<T, T>(y.ndim, y.shape, operand<T>(y), op, operand<const T>(x));
      }
    });
  });
}

// gelu picks its functor from the `approximate` attribute.
template <class Exact, class Tanh>
oar_status_t gelu_like_kernel(const oar_kernel_context* ctx) {
  return sdk::gelu_tanh_form(ctx) ? unary_kernel<Tanh>(ctx) : unary_kernel<Exact>(ctx);
}

template <class Op>
oar_status_t binary_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& z = a.input(1);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      Op op = make_functor<Op>(a);
      if constexpr (Op::is_compare) {
        kp::cpu::elementwise<bool, T, T>(y.ndim, y.shape, operand<bool>(y), op, operand<const T>(x),
                                         operand<const T>(z));
      } else if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bool is not supported");
      } else if constexpr (!kp::functor_applies_v<Op::kind, T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs integer inputs");
      } else {
        kp::cpu::elementwise<T, T, T>(y.ndim, y.shape, operand<T>(y), op, operand<const T>(x),
                                      operand<const T>(z));
      }
    });
  });
}

template <class Exact, class Tanh>
oar_status_t gelu_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::gelu_tanh_form(ctx) ? binary_kernel<Tanh>(ctx) : binary_kernel<Exact>(ctx);
}

oar_status_t logical_not_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      kp::cpu::elementwise<bool, T>(y.ndim, y.shape, operand<bool>(y), LogicalNot{}, operand<const T>(x));
    });
  });
}

oar_status_t cast_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    sdk::visit_dtype(y.dtype, [&]<class Out>() {
      sdk::visit_dtype(x.dtype, [&]<class In>() {
        kp::cpu::elementwise<Out, In>(y.ndim, y.shape, operand<Out>(y), CastTo<Out>{}, operand<const In>(x));
      });
    });
  });
}

oar_status_t copy_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    if (x.dtype != y.dtype) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "copy: dtypes differ (use cast)");
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      kp::cpu::elementwise<T, T>(y.ndim, y.shape, operand<T>(y), Identity{}, operand<const T>(x));
    });
  });
}

oar_status_t where_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& c = a.input(0);
    const auto& x = a.input(1);
    const auto& z = a.input(2);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      kp::cpu::elementwise<T, bool, T, T>(y.ndim, y.shape, operand<T>(y), Select{}, operand<const bool>(c),
                                          operand<const T>(x), operand<const T>(z));
    });
  });
}

}  // namespace elementwise_detail

inline oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r, const char* impl) {
  using namespace elementwise_detail;
  const auto& A = sdk::kAllDTypes;
  // Every functor of kernel_primitives/; VARIANT forms are picked by an
  // attribute of one op (gelu) and registered by hand below.
  oar_status_t status = sdk::register_functor_kernels(r, impl, []<class Op>() -> oar_kernel_fn {
    if constexpr (Op::arity == 1) return unary_kernel<Op>;
    else return binary_kernel<Op>;
  });
  if (status) return status;
  if (oar_status_t st = sdk::register_same_dtype(r, "gelu", sdk::kFloatDTypes, 1, gelu_like_kernel<gelu_op, gelu_tanh_op>, impl)) return st;
  if (oar_status_t st = sdk::register_same_dtype(r, "gelu_backward", sdk::kFloatDTypes, 2,
                                                 gelu_backward_kernel<gelu_backward_op, gelu_tanh_backward_op>, impl))
    return st;
  if (oar_status_t st = sdk::register_same_dtype(r, "logical_not", A, 1, logical_not_kernel, impl)) return st;
  if (oar_status_t st = sdk::register_same_dtype(r, "cast", A, 1, cast_kernel, impl)) return st;
  if (oar_status_t st = sdk::register_same_dtype(r, "copy", A, 1, copy_kernel, impl)) return st;
  for (oar_dtype_t d : A)
    if (oar_status_t st = sdk::register_kernel(r, "where", {OAR_DTYPE_BOOL, d, d}, where_kernel, impl)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar::kp::cpu
