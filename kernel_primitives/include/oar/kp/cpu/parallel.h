// CPU threading for kernel primitives: OpenMP parallel loops above a grain
// size (small tensors stay on the calling thread, so dispatch of tiny ops
// pays no thread wake-up).
#pragma once

#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace oar::kp::cpu {

constexpr int64_t kGrainSize = 32768;

// Compute-bound loops (a matmul row, a convolution plane) split into chunks of
// at least this many multiply-adds (~50 us of work): a smaller parallel region
// costs more in wake-ups than it saves, and far more when another process
// holds a core and the region's barrier waits for a descheduled thread.
constexpr int64_t kGrainMultiplyAdds = int64_t(1) << 18;

// Items per chunk for a loop whose items cost `work_per_item` multiply-adds each.
inline int64_t grain_for_work(int64_t work_per_item) {
  return work_per_item >= kGrainMultiplyAdds ? 1 : kGrainMultiplyAdds / (work_per_item > 0 ? work_per_item : 1);
}

// Calls f(begin, end) over [0, n) in chunks, in parallel when n is large.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  if (n > grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (n + nt - 1) / nt;
      int64_t b = t * chunk, e = b + chunk < n ? b + chunk : n;
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  (void)grain;
  f(int64_t(0), n);
}

}  // namespace oar::kp::cpu
