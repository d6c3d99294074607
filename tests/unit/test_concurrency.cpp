// Eager dispatch from several host threads at once: the registries, the
// caching allocator and the oneDNN primitive cache must stay consistent and
// every thread must get its own correct results.
#include <thread>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

TEST(Concurrency, ParallelDispatchGivesCorrectResults) {
  for (Device dev : devices()) {
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        try {
          for (int it = 0; it < 50; ++it) {
            int64_t n = 8 + t;  // different shapes per thread exercise the caches
            Tensor a = Tensor::full({n, n}, double(t + 1), DType::f32, dev);
            Tensor b = Tensor::full({n, n}, 2.0, DType::f32, dev);
            Tensor c = call1("matmul", {a, b});
            Tensor s = call1("sum", {call1("add", {c, a})});
            double want = double(n * n) * (double(t + 1) * 2.0 * double(n) + double(t + 1));
            if (s.item() != want) ++failures[t];
          }
        } catch (const std::exception&) {
          failures[t] += 1000;
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  }
}
