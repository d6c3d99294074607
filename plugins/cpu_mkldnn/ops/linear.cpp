// CPU linear (y = x W^T + b) and linear_act (its activation fused: a oneDNN
// post-op, or applied in the loop before the store): oneDNN's matmul with W read transposed in place
// and the bias fused, for f32/bf16; dot-product loops for problems too small
// to pay for a oneDNN launch (empty products included: they are the smallest)
// and for the other float dtypes. The schema hands the kernel contiguous
// inputs, so x is [M, K] row-major and W is [N, K].
#include <cstdio>

#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

struct Sizes {
  int64_t m, k, n;
  bool bias;
  Activation act = kNoActivation;  // linear_act: applied in the same kernel
};

Sizes sizes_of(const oar_kernel_context* ctx) {
  const oar_tensor_view &x = ctx->inputs[0], &w = ctx->inputs[1];
  Sizes s{1, w.shape[1], w.shape[0], ctx->num_inputs > 2 && ctx->inputs[2].data != nullptr};
  for (int i = 0; i + 1 < x.ndim; ++i) s.m *= x.shape[i];
  s.act = activation_of(sdk::KernelArgs(ctx), "linear_act");
  return s;
}

// y[m, n] = b[n] + sum_k x[m, k] w[n, k]: both operands walk k with unit stride.
template <class T, class Acc>
void dot_linear(const sdk::KernelArgs& a, const Sizes& s, T* y) {
  const T* x = sdk::data_of<T>(a.input(0));
  const T* w = sdk::data_of<T>(a.input(1));
  const T* b = s.bias ? sdk::data_of<T>(a.input(2)) : nullptr;
  kp::cpu::parallel_for(s.m, kp::cpu::grain_for_work(s.n * s.k), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T* xr = x + i * s.k;
      for (int64_t j = 0; j < s.n; ++j) {
        const T* wr = w + j * s.k;
        Acc acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < s.k; ++k) acc += Acc(kp::compute_t<T>(xr[k])) * Acc(kp::compute_t<T>(wr[k]));
        if (b) acc += Acc(kp::compute_t<T>(b[j]));
        // The activation sees the value linear would have stored (rounded to T), as unfused.
        if (s.act != kNoActivation) acc = Acc(activate(s.act, double(kp::compute_t<T>(T(kp::compute_t<T>(acc))))));
        y[i * s.n + j] = T(kp::compute_t<T>(acc));
      }
    }
  });
}

template <class Acc>
oar_status_t loop_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [&](const sdk::KernelArgs& a) {
    Sizes s = sizes_of(ctx);
    DenseOutput out(a, 0);
    sdk::visit_float(a.output(0).dtype, [&]<class T>() {
      using A = std::conditional_t<std::is_same_v<Acc, void>, kp::compute_t<T>, Acc>;
      dot_linear<T, A>(a, s, out.as<T>());
    });
    out.finish();
  });
}

// Tiny products (a Linear on one sample) finish before oneDNN has launched.
constexpr int64_t kSmallFlops = 64 * 64 * 64;

int32_t small_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  Sizes s = sizes_of(ctx);
  if (s.m * s.n * s.k <= kSmallFlops) return 1;
  std::snprintf(reason, size, "%lld multiply-adds exceed the small-problem limit %lld",
                (long long)(s.m * s.n * s.k), (long long)kSmallFlops);
  return 0;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

CachedPtr lookup(const Sizes& s, oar_dtype_t dtype) {
  Key key;
  key.add(dtype).add(s.m).add(s.k).add(s.n).add(s.bias).add(int64_t(s.act));
  return cache().get(key, [&](Cached& e) {
    auto dt = dnnl_dtype(dtype);
    dnnl::memory::desc x_md({s.m, s.k}, dt, {s.k, 1});
    dnnl::memory::desc w_md({s.k, s.n}, dt, {1, s.k});  // W [N, K] read as W^T [K, N]
    dnnl::memory::desc y_md({s.m, s.n}, dt, {s.n, 1});
    dnnl::memory::desc b_md({1, s.n}, dt, {s.n, 1});
    auto desc = s.bias ? dnnl::matmul::desc(x_md, w_md, b_md, y_md) : dnnl::matmul::desc(x_md, w_md, y_md);
    e.prim = dnnl::matmul(dnnl::matmul::primitive_desc(desc, activation_attr(s.act), engine()));
    e.mds = {x_md, w_md, y_md, b_md};
  });
}

int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [&](const sdk::KernelArgs& a) -> std::string {
    return lookup(sizes_of(ctx), a.output(0).dtype)->error;
  });
}

oar_status_t dnnl_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [&](const sdk::KernelArgs& a) {
    Sizes s = sizes_of(ctx);
    oar_dtype_t dtype = a.output(0).dtype;
    DenseOutput out(a, 0);
    const Cached& c = require_ok(lookup(s, dtype), "linear");
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, make_memory(c.mds[0], byte_ptr(a.input(0)))},
                                               {DNNL_ARG_WEIGHTS, make_memory(c.mds[1], byte_ptr(a.input(1)))},
                                               {DNNL_ARG_DST, make_memory(c.mds[2], out.data())}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, make_memory(c.mds[3], byte_ptr(a.input(2))));
    execute(c.prim, args);
    out.finish();
  });
}

}  // namespace

oar_status_t register_linear_kernels(const oar_kernel_registrar* r) {
  for (const char* op : {"linear", "linear_act"}) {
    if (auto st = sdk::register_same_dtype(r, op, kRefDTypes, 2, loop_kernel<void>, "small", 20, small_supports))
      return st;
    if (auto st = sdk::register_same_dtype(r, op, kDnnlDTypes, 2, dnnl_kernel, "onednn", 10, dnnl_supports))
      return st;
    if (auto st = sdk::register_same_dtype(r, op, kRefDTypes, 2, loop_kernel<double>, "reference", 0)) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
