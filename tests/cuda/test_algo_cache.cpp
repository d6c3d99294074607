// The CUDA plugin's algorithm cache (plugins/cuda/algo_cache.h) without a
// GPU: a search runs once per distinct key, repeated lookups hit, keys that
// differ in shape, stride, dtype, device or conv parameters miss, concurrent
// callers of one new key share a single search, a failed search stores
// nothing, and the counters say all of this.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "algo_cache.h"

using oar_gpu::AlgoCache;
using oar_gpu::AlgoChoice;
using oar_gpu::AlgoKey;

namespace {

// A conv-like key as ops/conv.cu builds one.
AlgoKey conv_key(std::vector<int64_t> x_shape, int64_t dtype = 0, int64_t device = 0,
                 std::vector<int64_t> x_strides = {}, std::vector<int64_t> stride = {1, 1}) {
  if (x_strides.empty()) {
    x_strides.assign(x_shape.size(), 1);
    for (size_t i = x_shape.size() - 1; i-- > 0;) x_strides[i] = x_strides[i + 1] * x_shape[i + 1];
  }
  AlgoKey k;
  k.add("kind", 0).add("dtype", dtype).add("device", device);
  k.add("x", x_shape).add("x_strides", x_strides).add("w", {16, 3, 3, 3});
  k.add("stride", stride).add("padding", {1, 1}).add("dilation", {1, 1}).add("groups", 1);
  return k;
}

AlgoChoice pick(int64_t algo) {
  AlgoChoice c;
  c.algo = algo;
  c.workspace_bytes = uint64_t(algo) * 1024;
  return c;
}

TEST(CudaAlgoCache, SearchRunsOncePerKeyAndRepeatsHit) {
  AlgoCache cache;
  int calls = 0;
  auto search = [&] { ++calls; return pick(3); };
  AlgoKey key = conv_key({8, 3, 32, 32});
  for (int i = 0; i < 5; ++i) {
    AlgoChoice c = cache.get(key, search);
    EXPECT_EQ(c.algo, 3);
    EXPECT_EQ(c.workspace_bytes, 3u * 1024);
  }
  EXPECT_EQ(calls, 1);
  AlgoCache::Stats s = cache.stats();
  EXPECT_EQ(s.searches, 1u);
  EXPECT_EQ(s.hits, 4u);
  EXPECT_EQ(s.entries, 1u);

  AlgoChoice seen;
  ASSERT_TRUE(cache.peek(key, &seen));
  EXPECT_EQ(seen.algo, 3);
  EXPECT_EQ(cache.stats().hits, 4u) << "peek is not a lookup";
}

TEST(CudaAlgoCache, DifferentProblemsMiss) {
  AlgoCache cache;
  int calls = 0;
  auto search = [&] { return pick(++calls); };
  std::vector<AlgoKey> keys = {
      conv_key({8, 3, 32, 32}),
      conv_key({8, 3, 32, 33}),                                  // shape
      conv_key({8, 3, 32, 32}, /*dtype=*/2),                     // dtype
      conv_key({8, 3, 32, 32}, 0, /*device=*/1),                 // device
      conv_key({8, 3, 32, 32}, 0, 0, {3 * 32 * 32, 1, 96, 3}),   // strides (channels last)
      conv_key({8, 3, 32, 32}, 0, 0, {}, /*stride=*/{2, 2}),     // conv parameters
  };
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(cache.get(keys[i], search).algo, int64_t(i + 1));
  EXPECT_EQ(calls, int(keys.size()));
  // Each again: all hits, each with its own answer.
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(cache.get(keys[i], search).algo, int64_t(i + 1));
  AlgoCache::Stats s = cache.stats();
  EXPECT_EQ(s.searches, keys.size());
  EXPECT_EQ(s.hits, keys.size());
  EXPECT_EQ(s.entries, keys.size());
}

TEST(CudaAlgoCache, KeyCountsItsGroups) {
  AlgoKey a, b;
  a.add("p", {1, 2}).add("q", {3});
  b.add("p", {1}).add("q", {2, 3});
  EXPECT_FALSE(a == b);
  EXPECT_EQ(a.text(), "p=[1,2] q=[3]");
  AlgoKey c;
  c.add("p", {1, 2}).add("q", {3}).note("(f32)");
  EXPECT_TRUE(a == c) << "notes are for the log only";
}

TEST(CudaAlgoCache, ConcurrentCallersShareOneSearch) {
  AlgoCache cache;
  std::atomic<int> calls{0};
  std::atomic<bool> go{false};
  AlgoKey key = conv_key({32, 64, 56, 56});
  auto search = [&] {
    calls.fetch_add(1);
    // Long enough that every other thread arrives while the search runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return pick(7);
  };
  constexpr int kThreads = 8;
  std::vector<int64_t> got(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      got[size_t(t)] = cache.get(key, search).algo;
    });
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  for (int64_t g : got) EXPECT_EQ(g, 7);
  AlgoCache::Stats s = cache.stats();
  EXPECT_EQ(s.searches, 1u);
  EXPECT_EQ(s.hits, uint64_t(kThreads - 1));
  EXPECT_EQ(s.entries, 1u);
}

TEST(CudaAlgoCache, DistinctKeysSearchInParallel) {
  AlgoCache cache;
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  // Each search waits (up to 5 s) for the other key's search to start: were
  // searches serialised, the first would time out alone.
  auto search = [&] {
    inside.fetch_add(1);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (inside.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    if (inside.load() == 2) overlapped = true;
    return pick(1);
  };
  std::thread a([&] { cache.get(conv_key({1, 3, 8, 8}), search); });
  std::thread b([&] { cache.get(conv_key({2, 3, 8, 8}), search); });
  a.join();
  b.join();
  EXPECT_TRUE(overlapped.load()) << "one key's search must not hold up another's";
  EXPECT_EQ(cache.stats().searches, 2u);
}

TEST(CudaAlgoCache, FailedSearchStoresNothing) {
  AlgoCache cache;
  AlgoKey key = conv_key({4, 3, 16, 16});
  EXPECT_THROW(cache.get(key, []() -> AlgoChoice { throw std::runtime_error("no algorithm fits"); }),
               std::runtime_error);
  AlgoChoice seen;
  EXPECT_FALSE(cache.peek(key, &seen));
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.get(key, [] { return pick(2); }).algo, 2);
  AlgoCache::Stats s = cache.stats();
  EXPECT_EQ(s.searches, 2u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.entries, 1u);
}

TEST(CudaAlgoCache, ClearForgetsAndResetsCounters) {
  AlgoCache cache;
  int calls = 0;
  auto search = [&] { return pick(++calls); };
  AlgoKey key = conv_key({4, 3, 16, 16});
  cache.get(key, search);
  cache.get(key, search);
  cache.clear();
  AlgoCache::Stats s = cache.stats();
  EXPECT_EQ(s.searches, 0u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(cache.get(key, search).algo, 2) << "a cleared key searches again";
  EXPECT_EQ(cache.stats().searches, 1u);
}

}  // namespace
