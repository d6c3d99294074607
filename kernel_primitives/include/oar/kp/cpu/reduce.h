// CPU backend of the reduction primitive: reduces a strided input over a set
// of axes into a strided output (kept axes in order). Outputs are split
// across threads; a reduction to few outputs splits the reduced range across
// threads instead and merges partial accumulators with the reducer's combine.
#pragma once

#include <algorithm>
#include <vector>

#include "oar/kp/cpu/isa_clones.h"
#include "oar/kp/cpu/parallel.h"
#include "oar/kp/numeric.h"
#include "oar/kp/reduce_geometry.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace oar::kp::cpu {

using kp::ReduceGeometry;
using kp::make_reduce_geometry;

namespace detail {
// Independent accumulators for a contiguous run (see accumulate).
constexpr int kLanes = 16;

// Whether R's result does not depend on the order elements enter (sum, mean,
// product, min/max): then a contiguous run is spread over kLanes accumulators,
// which the compiler keeps in vector registers, and combined at its end. Not
// arg-reductions, whose first-occurrence rule needs the order.
template <class R>
constexpr bool interleavable() {
  if constexpr (requires { R::kInterleavable; }) return R::kInterleavable;
  else return false;
}

// Elements [0, n) of a contiguous run (n a multiple of kLanes) spread over
// kLanes accumulators kept in vector registers, then combined into acc.
// Compiled per x86-64 level (kp/cpu/isa_clones.h); accumulate calls it only
// for runs of 4 * kLanes or more, where the call through the loader's choice
// costs nothing next to the run.
template <class T, class R>
OAR_KP_CPU_ISA_CLONES typename R::acc_t accumulate_lanes(const T* p, int64_t n, const R& r, typename R::acc_t acc) {
  typename R::acc_t lane[kLanes];
  for (auto& l : lane) l = r.init();
  for (int64_t i = 0; i < n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = r.step(lane[l], static_cast<compute_t<T>>(p[i + l]), 0);
  for (const auto& l : lane) acc = r.combine(acc, l);
  return acc;
}

// Accumulates reduced elements [rb, re) (row-major over reduced dims) into acc.
template <class T, class R>
typename R::acc_t accumulate(const T* base, const ReduceGeometry& g, const R& r, int64_t rb, int64_t re,
                             typename R::acc_t acc) {
  const int nr = int(g.red_shape.size());
  if (nr == 0) return rb < re ? r.step(acc, static_cast<compute_t<T>>(base[0]), 0) : acc;
  const int64_t inner = g.red_shape[nr - 1], inner_stride = g.red_strides[nr - 1];
  int64_t idx = rb;
  while (idx < re) {
    int64_t q = idx / inner, i0 = idx % inner;
    int64_t off = 0;
    for (int d = nr - 2; d >= 0; --d) {
      off += (q % g.red_shape[d]) * g.red_strides[d];
      q /= g.red_shape[d];
    }
    int64_t stop = std::min(inner, i0 + (re - idx));
    const T* p = base + off;
    int64_t i = i0;
    if constexpr (interleavable<R>()) {
      if (inner_stride == 1 && stop - i0 >= 4 * kLanes) {
        const int64_t run = (stop - i0) / kLanes * kLanes;
        acc = accumulate_lanes(p + i0, run, r, acc);
        i += run;
      }
    }
    for (; i < stop; ++i) acc = r.step(acc, static_cast<compute_t<T>>(p[i * inner_stride]), idx + (i - i0));
    idx += stop - i0;
  }
  return acc;
}

inline void kept_offsets(const ReduceGeometry& g, int64_t o, int64_t& in_off, int64_t& out_off);

// Reductions whose reduced dims are all strided while the innermost kept dim
// is contiguous in input and output (x.sum(1) of [N, C, H, W], a sum over the
// batch): kW neighbouring outputs are reduced together, each reduced element
// adding a contiguous run of kW inputs, which vectorises across outputs. Each
// output still takes its elements in order, so results equal the one-output
// loop's. False (nothing done) where the layout or reducer does not fit.
template <class Out, class T, class R>
bool reduce_across_outputs(const T* in, Out* out, const ReduceGeometry& g, const R& r) {
  if constexpr (!interleavable<R>()) {
    return false;
  } else {
    constexpr int64_t kW = 64;
    const size_t nk = g.kept_shape.size(), nr = g.red_shape.size();
    if (nk == 0 || nr == 0 || g.n_out == 0 || g.kept_in_strides[nk - 1] != 1 || g.kept_out_strides[nk - 1] != 1) return false;
    for (int64_t s : g.red_strides)
      if (s == 1) return false;  // a contiguous reduced run: accumulate's lanes serve it
    const int64_t row = g.kept_shape[nk - 1], chunks = (row + kW - 1) / kW;
    const int64_t per_chunk = std::min(row, kW) * std::max<int64_t>(g.n_red, 1);
    parallel_for(g.n_out / row * chunks, std::max<int64_t>(1, kGrainSize / per_chunk), [&](int64_t b, int64_t e) {
      typename R::acc_t acc[kW];
      int64_t index[kReduceMaxDims];
      for (int64_t t = b; t < e; ++t) {
        const int64_t j0 = (t % chunks) * kW, n = std::min(kW, row - j0);
        int64_t io, oo;
        kept_offsets(g, t / chunks * row + j0, io, oo);
        for (int64_t j = 0; j < n; ++j) acc[j] = r.init();
        for (size_t d = 0; d < nr; ++d) index[d] = 0;
        int64_t off = 0;
        for (int64_t k = 0; k < g.n_red; ++k) {
          const T* p = in + io + off;
          for (int64_t j = 0; j < n; ++j) acc[j] = r.step(acc[j], static_cast<compute_t<T>>(p[j]), k);
          for (size_t d = nr; d-- > 0;) {  // odometer over the reduced dims, innermost first
            off += g.red_strides[d];
            if (++index[d] < g.red_shape[d]) break;
            off -= g.red_strides[d] * g.red_shape[d];
            index[d] = 0;
          }
        }
        for (int64_t j = 0; j < n; ++j) out[oo + j] = static_cast<Out>(r.finish(acc[j], g.n_red));
      }
    });
    return true;
  }
}

inline void kept_offsets(const ReduceGeometry& g, int64_t o, int64_t& in_off, int64_t& out_off) {
  in_off = out_off = 0;
  for (int d = int(g.kept_shape.size()) - 1; d >= 0; --d) {
    int64_t i = o % g.kept_shape[d];
    o /= g.kept_shape[d];
    in_off += i * g.kept_in_strides[d];
    out_off += i * g.kept_out_strides[d];
  }
}
}  // namespace detail

template <class Out, class T, class R>
void reduce(const T* in, Out* out, const ReduceGeometry& g, const R& r) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_in_parallel() ? 1 : omp_get_max_threads();
#endif
  const int64_t work = g.n_out * g.n_red;
  if (g.n_out >= threads || work < kGrainSize || threads == 1) {
    if (detail::reduce_across_outputs(in, out, g, r)) return;
    parallel_for(g.n_out, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.n_red, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) {
                     int64_t io, oo;
                     detail::kept_offsets(g, o, io, oo);
                     auto acc = detail::accumulate(in + io, g, r, 0, g.n_red, r.init());
                     out[oo] = static_cast<Out>(r.finish(acc, g.n_red));
                   }
                 });
    return;
  }
  // Few outputs, long reductions: split each reduction across threads.
  for (int64_t o = 0; o < g.n_out; ++o) {
    int64_t io, oo;
    detail::kept_offsets(g, o, io, oo);
    std::vector<typename R::acc_t> partial(threads, r.init());
    parallel_for(g.n_red, kGrainSize, [&](int64_t b, int64_t e) {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      partial[t] = detail::accumulate(in + io, g, r, b, e, r.init());
    });
    auto acc = r.init();
    for (const auto& p : partial) acc = r.combine(acc, p);
    out[oo] = static_cast<Out>(r.finish(acc, g.n_red));
  }
}

}  // namespace oar::kp::cpu
