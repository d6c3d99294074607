// The index scan of index_check.h, written as one reduction with the
// reduction primitive (kp/gpu/reduce.cuh): every index enters with its flat
// position, the accumulator keeps the smallest bad position and the number of
// valid entries, so blocks and splits combine in any order and the result is
// the same as the CPU's sequential check. One small struct comes back to the
// host; the offending value is read only when there is one.
#include <limits>

#include "oar/kp/gpu/reduce.cuh"
#include "ops/index_check.h"

namespace oar_gpu {

namespace {

using namespace oar;

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

struct ScanState {
  int64_t first;
  int64_t count;
};

struct ScanReducer {
  using acc_t = ScanState;
  int64_t bound, ignore;
  bool use_ignore;
  OAR_KP_HD acc_t init() const { return {kNone, 0}; }
  template <class X>
  OAR_KP_HD acc_t step(acc_t a, X x, int64_t i) const {
    const int64_t v = static_cast<int64_t>(x);
    if (use_ignore && v == ignore) return a;
    if (v < 0 || v >= bound) {
      if (i < a.first) a.first = i;
    } else {
      ++a.count;
    }
    return a;
  }
  OAR_KP_HD acc_t combine(acc_t a, acc_t b) const {
    return {a.first < b.first ? a.first : b.first, a.count + b.count};
  }
  OAR_KP_HD acc_t finish(acc_t a, int64_t) const { return a; }
};

template <class I>
IndexScan scan(const OpContext& c, const oar_tensor_view& idx, int64_t n, int64_t bound, const int64_t* ignore) {
  kp::ReduceGeometry g;  // everything reduced into one output, position i at offset i
  g.red_shape = {n};
  g.red_strides = {1};
  g.n_red = n;
  g.n_out = 1;
  ScanReducer r{bound, ignore ? *ignore : 0, ignore != nullptr};
  auto* result = static_cast<ScanState*>(c.workspace(sizeof(ScanState)));
  check(kp::gpu::reduce(c.stream, ptr<const I>(idx), result, g, r, [&](uint64_t bytes) { return c.workspace(bytes); }),
        "index scan");
  ScanState host{};
  copy_to_host(c, &host, result, sizeof(host));
  IndexScan out;
  out.count = host.count;
  if (host.first != kNone) {
    I v{};
    copy_to_host(c, &v, ptr<const I>(idx) + host.first, sizeof(I));
    out.first = host.first;
    out.value = static_cast<int64_t>(v);
  }
  return out;
}

}  // namespace

void copy_to_host(const OpContext& c, void* dst, const void* src, size_t bytes) {
  check(OAR_GPU(MemcpyAsync)(dst, src, bytes, OAR_GPU(MemcpyDeviceToHost), c.stream),
        OAR_GPU_BACKEND_NAME "MemcpyAsync(device to host)");
  check(OAR_GPU(StreamSynchronize)(c.stream), OAR_GPU_BACKEND_NAME "StreamSynchronize");
}

IndexScan scan_indices(const OpContext& c, const oar_tensor_view& idx, int64_t bound, const int64_t* ignore) {
  const int64_t n = sdk::numel(idx);
  if (idx.dtype == OAR_DTYPE_I64) return n ? scan<int64_t>(c, idx, n, bound, ignore) : IndexScan{};
  if (idx.dtype == OAR_DTYPE_I32) return n ? scan<int32_t>(c, idx, n, bound, ignore) : IndexScan{};
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "index tensors must be i32 or i64");
}

void check_indices(const OpContext& c, const char* op, const oar_tensor_view& idx, int64_t bound,
                   const std::string& what) {
  IndexScan s = scan_indices(c, idx, bound, nullptr);
  if (s.first >= 0)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": index " + std::to_string(s.value) + " at position " +
                                           std::to_string(s.first) + " is out of range for " + what +
                                           " (valid range [0, " + std::to_string(bound) + "))");
}

}  // namespace oar_gpu
