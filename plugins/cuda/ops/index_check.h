// Index validation shared by the indexing and loss kernels: a device scan of
// an i32/i64 index tensor against [0, bound) that finds the FIRST bad
// position (the CPU's messages name it, so a plain "some index was bad" flag
// is not enough) and counts the valid entries (the losses' 'mean' divides by
// it). Kernels must not read device memory from the host, so the scan's
// result comes back through copy_to_host, after the stream's work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "launch.h"

namespace oar_gpu {

struct IndexScan {
  int64_t first = -1;  // position of the first value outside [0, bound) (not ignored), or -1
  int64_t value = 0;   // the value found there
  int64_t count = 0;   // values in range and not ignored (meaningful when first < 0)
};

// Scans the contiguous i32/i64 view `idx`, skipping values equal to *ignore
// when `ignore` is given. Fails with INVALID_ARGUMENT for another dtype.
IndexScan scan_indices(const OpContext& c, const oar_tensor_view& idx, int64_t bound, const int64_t* ignore);

// scan_indices without ignore; fails with OUT_OF_RANGE in the CPU's words:
// "<op>: index V at position P is out of range for <what> (valid range [0, B))".
void check_indices(const OpContext& c, const char* op, const oar_tensor_view& idx, int64_t bound,
                   const std::string& what);

// Copies `bytes` of device memory to the host once the work queued on c's
// stream has run, and waits for it.
void copy_to_host(const OpContext& c, void* dst, const void* src, size_t bytes);

}  // namespace oar_gpu
