// GPU elementwise kernels: every unary/binary functor from kernel_primitives/
// instantiated over the GPU elementwise primitive, plus where, cast, copy and
// logical_not from kp/copy_ops.h. No op semantics are written here.
#include <type_traits>

#include "launch.h"
#include "oar/kp/copy_ops.h"
#include "oar/kp/functors.h"
#include "oar/kp/gpu/elementwise.cuh"
#include "oar/plugin_sdk/functor_kernels.hpp"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;
using kp::gpu::Operand;

constexpr const char* kImpl = "kp-" OAR_GPU_BACKEND_NAME;

template <class T> Operand<T> operand(const oar_tensor_view& v) {
  return {ptr<std::remove_const_t<T>>(v), v.strides};
}

// y = f(inputs...) over the output's shape; a launch error becomes a typed error.
template <class Out, class... In, class F, class... Views>
void map(const OpContext& c, const char* op, const oar_tensor_view& y, const F& f, const Views&... in) {
  check(kp::gpu::elementwise<Out, In...>(c.stream, y.ndim, y.shape, operand<Out>(y), f, operand<const In>(in)...), op);
}

template <class Op>
oar_status_t unary_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& x = a.input(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bool is not supported");
      } else if constexpr (!kp::functor_applies_v<Op::kind, T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs an integer input");
      } else if constexpr (Op::kind == kp::FLOATING || Op::kind == kp::VARIANT) {
        if constexpr (kp::is_floating_v<T>) {
          map<T, T>(c, Op::op_name, a.output(0), sdk::make_functor<Op>(a), x);
        } else {
          sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs a floating input");
        }
      } else {
        Op op = sdk::make_functor<Op>(a);
        sdk::clamp_params_to_type<T>(op.p0, op.p1);
        map<T, T>(c, Op::op_name, a.output(0), op, x);
      }
    });
  });
}

template <class Op>
oar_status_t binary_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& x = a.input(0);
    const auto& z = a.input(1);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      Op op = sdk::make_functor<Op>(a);
      if constexpr (Op::is_compare) {
        map<bool, T, T>(c, Op::op_name, a.output(0), op, x, z);
      } else if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bool is not supported");
      } else if constexpr (!kp::functor_applies_v<Op::kind, T>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs integer inputs");
      } else if constexpr (Op::kind == kp::FLOATING || Op::kind == kp::VARIANT) {
        if constexpr (kp::is_floating_v<T>) map<T, T, T>(c, Op::op_name, a.output(0), op, x, z);
        else sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + " needs floating inputs");
      } else {
        map<T, T, T>(c, Op::op_name, a.output(0), op, x, z);
      }
    });
  });
}

template <class Exact, class Tanh>
oar_status_t gelu_kernel(const oar_kernel_context* ctx) {
  return sdk::gelu_tanh_form(ctx) ? unary_kernel<Tanh>(ctx) : unary_kernel<Exact>(ctx);
}

template <class Exact, class Tanh>
oar_status_t gelu_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::gelu_tanh_form(ctx) ? binary_kernel<Tanh>(ctx) : binary_kernel<Exact>(ctx);
}

oar_status_t logical_not_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    sdk::visit_dtype(a.input(0).dtype,
                     [&]<class T>() { map<bool, T>(c, "logical_not", a.output(0), kp::LogicalNot{}, a.input(0)); });
  });
}

oar_status_t cast_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    sdk::visit_dtype(a.output(0).dtype, [&]<class Out>() {
      sdk::visit_dtype(a.input(0).dtype,
                       [&]<class In>() { map<Out, In>(c, "cast", a.output(0), kp::CastTo<Out>{}, a.input(0)); });
    });
  });
}

oar_status_t copy_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    if (a.input(0).dtype != a.output(0).dtype) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "copy: dtypes differ (use cast)");
    sdk::visit_dtype(a.input(0).dtype,
                     [&]<class T>() { map<T, T>(c, "copy", a.output(0), kp::Identity{}, a.input(0)); });
  });
}

oar_status_t where_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    sdk::visit_dtype(a.input(1).dtype, [&]<class T>() {
      map<T, bool, T, T>(c, "where", a.output(0), kp::Select{}, a.input(0), a.input(1), a.input(2));
    });
  });
}

}  // namespace

oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r) {
  using namespace oar::kp;
  oar_status_t status = sdk::register_functor_kernels(r, kImpl, []<class Op>() -> oar_kernel_fn {
    if constexpr (Op::arity == 1) return unary_kernel<Op>;
    else return binary_kernel<Op>;
  });
  if (status) return status;
  const auto& F = sdk::kFloatDTypes;
  const auto& A = sdk::kAllDTypes;
  if ((status = sdk::register_same_dtype(r, "gelu", F, 1, gelu_kernel<gelu_op, gelu_tanh_op>, kImpl))) return status;
  if ((status = sdk::register_same_dtype(r, "gelu_backward", F, 2,
                                         gelu_backward_kernel<gelu_backward_op, gelu_tanh_backward_op>, kImpl)))
    return status;
  if ((status = sdk::register_same_dtype(r, "logical_not", A, 1, logical_not_kernel, kImpl))) return status;
  if ((status = sdk::register_same_dtype(r, "cast", A, 1, cast_kernel, kImpl))) return status;
  if ((status = sdk::register_same_dtype(r, "copy", A, 1, copy_kernel, kImpl))) return status;
  for (oar_dtype_t d : A)
    if ((status = sdk::register_kernel(r, "where", {OAR_DTYPE_BOOL, d, d}, where_kernel, kImpl))) return status;
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
