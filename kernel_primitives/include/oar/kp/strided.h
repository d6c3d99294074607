// Strided iteration geometry shared by every backend: operands of one shape
// with their own element strides (0 where broadcast). Adjacent dimensions
// that are contiguous in every operand are merged, so a contiguous or simply
// broadcast case becomes one flat loop.
#pragma once

#include <cstdint>

namespace oar::kp {

constexpr int kMaxOperands = 4;
constexpr int kMaxDims = 16;

struct StridedLayout {
  int ndim = 0;      // after coalescing; 0 means a single element
  int noperands = 0;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];
  int64_t numel = 1;
};

// shape: ndim sizes; strides[k]: operand k's strides (elements).
inline StridedLayout make_layout(int ndim, const int64_t* shape, int noperands,
                                 const int64_t* const* strides) {
  StridedLayout L;
  L.noperands = noperands;
  for (int i = 0; i < ndim; ++i) L.numel *= shape[i];
  // Drop size-1 dims, then merge dim i into i+1 when every operand allows it.
  int n = 0;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 1) continue;
    L.shape[n] = shape[i];
    for (int k = 0; k < noperands; ++k) L.strides[k][n] = strides[k][i];
    ++n;
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0) {
      bool mergeable = true;
      for (int k = 0; k < noperands; ++k)
        mergeable &= L.strides[k][m - 1] == L.strides[k][i] * L.shape[i];
      if (mergeable) {
        L.shape[m - 1] *= L.shape[i];
        for (int k = 0; k < noperands; ++k) L.strides[k][m - 1] = L.strides[k][i];
        continue;
      }
    }
    L.shape[m] = L.shape[i];
    for (int k = 0; k < noperands; ++k) L.strides[k][m] = L.strides[k][i];
    ++m;
  }
  L.ndim = m;
  return L;
}

// Walks the rows (every dim but the last) of a layout from row `first`,
// keeping each operand's element offset: the multi-index is divided out once,
// then each step adds a stride (one carry at most per dim), so a layout with
// a short last dim costs no divisions per row.
class RowCursor {
 public:
  RowCursor(const StridedLayout& L, int64_t first) : L_(L) {
    for (int k = 0; k < L.noperands; ++k) offsets[k] = 0;
    for (int d = L.ndim - 2; d >= 0; --d) {
      index_[d] = first % L.shape[d];
      first /= L.shape[d];
      for (int k = 0; k < L.noperands; ++k) offsets[k] += index_[d] * L.strides[k][d];
    }
  }
  void next() {
    for (int d = L_.ndim - 2; d >= 0; --d) {
      if (++index_[d] < L_.shape[d]) {
        for (int k = 0; k < L_.noperands; ++k) offsets[k] += L_.strides[k][d];
        return;
      }
      index_[d] = 0;
      for (int k = 0; k < L_.noperands; ++k) offsets[k] -= (L_.shape[d] - 1) * L_.strides[k][d];
    }
  }
  int64_t offsets[kMaxOperands];

 private:
  const StridedLayout& L_;
  int64_t index_[kMaxDims];
};

}  // namespace oar::kp
