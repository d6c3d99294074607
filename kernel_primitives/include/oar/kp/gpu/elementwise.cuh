// CUDA/HIP backend of the elementwise primitive, built from block-level
// pieces in the manner of Paddle's Kernel Primitive API: each thread reads
// `Vec` elements of every input (read_data), applies the functor to them
// (apply), and writes them back (write_data). Contiguous operands take
// vectorised loads when every pointer is aligned for them; any other layout
// (broadcast = stride 0, transposes, negative strides) goes through the
// shared StridedLayout (kp/strided.h) with per-element offsets. The functors
// are the same objects the CPU loop and the OpenCL emitter use.
#pragma once

#include <cstdint>
#include <utility>

#include "oar/kp/gpu/runtime.h"
#include "oar/kp/numeric.h"
#include "oar/kp/strided.h"

namespace oar::kp::gpu {

template <class T> struct Operand {
  T* data;                // already advanced by the view's element offset
  const int64_t* strides; // elements; host memory
};

// A StridedLayout reduced to what device code reads, passed by value as a
// kernel parameter (no device allocation per launch).
template <int N> struct DeviceLayout {
  int ndim;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];
};

template <int N>
DeviceLayout<N> device_layout(const StridedLayout& L) {
  DeviceLayout<N> g{};
  g.ndim = L.ndim;
  for (int d = 0; d < L.ndim; ++d) {
    g.shape[d] = L.shape[d];
    for (int k = 0; k < N; ++k) g.strides[k][d] = L.strides[k][d];
  }
  return g;
}

// Element offsets of linear index i for each operand.
template <int N>
OAR_GPU_DEVICE_INLINE void layout_offsets(const DeviceLayout<N>& g, int64_t i, int64_t (&off)[N]) {
  OAR_GPU_UNROLL
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    int64_t q = i % g.shape[d];
    i /= g.shape[d];
  OAR_GPU_UNROLL
    for (int k = 0; k < N; ++k) off[k] += q * g.strides[k][d];
  }
}

template <class T, int Vec> struct alignas(sizeof(T) * Vec) Pack {
  T v[Vec];
};

// ---- block-level primitives ----

// dst[j] = src[j] for the Vec elements starting at src; `full` selects one
// vector load, otherwise only the first `count` are read.
template <class T, int Vec>
OAR_GPU_DEVICE_INLINE void read_data(T (&dst)[Vec], const T* src, bool full, int count) {
  if (full) {
    Pack<T, Vec> p = *reinterpret_cast<const Pack<T, Vec>*>(src);
  OAR_GPU_UNROLL
    for (int j = 0; j < Vec; ++j) dst[j] = p.v[j];
  } else {
    for (int j = 0; j < count; ++j) dst[j] = src[j];
  }
}

template <class T, int Vec>
OAR_GPU_DEVICE_INLINE void write_data(T* dst, const T (&src)[Vec], bool full, int count) {
  if (full) {
    Pack<T, Vec> p;
  OAR_GPU_UNROLL
    for (int j = 0; j < Vec; ++j) p.v[j] = src[j];
    *reinterpret_cast<Pack<T, Vec>*>(dst) = p;
  } else {
    for (int j = 0; j < count; ++j) dst[j] = src[j];
  }
}

template <class T, int Vec> struct Regs {
  T v[Vec];
};

template <class T, int Vec>
OAR_GPU_DEVICE_INLINE Regs<T, Vec> load(const T* src, bool full, int count) {
  Regs<T, Vec> r{};  // lanes past `count` are computed on but never stored
  read_data<T, Vec>(r.v, src, full, count);
  return r;
}

// y[j] = f(x[j]...) in the inputs' compute types (float for f16/bf16).
template <class Out, int Vec, class F, class... In>
OAR_GPU_DEVICE_INLINE void apply(Regs<Out, Vec>& y, const F& f, const Regs<In, Vec>&... x) {
  OAR_GPU_UNROLL
  for (int j = 0; j < Vec; ++j) y.v[j] = static_cast<Out>(f(static_cast<compute_t<In>>(x.v[j])...));
}

// ---- kernels ----

template <int Vec, class Out, class F, class... In>
OAR_GPU_KERNEL void elementwise_contiguous_kernel(int64_t n, Out* out, F f, const In*... in) {
  const int64_t nvec = (n + Vec - 1) / Vec;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < nvec; v += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = v * Vec;
    const bool full = base + Vec <= n;
    const int count = full ? Vec : int(n - base);
    Regs<Out, Vec> y;
    apply<Out, Vec>(y, f, load<In, Vec>(in + base, full, count)...);
    write_data<Out, Vec>(out + base, y.v, full, count);
  }
}

template <class Out, class F, size_t... K, class... In>
OAR_GPU_DEVICE_INLINE void apply_at(const int64_t* off, Out* out, const F& f, std::index_sequence<K...>,
                                         const In*... in) {
  out[off[0]] = static_cast<Out>(f(static_cast<compute_t<In>>(in[off[K + 1]])...));
}

template <class Out, class F, class... In>
OAR_GPU_KERNEL void elementwise_strided_kernel(DeviceLayout<1 + sizeof...(In)> g, int64_t n, Out* out, F f,
                                           const In*... in) {
  constexpr int N = 1 + sizeof...(In);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[N];
    layout_offsets<N>(g, i, off);
    apply_at(off, out, f, std::index_sequence_for<In...>{}, in...);
  }
}

template <int Vec, class... P>
inline bool aligned_for(const P*... p) {
  return ((reinterpret_cast<uintptr_t>(p) % (sizeof(P) * Vec) == 0) && ...);
}

// out[i] = f(in0[i], in1[i], ...) over `shape` with each operand's strides,
// enqueued on `stream`. Returns the launch error (Success when none).
template <class Out, class... In, class F>
Error elementwise(Stream stream, int ndim, const int64_t* shape, Operand<Out> out, const F& f,
                  Operand<const In>... in) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t* strides[N] = {out.strides, in.strides...};
  StridedLayout L = make_layout(ndim, shape, N, strides);
  if (L.numel == 0) return OAR_GPU(Success);
  bool contiguous = L.ndim <= 1;
  if (L.ndim == 1)
    for (int k = 0; k < N; ++k) contiguous = contiguous && L.strides[k][0] == 1;
  if (contiguous) {
    constexpr int kVec = 4;
    if (L.numel >= kVec && aligned_for<kVec>(out.data, in.data...)) {
      launch(elementwise_contiguous_kernel<kVec, Out, F, In...>, grid_for((L.numel + kVec - 1) / kVec), kBlock, 0,
             stream, L.numel, out.data, f, in.data...);
    } else {
      launch(elementwise_contiguous_kernel<1, Out, F, In...>, grid_for(L.numel), kBlock, 0, stream, L.numel,
             out.data, f, in.data...);
    }
  } else {
    launch(elementwise_strided_kernel<Out, F, In...>, grid_for(L.numel), kBlock, 0, stream, device_layout<N>(L),
           L.numel, out.data, f, in.data...);
  }
  return OAR_GPU(GetLastError)();
}

}  // namespace oar::kp::gpu
