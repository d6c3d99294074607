// Index validation shared by the indexing and loss families: a device scan of
// an i32/i64 index tensor that finds the FIRST value outside [0, bound) (the
// error names its position and value, the same on every device) and counts
// the valid entries (the losses' 'mean' divides by it). Chunks are scanned in
// parallel; their results come back to the host, which reduces them.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "oar/kp/family/launch.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct IndexScanKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/index_scan.kp"
};

struct IndexScan {
  int64_t first = -1;  // position of the first bad value (not ignored), or -1
  int64_t value = 0;   // the value there
  int64_t count = 0;   // valid values not ignored (meaningful when first < 0)
};

template <class B>
IndexScan scan_indices(B& b, const oar_tensor_view& idx, int64_t bound, const int64_t* ignore) {
  IndexScan r;
  const int64_t n = sdk::numel(idx);
  if (n == 0) return r;
  Launch L;
  L.family = "index_scan";
  L.i = idx.dtype;
  const int64_t chunk = std::max<int64_t>(1024, (n + 4095) / 4096);
  L.lanes = (n + chunk - 1) / chunk;
  L.work_per_lane = chunk;
  const Operand out = b.temp(uint64_t(L.lanes) * 2 * sizeof(int64_t));
  L.p[0] = out;
  L.p[1] = operand(idx);
  L.A.i[0] = n, L.A.i[1] = chunk, L.A.i[2] = bound, L.A.i[3] = ignore != nullptr, L.A.i[4] = ignore ? *ignore : 0;
  OAR_KP_LAUNCH(IndexScanKernels, kFloat, b, L, index_scan);
  std::vector<int64_t> host(size_t(L.lanes) * 2);
  b.read(out, host.data(), host.size() * sizeof(int64_t));
  for (int64_t c = 0; c < L.lanes; ++c) {
    if (host[size_t(2 * c)] >= 0) {
      r.first = host[size_t(2 * c)];
      r.value = read_element<int64_t>(b, idx, r.first);
      return r;
    }
    r.count += host[size_t(2 * c + 1)];
  }
  return r;
}

// Fails with OUT_OF_RANGE in the words every device uses:
// "<op>: index V at position P is out of range for <what> (valid range [0, B))".
template <class B>
void check_indices(B& b, const char* op, const oar_tensor_view& idx, int64_t bound, const std::string& what) {
  IndexScan s = scan_indices(b, idx, bound, nullptr);
  if (s.first >= 0)
    sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": index " + std::to_string(s.value) + " at position " +
                                           std::to_string(s.first) + " is out of range for " + what +
                                           " (valid range [0, " + std::to_string(bound) + "))");
}

}  // namespace oar::kp::family
