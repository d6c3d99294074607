// The families' group reductions (KP_GROUP_SUM / KP_GROUP_MAX, i.e.
// family::group_reduce) compiled for HIP-CPU: a block of threads that each
// hold a partial result must all get the block's total. Before HIP-CPU was
// treated as device code here they were identities, every thread kept its
// own partial, and the block-per-lane kernels (norms, last-dim softmax,
// losses) wrote one thread's share.
#include <gtest/gtest.h>

#include <vector>

#include "oar/kp/gpu/runtime.h"  // first: the dialect reads the HIP built-ins it declares
#include "oar/kp/family/dialect.h"

namespace {

namespace gpu = oar::kp::gpu;
constexpr int kThreads = 64;

struct Add {
  OAR_KP_HD float operator()(float a, float b) const { return a + b; }
};
struct Max {
  OAR_KP_HD float operator()(float a, float b) const { return a > b ? a : b; }
};

// Each thread reduces a strided share of in[0..n), then the block combines them.
OAR_GPU_KERNEL void block_sum_and_max(const float* in, int n, float* sums, float* maxes) {
  __shared__ float scratch[kThreads];
  float s = 0, m = -1e30f;
  for (int i = int(threadIdx.x); i < n; i += int(blockDim.x)) {
    s += in[i];
    m = in[i] > m ? in[i] : m;
  }
  s = oar::kp::family::group_reduce(s, scratch, int64_t(blockDim.x), Add{});
  m = oar::kp::family::group_reduce(m, scratch, int64_t(blockDim.x), Max{});
  sums[threadIdx.x] = s;
  maxes[threadIdx.x] = m;
}

TEST(GroupReduce, EveryThreadGetsTheBlocksTotal) {
  const int n = 1000;
  std::vector<float> in(n);
  float total = 0;
  for (int i = 0; i < n; ++i) total += (in[i] = float(i % 7) - 2.0f);
  in[617] = 50.0f;
  total += 50.0f - (float(617 % 7) - 2.0f);
  // HIP-CPU's device memory is host memory.
  std::vector<float> sums(kThreads, -1), maxes(kThreads, -1);
  gpu::launch(block_sum_and_max, dim3(1), dim3(kThreads), 0, nullptr, in.data(), n, sums.data(), maxes.data());
  ASSERT_EQ(OAR_GPU(DeviceSynchronize)(), OAR_GPU(Success));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_FLOAT_EQ(sums[size_t(t)], total) << "thread " << t;
    EXPECT_FLOAT_EQ(maxes[size_t(t)], 50.0f) << "thread " << t;
  }
}

}  // namespace
