// CUDA softmax / log_softmax and their backward ops along any dim: cuDNN's
// softmax (CUDNN_SOFTMAX_ACCURATE / CUDNN_SOFTMAX_LOG over the channel dim)
// for f32, f64 and f16, plus kernels of this file for every float dtype that
// serve bf16 and what cuDNN's 32-bit descriptors cannot hold. Both see the
// dense input as [outer, D, inner] (cuDNN as NCHW (outer, D, inner, 1)) and
// reduce over D for each of the outer * inner lanes, with the CPU plugin's
// semantics: max-shifted exponentials; backward from the forward output y,
// grad_x = y * (grad_y - sum(grad_y * y)) for softmax and
// grad_x = grad_y - exp(y) * sum(grad_y) for log_softmax.
//
// The kernels take two launch shapes: a block per lane when lanes are rows
// (inner == 1: the D elements are contiguous and reduced in shared memory),
// else a thread per lane looping over D, so neighbouring threads read
// neighbouring elements. Sums accumulate in float (double for f64).
#include <climits>
#include <cmath>
#include <cstdio>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

using namespace nn;

struct Geom {
  int64_t outer = 1, d = 1, inner = 1;
};

Geom geometry(const sdk::KernelArgs& a) {
  sdk::AxisExtents e = sdk::axis_extents(a.input(0), a.attr_int("dim"));
  return {e.outer, e.d, e.inner};
}

// ---- kernels ----

// The CPU's std::max(m, v): a NaN never becomes the maximum (it still poisons the sum).
template <class A>
__device__ inline A max_of(A m, A v) {
  return m < v ? v : m;
}

template <class A, class Op>
__device__ A block_reduce(A v, Op op, A* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  A r = shared[0];
  __syncthreads();  // shared is reused by the next reduction
  return r;
}

struct MaxOp {
  template <class A>
  __device__ A operator()(A a, A b) const {
    return max_of(a, b);
  }
};
struct SumOp {
  template <class A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};

// The elements of a lane are p[j * step], j < d. `first` / `stride`: this
// thread's share of j (the whole lane when one thread runs it); `reduce`
// combines the threads' partials (identity for one thread).
template <class T, bool kLog, bool kBackward, class Reduce>
__device__ void lane(const T* in0, const T* in1, T* out, int64_t d, int64_t step, int64_t first, int64_t stride,
                     const Reduce& reduce) {
  using A = kp::accumulate_t<T>;
  auto at = [&](const T* p, int64_t j) { return A(kp::compute_t<T>(p[j * step])); };
  if (!kBackward) {
    A mx = -A(INFINITY);
    for (int64_t j = first; j < d; j += stride) mx = max_of(mx, at(in0, j));
    mx = reduce(mx, MaxOp{});
    A sum = 0;
    for (int64_t j = first; j < d; j += stride) sum += std::exp(at(in0, j) - mx);
    sum = reduce(sum, SumOp{});
    const A log_sum = std::log(sum);
    for (int64_t j = first; j < d; j += stride) {
      const A v = kLog ? at(in0, j) - mx - log_sum : std::exp(at(in0, j) - mx) / sum;
      out[j * step] = T(kp::compute_t<T>(v));
    }
  } else {  // in0 = grad_y, in1 = y
    A s = 0;
    for (int64_t j = first; j < d; j += stride) s += kLog ? at(in0, j) : at(in0, j) * at(in1, j);
    s = reduce(s, SumOp{});
    for (int64_t j = first; j < d; j += stride) {
      const A v = kLog ? at(in0, j) - std::exp(at(in1, j)) * s : at(in1, j) * (at(in0, j) - s);
      out[j * step] = T(kp::compute_t<T>(v));
    }
  }
}

// inner == 1: a block per row of d contiguous elements.
template <class T, bool kLog, bool kBackward>
__global__ void softmax_rows(Geom g, const T* in0, const T* in1, T* out) {
  using A = kp::accumulate_t<T>;
  __shared__ A shared[gpu::kBlock];
  auto reduce = [&](A v, auto op) { return block_reduce(v, op, shared); };
  for (int64_t row = blockIdx.x; row < g.outer; row += gridDim.x) {
    const int64_t base = row * g.d;
    lane<T, kLog, kBackward>(in0 + base, in1 ? in1 + base : nullptr, out + base, g.d, 1, threadIdx.x, blockDim.x,
                             reduce);
  }
}

// inner > 1: a thread per (outer, inner) lane, stepping by inner.
template <class T, bool kLog, bool kBackward>
__global__ void softmax_lanes(Geom g, const T* in0, const T* in1, T* out) {
  using A = kp::accumulate_t<T>;
  auto alone = [](A v, auto) { return v; };
  const int64_t lanes = g.outer * g.inner;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lanes; l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (l / g.inner) * g.d * g.inner + l % g.inner;
    lane<T, kLog, kBackward>(in0 + base, in1 ? in1 + base : nullptr, out + base, g.d, g.inner, 0, 1, alone);
  }
}

template <bool kLog, bool kBackward>
oar_status_t kernel_softmax(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (sdk::numel(a.output(0)) == 0) return;
    OpContext c(a);
    Geom g = geometry(a);
    DenseOutput out(c, a.output(0));
    visit_float(a.output(0).dtype, [&]<class T>() {
      const T* in0 = dense_input_as<T>(c, a.input(0));
      const T* in1 = kBackward ? dense_input_as<T>(c, a.input(1)) : nullptr;
      if (g.inner == 1) {
        unsigned grid = unsigned(g.outer < 65535LL * 32 ? g.outer : 65535LL * 32);
        softmax_rows<T, kLog, kBackward><<<grid, gpu::kBlock, 0, c.stream>>>(g, in0, in1, out.as<T>());
      } else {
        softmax_lanes<T, kLog, kBackward><<<gpu::grid_for(g.outer * g.inner), gpu::kBlock, 0, c.stream>>>(
            g, in0, in1, out.as<T>());
      }
    });
    c.check_launch(a.context().op_name);
    out.finish();
  });
}

// ---- cuDNN ----

cudnnDataType_t dnn_dtype(oar_dtype_t d) {
  return d == OAR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : d == OAR_DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// cuDNN's descriptors hold int sizes and strides: the whole tensor must fit.
int32_t cudnn_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  const oar_tensor_view& x = ctx->inputs[0];
  int64_t n = sdk::numel(x);
  if (n <= INT_MAX) return 1;
  std::snprintf(reason, size, "%lld elements exceed cuDNN's 32-bit tensor descriptors", (long long)n);
  return 0;
}

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(oar_dtype_t dtype, const Geom& g) {
    check_cudnn(cudnn().CreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    const int D = int(g.d), I = int(g.inner);
    check_cudnn(cudnn().SetTensor4dDescriptorEx(d, dnn_dtype(dtype), int(g.outer), D, I, 1, D * I, I, 1, 1),
                "cudnnSetTensor4dDescriptorEx");
  }
  ~TensorDesc() { cudnn().DestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

template <bool kLog, bool kBackward>
oar_status_t cudnn_softmax(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (sdk::numel(a.output(0)) == 0) return;
    OpContext c(a);
    Geom g = geometry(a);
    const oar_dtype_t dtype = a.output(0).dtype;
    DenseOutput out(c, a.output(0));
    const void* in0 = dense_input(c, a.input(0));
    const void* in1 = kBackward ? dense_input(c, a.input(1)) : nullptr;
    TensorDesc desc(dtype, g);
    cudnnHandle_t h = cudnn_handle(c.device, c.stream);
    const float one = 1.0f, zero = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = dtype == OAR_DTYPE_F64;
    const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one;
    const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero;
    const cudnnSoftmaxAlgorithm_t algo = kLog ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
    if (kBackward)  // in0 = grad_y, in1 = y
      check_cudnn(cudnn().SoftmaxBackward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, alpha, desc.d, in1, desc.d, in0, beta,
                                       desc.d, out.data()),
                  kLog ? "log_softmax_backward: cudnnSoftmaxBackward" : "softmax_backward: cudnnSoftmaxBackward");
    else
      check_cudnn(cudnn().SoftmaxForward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, alpha, desc.d, in0, beta, desc.d,
                                      out.data()),
                  kLog ? "log_softmax: cudnnSoftmaxForward" : "softmax: cudnnSoftmaxForward");
    out.finish();
  });
}

template <bool kLog, bool kBackward>
oar_status_t register_softmax(const oar_kernel_registrar* r, const char* op) {
  // cuDNN's softmax has no bf16; the own kernel below serves it.
  static constexpr oar_dtype_t kCudnnDTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16};
  const int arity = kBackward ? 2 : 1;
  if (auto st = oar::sdk::register_same_dtype(r, op, kCudnnDTypes, arity, cudnn_softmax<kLog, kBackward>, "cudnn", 10,
                                               cudnn_supports))
    return st;
  return oar::sdk::register_same_dtype(r, op, oar::sdk::kFloatDTypes, arity, kernel_softmax<kLog, kBackward>,
                                       "kp-" OAR_GPU_BACKEND_NAME);
}

}  // namespace

oar_status_t register_softmax_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_softmax<false, false>(r, "softmax")) return st;
  if (auto st = register_softmax<false, true>(r, "softmax_backward")) return st;
  if (auto st = register_softmax<true, false>(r, "log_softmax")) return st;
  return register_softmax<true, true>(r, "log_softmax_backward");
}

}  // namespace oar_gpu
