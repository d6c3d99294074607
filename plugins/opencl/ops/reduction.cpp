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
  return kp::register_reduction_ops(r, "kp-opencl", []<ReduceKind K>() -> oar_kernel_fn { return reduce_kernel<K>; });
}

}  // namespace oar_ocl
