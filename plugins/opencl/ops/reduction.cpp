// OpenCL reduction kernels: the reducers of the kernel primitives over the
// OpenCL reduce primitive (kp/opencl/reduce.h), with the CPU's geometry and
// registrations. Reductions to few outputs use a 64-wide work-group per
// output; many small reductions use one work-item per output.
#include "launch.h"
#include "oar/kp/opencl/reduce.h"
#include "oar/kp/reduce_geometry.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;
using kcl::ReduceKind;

template <ReduceKind K>
oar_status_t reduce_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    if constexpr (K == ReduceKind::kMean || K == ReduceKind::kVar) {
      if (!kcl::type_info(x.dtype).floating)
        sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(K == ReduceKind::kMean ? "mean" : "var") + " needs a floating input");
    }
    OpContext c = op_context(a);
    kp::ReduceGeometry g = kp::reduce_geometry_for(x.ndim, x.shape, x.strides, y.strides, a.attr_ints("dims"),
                                                   a.attr_bool("keepdim"));
    if (g.n_out == 0) return;
    const int kr = kcl::reduce_rank(g.kept_shape.size()), rr = kcl::reduce_rank(g.red_shape.size());
    const int group = g.n_red >= 128 ? 64 : 1;
    std::string key = "reduce:" + std::to_string(int(K)) + ":" + std::to_string(x.dtype) + ">" +
                      std::to_string(y.dtype) + ":" + std::to_string(kr) + "," + std::to_string(rr) + ":" +
                      std::to_string(group);
    cl_kernel k = get_kernel(c.dev, key, [&] {
      return kcl::reduce_source(K, x.dtype, y.dtype, kr, rr, group, c.dev.fp64);
    }, "oar_reduce");
    int64_t correction = K == ReduceKind::kVar ? a.attr_int("correction") : 0;
    Launch(k)
        .view(y)
        .view(x)
        .layout(kcl::pack_reduce_geometry(g.kept_shape, g.kept_in_strides, g.kept_out_strides, g.red_shape,
                                          g.red_strides))
        .scalar<cl_long>(g.n_out)
        .scalar<cl_long>(g.n_red)
        .scalar<cl_long>(correction)
        .run(c.queue, size_t(g.n_out) * size_t(group), size_t(group));
  });
}

}  // namespace

oar_status_t register_reduction_kernels(const oar_kernel_registrar* r) {
  struct Entry {
    const char* op;
    oar_kernel_fn fn;
    int dtypes;  // 0 all, 1 floating, 2 numeric (as the CPU plugin)
  };
  const Entry entries[] = {
      {"sum", reduce_kernel<ReduceKind::kSum>, 0},       {"prod", reduce_kernel<ReduceKind::kProd>, 0},
      {"mean", reduce_kernel<ReduceKind::kMean>, 1},     {"var", reduce_kernel<ReduceKind::kVar>, 1},
      {"max", reduce_kernel<ReduceKind::kMax>, 0},       {"min", reduce_kernel<ReduceKind::kMin>, 0},
      {"argmax", reduce_kernel<ReduceKind::kArgMax>, 2}, {"argmin", reduce_kernel<ReduceKind::kArgMin>, 2},
  };
  for (const auto& e : entries) {
    auto reg = [&](const auto& list) -> oar_status_t {
      for (oar_dtype_t d : list)
        if (oar_status_t st = sdk::register_kernel(r, e.op, {d}, e.fn, "kp-opencl")) return st;
      return OAR_STATUS_OK;
    };
    oar_status_t st = e.dtypes == 0 ? reg(sdk::kAllDTypes) : e.dtypes == 1 ? reg(sdk::kFloatDTypes) : reg(sdk::kNumericDTypes);
    if (st) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
