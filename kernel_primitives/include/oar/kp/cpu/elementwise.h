// CPU backend of the elementwise primitive: applies a functor over operands
// of one shape with arbitrary strides (broadcast = stride 0). Contiguous
// operands take a flat, vectorisable, threaded loop; otherwise the innermost
// coalesced dimension is cut into blocks (threaded over rows and blocks), and
// operands not contiguous along it are staged so each block is the same
// vectorisable loop.
#pragma once

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "oar/kp/cpu/isa_clones.h"
#include "oar/kp/cpu/parallel.h"
#include "oar/kp/cpu/vector_math.h"
#include "oar/kp/numeric.h"
#include "oar/kp/strided.h"

namespace oar::kp::cpu {

template <class T> struct Operand {
  T* data;
  const int64_t* strides;
};

namespace detail {

// Entries a strided loop handles per step (see elementwise_impl).
constexpr int64_t kBlock = 256;
// Alignment of the flat loop's thread chunks: a multiple of every vector width.
constexpr int64_t kAlign = 64;
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// n entries from `p` with stride `stride`: p itself when they are contiguous,
// else a copy in `buffer` (one value repeated for stride 0).
template <class T>
const T* contiguous_run(const T* p, int64_t stride, int64_t n, T* buffer) {
  if (stride == 1) return p;
  if (stride == 0) {
    const T v = p[0];
    for (int64_t i = 0; i < n; ++i) buffer[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) buffer[i] = p[i * stride];
  }
  return buffer;
}

// o[i] = f(in[i]...) over n contiguous entries: the one vectorised loop both
// paths below run. `o` may be an input itself, index for index (in place).
template <class Out, class F, class... In>
inline void map_run(Out* __restrict o, int64_t n, F fn, const In*... in) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(fn(static_cast<compute_t<In>>(in[i])...));
}

// map_run compiled per x86-64 level (kp/cpu/isa_clones.h). A call through
// the loader's choice costs a few nanoseconds, so runs shorter than
// kClonedRun (rows of 3 in a strided tensor) take map_run inline instead.
constexpr int64_t kClonedRun = 64;
template <class Out, class F, class... In>
OAR_KP_CPU_ISA_CLONES void map_contiguous(Out* __restrict o, int64_t n, F fn, const In*... in) {
  map_run<Out, F, In...>(o, n, fn, in...);
}

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
      // Chunks start at multiples of kAlign, so an element is computed by the
      // vector or the scalar form of a math function (which may differ in the
      // last bit) whatever the thread count: the scalar tail is the tensor's end.
      b = std::min(round_up(b, kAlign), L.numel);
      e = std::min(round_up(e, kAlign), L.numel);
      // f by value: its parameters (clamp's bounds) stay in registers, the ?: if-converts
      if (b < e) map_contiguous<Out, F, In...>(o + b, e - b, f, (in.data + b)...);
    });
    return;
  }
  // Strided: rows of the innermost dim, cut into blocks of kBlock entries so
  // that one long broadcast row (x * scalar, a [1, C, 1, 1] factor) is
  // threaded too. An operand that is not contiguous along the row (stride 0:
  // broadcast; other strides) is first copied into a block buffer, so the
  // computation itself is always the vectorised contiguous loop.
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last];
  const int64_t outer = L.numel / inner;
  const int64_t blocks_per_row = (inner + kBlock - 1) / kBlock;
  const int64_t per_block = std::min(inner, kBlock);
  parallel_for(outer * blocks_per_row, std::max<int64_t>(1, kGrainSize / per_block), [&](int64_t b, int64_t e) {
    const int64_t os = L.strides[0][last];
    const int64_t is[] = {L.strides[K + 1][last]..., 0};
    std::tuple<std::array<In, kBlock>...> staged;
    std::array<Out, kBlock> out_staged;
    int64_t block = b % blocks_per_row;
    RowCursor row(L, b / blocks_per_row);
    for (int64_t t = b; t < e; ++t) {
      const int64_t i0 = block * kBlock, n = std::min(kBlock, inner - i0);
      const std::tuple<const In*...> ip{
          contiguous_run(in.data + row.offsets[K + 1] + i0 * is[K], is[K], n, std::get<K>(staged).data())...};
      Out* op = os == 1 ? o + row.offsets[0] + i0 : out_staged.data();
      if (n >= kClonedRun) map_contiguous<Out, F, In...>(op, n, f, std::get<K>(ip)...);
      else map_run<Out, F, In...>(op, n, f, std::get<K>(ip)...);
      if (os != 1)
        for (int64_t i = 0; i < n; ++i) o[row.offsets[0] + (i0 + i) * os] = out_staged[size_t(i)];
      if (++block == blocks_per_row) {
        block = 0;
        row.next();
      }
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
