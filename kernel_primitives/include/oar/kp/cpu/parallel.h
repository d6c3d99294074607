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
