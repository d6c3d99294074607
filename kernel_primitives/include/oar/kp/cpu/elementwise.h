// CPU backend of the elementwise primitive: applies a functor over operands
// of one shape with arbitrary strides (broadcast = stride 0). Contiguous
// operands take a flat, vectorisable, threaded loop; otherwise the innermost
// coalesced dimension is the vector loop and outer dims are threaded.
#pragma once

#include <algorithm>
#include <tuple>
#include <utility>

#include "oar/kp/cpu/parallel.h"
#include "oar/kp/numeric.h"
#include "oar/kp/strided.h"

namespace oar::kp::cpu {

template <class T> struct Operand {
  T* data;
  const int64_t* strides;
};

namespace detail {

template <class Out, class F, class... In, size_t... K>
void elementwise_impl(int ndim, const int64_t* shape, Operand<Out> out, const F& f,
                      std::index_sequence<K...>, Operand<const In>... in) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t* strides[N] = {out.strides, in.strides...};
  StridedLayout L = make_layout(ndim, shape, N, strides);
  if (L.numel == 0) return;
  Out* o = out.data;
  if (L.ndim == 0) {  // a single element
    o[0] = static_cast<Out>(f(static_cast<compute_t<In>>(in.data[0])...));
    return;
  }
  bool flat = L.strides[0][0] == 1 && L.ndim == 1;
  ((flat = flat && L.strides[K + 1][0] == 1), ...);
  if (flat) {
    parallel_for(L.numel, kGrainSize, [&](int64_t b, int64_t e) {
      Out* __restrict op = o;
#pragma omp simd
      for (int64_t i = b; i < e; ++i)
        op[i] = static_cast<Out>(f(static_cast<compute_t<In>>(in.data[i])...));
    });
    return;
  }
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last];
  const int64_t outer = L.numel / inner;
  parallel_for(outer, std::max<int64_t>(1, kGrainSize / inner), [&](int64_t b, int64_t e) {
    const int64_t os = L.strides[0][last];
    const int64_t is[] = {L.strides[K + 1][last]..., 0};
    RowCursor row(L, b);
    for (int64_t r = b; r < e; ++r, row.next()) {
      Out* op = o + row.offsets[0];
      const std::tuple<const In*...> ip{(in.data + row.offsets[K + 1])...};
      for (int64_t i = 0; i < inner; ++i)
        op[i * os] = static_cast<Out>(f(static_cast<compute_t<In>>(std::get<K>(ip)[i * is[K]])...));
    }
  });
}

}  // namespace detail

// out[i] = f(in0[i], in1[i], ...); f receives compute_t of each input type and
// returns a value convertible to Out.
template <class Out, class... In, class F>
void elementwise(int ndim, const int64_t* shape, Operand<Out> out, const F& f,
                 Operand<const In>... in) {
  detail::elementwise_impl<Out, F, In...>(ndim, shape, out, f,
                                          std::index_sequence_for<In...>{}, in...);
}

}  // namespace oar::kp::cpu
