// CUDA/HIP kernels for gather, index_select, scatter_add, index_add,
// embedding and embedding_backward, with the CPU plugin's semantics and
// messages. Index values are validated first by the device scan of
// index_check.h (which reports the first bad position, as the CPU does);
// kernels skip an out-of-range value only to stay memory safe. Inputs arrive
// contiguous (the schemas leave strided_inputs off), so layouts are computed
// from shapes as on the CPU, and view offsets are honoured.
//  - gather, index_select and embedding are one kernel moving element bits:
//    the output takes x at its own coordinates with one coordinate replaced
//    by the index value found at those coordinates.
//  - scatter_add, index_add and embedding_backward add atomically
//    (kp/gpu/atomic.cuh): one thread per source element, O(source) work
//    whatever the collisions. Integer results equal the CPU's; floating sums
//    round in arrival order, so they may differ from the CPU's (and between
//    runs) in the last bits when several sources meet one element.
//    embedding_backward accumulates f16/bf16 in a float buffer, as the CPU
//    accumulates in float, and rounds once at the end.
#include <string>
#include <type_traits>
#include <vector>

#include "launch.h"
#include "oar/kp/gpu/atomic.cuh"
#include "oar/kp/gpu/elementwise.cuh"
#include "ops/index_check.h"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

constexpr int kDims = kp::kMaxDims;

template <class F>
void visit_index(oar_dtype_t d, F&& f) {
  if (d == OAR_DTYPE_I64) return f.template operator()<int64_t>();
  if (d == OAR_DTYPE_I32) return f.template operator()<int32_t>();
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "index tensors must be i32 or i64");
}

// Shape and contiguous strides of a view, with a 0-d tensor treated as [1].
struct Dims {
  std::vector<int64_t> shape, strides;
  explicit Dims(const oar_tensor_view& v) : shape(sdk::shape_of(v)) {
    if (shape.empty()) shape = {1};
    strides.assign(shape.size(), 1);
    for (size_t d = shape.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
  }
  int64_t prod(size_t b, size_t e) const {
    int64_t n = 1;
    for (size_t d = b; d < e; ++d) n *= shape[d];
    return n;
  }
};

int64_t dim_of(const sdk::KernelArgs& a, int64_t rank) {
  int64_t d = a.attr_int("dim");
  return d < 0 ? d + rank : d;
}

std::string dim_text(int64_t dim, int64_t size) {
  return "dimension " + std::to_string(dim) + " of size " + std::to_string(size);
}

// ---- gather, index_select, embedding ----

// y (contiguous, `shape`) takes x at y's coordinates with coordinate `dim`
// replaced by the index value at y's coordinates in the index (strides
// `ist`, 0 where one index row serves many y elements).
struct GatherGeom {
  int ndim = 0, dim = 0;
  int64_t bound = 0, n = 0;
  int64_t shape[kDims] = {}, xst[kDims] = {}, ist[kDims] = {};
};

template <class E, class I>
__global__ void gather_kernel(const E* x, const I* idx, E* y, GatherGeom g) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < g.n; r += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = r, xoff = 0, ioff = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t q = rem % g.shape[d];
      rem /= g.shape[d];
      ioff += q * g.ist[d];
      if (d != g.dim) xoff += q * g.xst[d];
    }
    const int64_t v = static_cast<int64_t>(idx[ioff]);
    if (v < 0 || v >= g.bound) continue;
    y[r] = x[xoff + v * g.xst[g.dim]];
  }
}

// Moves bits: one kernel per element width serves every dtype of that width.
template <class I>
void run_gather(const OpContext& c, const char* op, const oar_tensor_view& x, const oar_tensor_view& idx,
                const oar_tensor_view& y, const GatherGeom& g) {
  if (g.n == 0) return;
  auto launch = [&]<class E>() {
    gather_kernel<E, I><<<gpu::grid_for(g.n), gpu::kBlock, 0, c.stream>>>(ptr<const E>(x), ptr<const I>(idx),
                                                                          ptr<E>(y), g);
  };
  switch (sdk::dtype_size(x.dtype)) {
    case 1: launch.template operator()<uint8_t>(); break;
    case 2: launch.template operator()<uint16_t>(); break;
    case 4: launch.template operator()<uint32_t>(); break;
    default: launch.template operator()<uint64_t>(); break;
  }
  c.check_launch(op);
}

oar_status_t gather_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    Dims X(xv), I(iv);
    const size_t dim = size_t(dim_of(a, int64_t(X.shape.size())));
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "gather", iv, X.shape[dim], dim_text(int64_t(dim), X.shape[dim]));
      GatherGeom g;
      g.ndim = int(I.shape.size()), g.dim = int(dim), g.bound = X.shape[dim], g.n = sdk::numel(iv);
      for (size_t d = 0; d < I.shape.size(); ++d) g.shape[d] = I.shape[d], g.xst[d] = X.strides[d], g.ist[d] = I.strides[d];
      run_gather<Ix>(c, "gather", xv, iv, yv, g);
    });
  });
}

oar_status_t index_select_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    Dims X(xv);
    const size_t dim = size_t(dim_of(a, int64_t(X.shape.size())));
    const int64_t N = X.shape[dim], K = sdk::numel(iv);
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "index_select", iv, N, dim_text(int64_t(dim), N));
      GatherGeom g;  // y [outer, K, inner]; the 1-D index varies along dim only
      g.ndim = int(X.shape.size()), g.dim = int(dim), g.bound = N;
      g.n = X.prod(0, dim) * K * X.prod(dim + 1, X.shape.size());
      for (size_t d = 0; d < X.shape.size(); ++d) g.shape[d] = X.shape[d], g.xst[d] = X.strides[d];
      g.shape[dim] = K;
      g.ist[dim] = 1;
      run_gather<Ix>(c, "index_select", xv, iv, yv, g);
    });
  });
}

oar_status_t embedding_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &wv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    const int64_t V = wv.shape[0], D = wv.shape[1], M = sdk::numel(iv);
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "embedding", iv, V, "a weight with " + std::to_string(V) + " rows");
      GatherGeom g;  // y [M, D] = w[idx[m], d]: the index seen as [M, D] with stride 0 over D
      g.ndim = 2, g.dim = 0, g.bound = V, g.n = M * D;
      g.shape[0] = M, g.shape[1] = D;
      g.xst[0] = D, g.xst[1] = 1;
      g.ist[0] = 1, g.ist[1] = 0;
      run_gather<Ix>(c, "embedding", wv, iv, yv, g);
    });
  });
}

// ---- scatter_add, index_add ----

// alpha * b as the CPU rounds it: never fused into the addition that follows.
template <class C>
__device__ __forceinline__ C mul_rn(C a, C b) {
#if defined(__HIPCC__)
#pragma clang fp contract(off)
  return a * b;
#else
  if constexpr (std::is_same_v<C, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#endif
}

// What the CPU's add_scaled adds for alpha * b: the product in the compute
// type for floating T, the 64-bit modular product for integers.
template <class T>
__device__ __forceinline__ gpu::addend_t<T> scaled(gpu::addend_t<T> alpha, T b) {
  if constexpr (kp::is_floating_v<T>) return mul_rn(alpha, static_cast<kp::compute_t<T>>(b));
  else return alpha * static_cast<uint64_t>(static_cast<int64_t>(b));
}

template <class T>
gpu::addend_t<T> addend_alpha(double alpha) {
  if constexpr (kp::is_floating_v<T>) return static_cast<kp::compute_t<T>>(alpha);
  else return static_cast<uint64_t>(static_cast<int64_t>(alpha));
}

// One thread per index element: y at the index's coordinates (coordinate
// `dim` replaced by the index value, x's strides) += src at the same
// coordinates (src's strides).
struct ScatterGeom {
  int ndim = 0, dim = 0;
  int64_t bound = 0, n = 0;
  int64_t ishape[kDims] = {}, yst[kDims] = {}, sst[kDims] = {};
};

template <class T, class I>
__global__ void scatter_add_kernel(const I* idx, const T* src, T* y, ScatterGeom g) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < g.n; r += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = r, yoff = 0, soff = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t q = rem % g.ishape[d];
      rem /= g.ishape[d];
      soff += q * g.sst[d];
      if (d != g.dim) yoff += q * g.yst[d];
    }
    const int64_t v = static_cast<int64_t>(idx[r]);
    if (v < 0 || v >= g.bound) continue;
    gpu::atomic_add(y + yoff + v * g.yst[g.dim], scaled<T>(gpu::addend_t<T>(1), src[soff]));
  }
}

// y [outer, N, inner] += alpha * src [outer, K, inner] rows, row k into row idx[k].
template <class T, class I>
__global__ void index_add_kernel(const I* idx, const T* src, T* y, int64_t outer, int64_t N, int64_t K,
                                 int64_t inner, gpu::addend_t<T> alpha) {
  const int64_t n = outer * K * inner;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = r % inner, t = r / inner, k = t % K, o = t / K;
    const int64_t v = static_cast<int64_t>(idx[k]);
    if (v < 0 || v >= N) continue;
    gpu::atomic_add(y + (o * N + v) * inner + j, scaled<T>(alpha, src[r]));
  }
}

void copy_input(const OpContext& c, const oar_tensor_view& x, const oar_tensor_view& y) {
  const size_t bytes = size_t(sdk::numel(x)) * sdk::dtype_size(x.dtype);
  if (bytes == 0) return;
  const size_t es = sdk::dtype_size(x.dtype);
  check(OAR_GPU(MemcpyAsync)(static_cast<char*>(y.data) + y.offset * int64_t(es),
                             static_cast<const char*>(x.data) + x.offset * int64_t(es), bytes,
                             OAR_GPU(MemcpyDeviceToDevice), c.stream),
        OAR_GPU_BACKEND_NAME "MemcpyAsync(device to device)");
}

oar_status_t scatter_add_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &iv = a.input(1), &sv = a.input(2), &yv = a.output(0);
    Dims X(xv), I(iv), S(sv);
    const size_t dim = size_t(dim_of(a, int64_t(X.shape.size())));
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "scatter_add", iv, X.shape[dim], dim_text(int64_t(dim), X.shape[dim]));
      sdk::visit_dtype(xv.dtype, [&]<class T>() {
        if constexpr (std::is_same_v<T, bool>) {
          sdk::fail(OAR_STATUS_UNSUPPORTED, "scatter_add: bool is not supported");
        } else {
          copy_input(c, xv, yv);
          ScatterGeom g;
          g.ndim = int(I.shape.size()), g.dim = int(dim), g.bound = X.shape[dim], g.n = sdk::numel(iv);
          for (size_t d = 0; d < I.shape.size(); ++d)
            g.ishape[d] = I.shape[d], g.yst[d] = X.strides[d], g.sst[d] = S.strides[d];
          if (g.n == 0) return;
          scatter_add_kernel<T, Ix><<<gpu::grid_for(g.n), gpu::kBlock, 0, c.stream>>>(ptr<const Ix>(iv),
                                                                                     ptr<const T>(sv), ptr<T>(yv), g);
          c.check_launch("scatter_add");
        }
      });
    });
  });
}

oar_status_t index_add_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &iv = a.input(1), &sv = a.input(2), &yv = a.output(0);
    Dims X(xv);
    const size_t dim = size_t(dim_of(a, int64_t(X.shape.size())));
    const int64_t outer = X.prod(0, dim), N = X.shape[dim], inner = X.prod(dim + 1, X.shape.size());
    const int64_t K = sdk::numel(iv);
    const double alpha = a.attr_float("alpha");
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "index_add", iv, N, dim_text(int64_t(dim), N));
      sdk::visit_dtype(xv.dtype, [&]<class T>() {
        if constexpr (std::is_same_v<T, bool>) {
          sdk::fail(OAR_STATUS_UNSUPPORTED, "index_add: bool is not supported");
        } else {
          copy_input(c, xv, yv);
          const int64_t n = outer * K * inner;
          if (n == 0) return;
          index_add_kernel<T, Ix><<<gpu::grid_for(n), gpu::kBlock, 0, c.stream>>>(
              ptr<const Ix>(iv), ptr<const T>(sv), ptr<T>(yv), outer, N, K, inner, addend_alpha<T>(alpha));
          c.check_launch("index_add");
        }
      });
    });
  });
}

// ---- embedding_backward ----

// acc [V, D] += grad rows [M, D] at their indices, padding_idx's row left out.
template <class T, class Acc, class I>
__global__ void embedding_backward_kernel(const T* g, const I* idx, Acc* acc, int64_t M, int64_t V, int64_t D,
                                          int64_t pad) {
  const int64_t n = M * D;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t m = r / D, d = r % D;
    const int64_t v = static_cast<int64_t>(idx[m]);
    if (v == pad || v < 0 || v >= V) continue;
    atomicAdd(acc + v * D + d, static_cast<Acc>(static_cast<kp::compute_t<T>>(g[r])));
  }
}

template <class T>
struct RoundTo {
  template <class A>
  __host__ __device__ T operator()(A v) const {
    return static_cast<T>(v);
  }
};

oar_status_t embedding_backward_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &gv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    const int64_t V = yv.shape[0], D = yv.shape[1], M = sdk::numel(iv);
    const int64_t pad = a.attr_int("padding_idx");
    visit_index(iv.dtype, [&]<class Ix>() {
      check_indices(c, "embedding_backward", iv, V, "num_weights " + std::to_string(V));
      sdk::visit_dtype(gv.dtype, [&]<class T>() {
        if constexpr (!kp::is_floating_v<T>) {
          sdk::fail(OAR_STATUS_UNSUPPORTED, "embedding_backward: floating dtypes only");
        } else {
          using Acc = kp::accumulate_t<T>;
          const int64_t n = V * D;
          if (n == 0) return;
          // f32/f64 accumulate in place; f16/bf16 in a float buffer rounded once at the end.
          constexpr bool in_place = std::is_same_v<T, Acc>;
          Acc* acc = nullptr;
          if constexpr (in_place) acc = ptr<T>(yv);
          else acc = static_cast<Acc*>(c.workspace(uint64_t(n) * sizeof(Acc)));
          check(OAR_GPU(MemsetAsync)(acc, 0, size_t(n) * sizeof(Acc), c.stream), OAR_GPU_BACKEND_NAME "MemsetAsync");
          if (M * D > 0) {
            embedding_backward_kernel<T, Acc, Ix><<<gpu::grid_for(M * D), gpu::kBlock, 0, c.stream>>>(
                ptr<const T>(gv), ptr<const Ix>(iv), acc, M, V, D, pad);
            c.check_launch("embedding_backward");
          }
          if constexpr (!in_place) {
            const int64_t one = 1;
            check(gpu::elementwise<T, Acc>(c.stream, 1, &n, gpu::Operand<T>{ptr<T>(yv), &one}, RoundTo<T>{},
                                           gpu::Operand<const Acc>{acc, &one}),
                  "embedding_backward");
          }
        }
      });
    });
  });
}

}  // namespace

oar_status_t register_indexing_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-" OAR_GPU_BACKEND_NAME;
  for (oar_dtype_t ix : {OAR_DTYPE_I64, OAR_DTYPE_I32}) {
    for (oar_dtype_t d : sdk::kAllDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "gather", {d, ix}, gather_entry, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "index_select", {d, ix}, index_select_entry, impl)) return st;
    }
    for (oar_dtype_t d : sdk::kNumericDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "scatter_add", {d, ix, d}, scatter_add_entry, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "index_add", {d, ix, d}, index_add_entry, impl)) return st;
    }
    for (oar_dtype_t d : sdk::kFloatDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "embedding", {d, ix}, embedding_entry, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "embedding_backward", {d, ix}, embedding_backward_entry, impl))
        return st;
    }
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
