// CUDA/HIP backend of the reduction primitive: the reducers of kp/reducers.h
// (sum, prod, mean, min/max, arg-min/max, Welford variance) over the shared
// ReduceGeometry. Three shapes of work:
//  - short reductions (n_red <= kThreadReduceMax): one thread per output;
//  - otherwise one block per output: threads stride over the reduced range
//    (read_reduced) and combine in shared memory (block_reduce);
//  - few outputs with long reductions: the range is split over blockIdx.y,
//    partial accumulators go to a workspace and a second kernel combines them.
// Element i of a reduction always enters with its flat reduced index, so
// arg-reductions keep the first index on ties on every backend.
#pragma once

#include <cstdint>

#include "oar/kp/gpu/runtime.h"
#include "oar/kp/numeric.h"
#include "oar/kp/reduce_geometry.h"

namespace oar::kp::gpu {

struct DeviceReduceGeometry {
  int nkept, nred;
  int64_t kept_shape[kReduceMaxDims], kept_in[kReduceMaxDims], kept_out[kReduceMaxDims];
  int64_t red_shape[kReduceMaxDims], red_in[kReduceMaxDims];
  int64_t n_out, n_red;
};

inline DeviceReduceGeometry device_geometry(const ReduceGeometry& g) {
  DeviceReduceGeometry d{};
  d.nkept = int(g.kept_shape.size());
  d.nred = int(g.red_shape.size());
  for (int i = 0; i < d.nkept; ++i) {
    d.kept_shape[i] = g.kept_shape[size_t(i)];
    d.kept_in[i] = g.kept_in_strides[size_t(i)];
    d.kept_out[i] = g.kept_out_strides[size_t(i)];
  }
  for (int i = 0; i < d.nred; ++i) {
    d.red_shape[i] = g.red_shape[size_t(i)];
    d.red_in[i] = g.red_strides[size_t(i)];
  }
  d.n_out = g.n_out;
  d.n_red = g.n_red;
  return d;
}

OAR_GPU_DEVICE_INLINE void kept_offsets(const DeviceReduceGeometry& g, int64_t o, int64_t& in_off,
                                             int64_t& out_off) {
  in_off = out_off = 0;
  for (int d = g.nkept - 1; d >= 0; --d) {
    int64_t i = o % g.kept_shape[d];
    o /= g.kept_shape[d];
    in_off += i * g.kept_in[d];
    out_off += i * g.kept_out[d];
  }
}

OAR_GPU_DEVICE_INLINE int64_t reduced_offset(const DeviceReduceGeometry& g, int64_t r) {
  int64_t off = 0;
  for (int d = g.nred - 1; d >= 0; --d) {
    off += (r % g.red_shape[d]) * g.red_in[d];
    r /= g.red_shape[d];
  }
  return off;
}

// ---- block-level primitives ----

// This thread's accumulation of reduced elements begin + tid, begin + tid + step, ... < end.
template <class T, class R>
OAR_GPU_DEVICE_INLINE typename R::acc_t read_reduced(const T* base, const DeviceReduceGeometry& g, const R& r,
                                                          int64_t begin, int64_t end, int tid, int step) {
  typename R::acc_t acc = r.init();
  for (int64_t i = begin + tid; i < end; i += step)
    acc = r.step(acc, static_cast<compute_t<T>>(base[reduced_offset(g, i)]), i);
  return acc;
}

// Tree-combines one accumulator per thread; thread 0 gets the block's result.
// `shared` holds blockDim.x accumulators.
template <class R>
OAR_GPU_DEVICE_INLINE typename R::acc_t block_reduce(typename R::acc_t acc, const R& r,
                                                          typename R::acc_t* shared) {
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = r.combine(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  return shared[0];
}

// ---- kernels ----

constexpr int64_t kThreadReduceMax = 32;

template <class T, class Out, class R>
OAR_GPU_KERNEL void reduce_thread_kernel(DeviceReduceGeometry g, const T* in, Out* out, R r) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.n_out; o += int64_t(gridDim.x) * blockDim.x) {
    int64_t io, oo;
    kept_offsets(g, o, io, oo);
    typename R::acc_t acc = read_reduced(in + io, g, r, 0, g.n_red, 0, 1);
    out[oo] = static_cast<Out>(r.finish(acc, g.n_red));
  }
}

// blockIdx.x: output; blockIdx.y: split of the reduced range (gridDim.y
// splits). With one split the block writes the result, else its partial.
template <class T, class Out, class R>
OAR_GPU_KERNEL void reduce_block_kernel(DeviceReduceGeometry g, const T* in, Out* out, R r,
                                    typename R::acc_t* partial) {
  using Acc = typename R::acc_t;
  OAR_GPU_DYNAMIC_SHARED(Acc, shared);
  const int64_t o = blockIdx.x;
  const int64_t chunk = (g.n_red + gridDim.y - 1) / gridDim.y;
  const int64_t begin = int64_t(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < g.n_red ? begin + chunk : g.n_red;
  int64_t io, oo;
  kept_offsets(g, o, io, oo);
  Acc acc = block_reduce(read_reduced(in + io, g, r, begin, end, threadIdx.x, blockDim.x), r, shared);
  if (threadIdx.x != 0) return;
  if (gridDim.y == 1) out[oo] = static_cast<Out>(r.finish(acc, g.n_red));
  else partial[o * gridDim.y + blockIdx.y] = acc;
}

template <class Out, class R>
OAR_GPU_KERNEL void reduce_partials_kernel(DeviceReduceGeometry g, const typename R::acc_t* partial, int splits,
                                       Out* out, R r) {
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.n_out; o += int64_t(gridDim.x) * blockDim.x) {
    typename R::acc_t acc = r.init();
    for (int s = 0; s < splits; ++s) acc = r.combine(acc, partial[o * splits + s]);
    int64_t io, oo;
    kept_offsets(g, o, io, oo);
    out[oo] = static_cast<Out>(r.finish(acc, g.n_red));
  }
}

// Reduces `in` into `out` per `geometry` on `stream`. `workspace(bytes)`
// returns stream-ordered scratch memory for the split case.
template <class Out, class T, class R, class Workspace>
Error reduce(Stream stream, const T* in, Out* out, const ReduceGeometry& geometry, const R& r,
             Workspace&& workspace) {
  using Acc = typename R::acc_t;
  if (geometry.n_out == 0) return OAR_GPU(Success);
  DeviceReduceGeometry g = device_geometry(geometry);
  if (g.n_red <= kThreadReduceMax) {
    launch(reduce_thread_kernel<T, Out, R>, grid_for(g.n_out), kBlock, 0, stream, g, in, out, r);
    return OAR_GPU(GetLastError)();
  }
  // Aim for ~2048 blocks in all; split only while each split keeps >= 4 elements per thread.
  int64_t splits = 1;
  if (g.n_out < 2048) {
    int64_t by_parallelism = (2048 + g.n_out - 1) / g.n_out;
    int64_t by_work = g.n_red / (int64_t(kBlock) * 4);
    splits = by_parallelism < by_work ? by_parallelism : by_work;
    if (splits < 1) splits = 1;
    if (splits > 65535) splits = 65535;
  }
  Acc* partial = nullptr;
  if (splits > 1) partial = static_cast<Acc*>(workspace(uint64_t(g.n_out) * uint64_t(splits) * sizeof(Acc)));
  if (g.n_out > 0x7fffffff) return OAR_GPU(ErrorInvalidConfiguration);  // gridDim.x's limit
  dim3 grid(unsigned(g.n_out), unsigned(splits));
  launch(reduce_block_kernel<T, Out, R>, grid, kBlock, kBlock * sizeof(Acc), stream, g, in, out, r, partial);
  if (splits > 1) launch(reduce_partials_kernel<Out, R>, grid_for(g.n_out), kBlock, 0, stream, g, partial, int(splits), out, r);
  return OAR_GPU(GetLastError)();
}

}  // namespace oar::kp::gpu
