// GPU reduction kernels: the reducers of kernel_primitives/ over the GPU
// reduce primitive. Floating inputs accumulate in their accumulate_t (float
// for f16/bf16/f32, double for f64) along a tree, which keeps f32 sums within
// the CPU's double-accumulated result to f32 tolerance; integers in int64.
#include <limits>

#include "launch.h"
#include "oar/kp/gpu/reduce.cuh"
#include "oar/kp/reduce_ops.h"
#include "oar/kp/reducers.h"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

constexpr const char* kImpl = "kp-" OAR_GPU_BACKEND_NAME;

using Kind = kp::ReduceKind;

template <class Out, class T, class R>
void run_reduce(const OpContext& c, const char* op, const T* in, const oar_tensor_view& y, const kp::ReduceGeometry& g,
                const R& r) {
  check(kp::gpu::reduce(c.stream, in, ptr<Out>(y), g, r, [&](uint64_t bytes) { return c.workspace(bytes); }), op);
}

template <Kind K>
oar_status_t reduce_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    const char* op = a.context().op_name;
    kp::ReduceGeometry g = kp::reduce_geometry_for(x.ndim, x.shape, x.strides, y.strides, a.attr_ints("dims"),
                                                   a.attr_bool("keepdim"));
    sdk::visit_dtype(x.dtype, [&]<class T>() {
      const T* in = ptr<const T>(x);
      using C = kp::compute_t<T>;
      using Acc = kp::accumulate_t<T>;
      if constexpr (K == Kind::kSum || K == Kind::kProd) {
        using R = std::conditional_t<K == Kind::kSum, kp::SumReducer<Acc>, kp::ProdReducer<Acc>>;
        // The catalog gives floating inputs their own dtype and everything else i64.
        if constexpr (kp::is_floating_v<T>) run_reduce<T>(c, op, in, y, g, R{});
        else run_reduce<int64_t>(c, op, in, y, g, R{});
      } else if constexpr (K == Kind::kMean || K == Kind::kVar) {
        if constexpr (kp::is_floating_v<T>) {
          if constexpr (K == Kind::kMean) {
            run_reduce<T>(c, op, in, y, g, kp::MeanReducer<Acc>{});
          } else {
            kp::VarReducer<Acc> r;
            r.correction = a.attr_int("correction");
            run_reduce<T>(c, op, in, y, g, r);
          }
        } else {
          sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(op) + " needs a floating input");
        }
      } else if constexpr (K == Kind::kMax || K == Kind::kMin) {
        constexpr bool kMax = K == Kind::kMax;
        C identity = kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
        if constexpr (kp::is_floating_v<T>)
          identity = kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
        run_reduce<T>(c, op, in, y, g, kp::MinMaxReducer<C, kMax>{identity});
      } else {
        if constexpr (std::is_same_v<T, bool>) sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(op) + " of bool");
        else run_reduce<int64_t>(c, op, in, y, g, kp::ArgReducer<C, K == Kind::kArgMax>{});
      }
    });
  });
}

}  // namespace

oar_status_t register_reduction_kernels(const oar_kernel_registrar* r) {
  return kp::register_reduction_ops(r, kImpl, []<Kind K>() -> oar_kernel_fn { return reduce_kernel<K>; });
}

}  // namespace oar_gpu
