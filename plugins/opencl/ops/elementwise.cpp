// OpenCL elementwise kernels: every functor of kernel_primitives/ emitted as
// OpenCL C from its own expression text (kp::opencl::functor_spec), plus
// where, cast, copy and logical_not. No op semantics are written here.
#include <cmath>
#include <cstring>
#include <limits>

#include "launch.h"
#include "oar/kp/functors.h"
#include "oar/plugin_sdk/functor_kernels.hpp"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

// A strided layout over the output and the inputs (views of one shape).
kp::StridedLayout layout_of(const sdk::KernelArgs& a, int ninputs) {
  const auto& y = a.output(0);
  const int64_t* strides[kp::kMaxOperands];
  strides[0] = y.strides;
  for (int k = 0; k < ninputs; ++k) strides[k + 1] = a.input(k).strides;
  return kp::make_layout(y.ndim, y.shape, 1 + ninputs, strides);
}

// Runs an emitted elementwise kernel over output 0 and the first `ninputs` inputs.
void run_elementwise(const sdk::KernelArgs& a, int ninputs, const std::string& key,
                     const std::function<kcl::ElementwiseSpec(int rank)>& make_spec, const Scalar* params = nullptr,
                     int nparams = 0) {
  OpContext c = op_context(a);
  kp::StridedLayout L = layout_of(a, ninputs);
  if (L.numel == 0) return;
  int rank = kcl::source_rank(L);
  cl_kernel k = get_kernel(c.dev, key + "/r" + std::to_string(rank),
                           [&] { return kcl::elementwise_source(make_spec(rank), c.dev.fp64); }, "oar_ew");
  Launch l(k);
  l.view(a.output(0));
  for (int i = 0; i < ninputs; ++i) l.view(a.input(i));
  for (int i = 0; i < nparams; ++i) l.raw(params[i].bytes, params[i].size);
  l.layout(kcl::pack_layout(L)).scalar<cl_long>(L.numel).run(c.queue, size_t(L.numel));
}

template <class Op>
oar_status_t functor_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    oar_dtype_t dt = a.input(0).dtype;
    if (dt == OAR_DTYPE_BOOL && !Op::is_compare) sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(Op::op_name) + ": bool is not supported");
    double p0 = *Op::p0_attr ? a.attr_float(Op::p0_attr) : 0.0;
    double p1 = *Op::p1_attr ? a.attr_float(Op::p1_attr) : 0.0;
    Scalar params[2] = {compute_scalar(dt, p0), compute_scalar(dt, p1)};
    run_elementwise(a, Op::arity, std::string("functor:") + Op::op_name + ":" + std::to_string(dt),
                    [&](int rank) { return kcl::functor_spec<Op>("oar_ew", dt, rank); }, params, 2);
  });
}

// gelu and its backward pick the functor from the `approximate` attribute.
template <class Exact, class Tanh>
oar_status_t variant_kernel(const oar_kernel_context* ctx) {
  return sdk::gelu_tanh_form(ctx) ? functor_kernel<Tanh>(ctx) : functor_kernel<Exact>(ctx);
}

oar_status_t logical_not_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    oar_dtype_t dt = a.input(0).dtype;
    run_elementwise(a, 1, "logical_not:" + std::to_string(dt), [&](int rank) {
      kcl::ElementwiseSpec s{"oar_ew", OAR_DTYPE_BOOL, {dt}, {"x"}, {}, "", "(x != (X0_c)0) ? 0 : 1", rank};
      return s;
    });
  });
}

// The CPU's cast rules: to bool is x != 0; float to integer truncates, NaN and
// out-of-range give 0.
oar_status_t cast_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    oar_dtype_t from = a.input(0).dtype, to = a.output(0).dtype;
    run_elementwise(a, 1, "cast:" + std::to_string(from) + ">" + std::to_string(to), [&](int rank) {
      std::string expr = "(Y_c)(x)";
      if (to == OAR_DTYPE_BOOL) expr = "(x != (X0_c)0) ? 1 : 0";
      else if (!kcl::type_info(to).floating && kcl::type_info(from).floating) expr = kcl::float_to_int_expr("x", "Y_c");
      kcl::ElementwiseSpec s{"oar_ew", to, {from}, {"x"}, {}, "", expr, rank};
      return s;
    });
  });
}

// A strided copy moves storage bits untouched. f16 is moved as its 16 bits
// (bf16's ushort storage) because a half value cannot be loaded without cl_khr_fp16.
oar_status_t copy_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    oar_dtype_t dt = a.input(0).dtype;
    if (dt != a.output(0).dtype) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "copy: dtypes differ (use cast)");
    if (dt == OAR_DTYPE_F16) dt = OAR_DTYPE_BF16;
    run_elementwise(a, 1, "copy:" + std::to_string(dt), [&](int rank) {
      kcl::ElementwiseSpec s{"oar_ew", dt, {dt}, {"x"}, {}, "", "x", rank};
      s.raw = true;
      return s;
    });
  });
}

oar_status_t where_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    oar_dtype_t dt = a.input(1).dtype;
    if (dt == OAR_DTYPE_F16) dt = OAR_DTYPE_BF16;  // selection moves bits (see copy)
    run_elementwise(a, 3, "where:" + std::to_string(dt), [&](int rank) {
      kcl::ElementwiseSpec s{"oar_ew", dt, {OAR_DTYPE_BOOL, dt, dt}, {"c", "u", "v"}, {}, "", "c ? u : v", rank};
      s.raw = true;
      return s;
    });
  });
}

template <size_t N>
oar_status_t register_each(const oar_kernel_registrar* r, const char* op, const oar_dtype_t (&dtypes)[N], int arity,
                           oar_kernel_fn fn) {
  for (oar_dtype_t d : dtypes) {
    oar_status_t st = arity == 1 ? sdk::register_kernel(r, op, {d}, fn, "kp-opencl")
                                 : sdk::register_kernel(r, op, {d, d}, fn, "kp-opencl");
    if (st) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r) {
  using namespace oar::kp;
  const auto& A = sdk::kAllDTypes;
  oar_status_t status =
      sdk::register_functor_kernels(r, "kp-opencl", []<class Op>() -> oar_kernel_fn { return functor_kernel<Op>; });
  if (status) return status;
  if (oar_status_t st = register_each(r, "gelu", sdk::kFloatDTypes, 1, variant_kernel<gelu_op, gelu_tanh_op>)) return st;
  if (oar_status_t st = register_each(r, "gelu_backward", sdk::kFloatDTypes, 2,
                                      variant_kernel<gelu_backward_op, gelu_tanh_backward_op>))
    return st;
  if (oar_status_t st = register_each(r, "logical_not", A, 1, logical_not_kernel)) return st;
  if (oar_status_t st = register_each(r, "cast", A, 1, cast_kernel)) return st;
  if (oar_status_t st = register_each(r, "copy", A, 1, copy_kernel)) return st;
  for (oar_dtype_t d : A)
    if (oar_status_t st = sdk::register_kernel(r, "where", {OAR_DTYPE_BOOL, d, d}, where_kernel, "kp-opencl")) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
