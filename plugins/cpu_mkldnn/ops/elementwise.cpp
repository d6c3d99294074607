// CPU elementwise kernels: every unary/binary functor from
// kernel_primitives/ instantiated over the CPU elementwise primitive, plus
// where, cast and copy. No op semantics are written here.
#include <cstring>
#include <limits>

#include "oar/kp/cpu/elementwise.h"
#include "oar/kp/functors.h"
#include "oar/plugin_sdk/functor_kernels.hpp"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace oar;
using kp::cpu::Operand;

template <class T> Operand<T> operand(const oar_tensor_view& v) {
  return {sdk::data_of<std::remove_const_t<T>>(v), v.strides};
}

// Float parameters of parameterised functors, from the attributes the
// functor names (unary_ops.def).
template <class Op>
Op make_functor(const sdk::KernelArgs& a) {
  Op op;
  if (*Op::p0_attr) op.p0 = a.attr_float(Op::p0_attr);
  if (*Op::p1_attr) op.p1 = a.attr_float(Op::p1_attr);
  return op;
}

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

template <class Op>
oar_status_t unary_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "bool is not supported");
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
  bool tanh_form = false;
  for (int i = 0; i < ctx->num_attrs; ++i)
    if (std::string(ctx->attrs[i].name) == "approximate") tanh_form = std::string(ctx->attrs[i].s) == "tanh";
  return ctx->num_inputs == 1 ? (tanh_form ? unary_kernel<Tanh>(ctx) : unary_kernel<Exact>(ctx))
                              : oar_status_t(OAR_STATUS_INTERNAL);
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
      } else {
        kp::cpu::elementwise<T, T, T>(y.ndim, y.shape, operand<T>(y), op, operand<const T>(x),
                                      operand<const T>(z));
      }
    });
  });
}

template <class Exact, class Tanh>
oar_status_t gelu_backward_kernel(const oar_kernel_context* ctx) {
  bool tanh_form = false;
  for (int i = 0; i < ctx->num_attrs; ++i)
    if (std::string(ctx->attrs[i].name) == "approximate") tanh_form = std::string(ctx->attrs[i].s) == "tanh";
  return tanh_form ? binary_kernel<Tanh>(ctx) : binary_kernel<Exact>(ctx);
}

struct LogicalNot {
  template <class T> bool operator()(T x) const { return !(x != T(0)); }
};

oar_status_t logical_not_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      kp::cpu::elementwise<bool, T>(y.ndim, y.shape, operand<bool>(y), LogicalNot{}, operand<const T>(x));
    });
  });
}

struct Identity {
  template <class T> T operator()(T x) const { return x; }
};

// Float to bool is x != 0; float to integer truncates (NaN/inf give 0, not UB).
template <class Out>
struct CastTo {
  template <class T> Out operator()(T x) const {
    if constexpr (std::is_same_v<Out, bool>) {
      return x != T(0);
    } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<T>) {
      if (!(x == x) || x >= T(9.2e18) || x <= T(-9.2e18)) return Out(0);
      return static_cast<Out>(static_cast<int64_t>(x));
    } else {
      return static_cast<Out>(x);
    }
  }
};

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

struct Select {
  template <class T> T operator()(bool c, T a, T b) const { return c ? a : b; }
};

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

template <size_t N>
oar_status_t register_each(const oar_kernel_registrar* r, const char* op, const oar_dtype_t (&dtypes)[N],
                           int arity, oar_kernel_fn fn) {
  for (oar_dtype_t d : dtypes) {
    oar_status_t st = arity == 1 ? sdk::register_kernel(r, op, {d}, fn, "kp-cpu")
                                 : sdk::register_kernel(r, op, {d, d}, fn, "kp-cpu");
    if (st) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r) {
  using namespace oar::kp;
  const auto& A = sdk::kAllDTypes;
  // Every functor of kernel_primitives/; VARIANT forms are picked by an
  // attribute of one op (gelu) and registered by hand below.
  oar_status_t status = sdk::register_functor_kernels(r, "kp-cpu", []<class Op>() -> oar_kernel_fn {
    if constexpr (Op::arity == 1) return unary_kernel<Op>;
    else return binary_kernel<Op>;
  });
  if (status) return status;
  if (oar_status_t st = register_each(r, "gelu", sdk::kFloatDTypes, 1, gelu_like_kernel<gelu_op, gelu_tanh_op>)) return st;
  if (oar_status_t st = register_each(r, "gelu_backward", sdk::kFloatDTypes, 2,
                                      gelu_backward_kernel<gelu_backward_op, gelu_tanh_backward_op>))
    return st;
  if (oar_status_t st = register_each(r, "logical_not", A, 1, logical_not_kernel)) return st;
  if (oar_status_t st = register_each(r, "cast", A, 1, cast_kernel)) return st;
  if (oar_status_t st = register_each(r, "copy", A, 1, copy_kernel)) return st;
  for (oar_dtype_t d : A)
    if (oar_status_t st = sdk::register_kernel(r, "where", {OAR_DTYPE_BOOL, d, d}, where_kernel, "kp-cpu")) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
