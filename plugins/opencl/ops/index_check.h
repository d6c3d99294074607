// Index validation shared by the indexing and loss kernels (defined in
// indexing.cpp): a device scan for out-of-range values, and the OpenCL C
// helper that reads an i32 or i64 index from one program.
#pragma once

#include <cstdint>
#include <vector>

#include "launch.h"

namespace oar_ocl {

// Validates every value of the contiguous i32/i64 view `idx` against [0, bound),
// skipping *ignore when given. Returns the first position holding a bad value
// (and that value in *value), or -1; *count gets the number of valid values
// that are not ignored (when no value is bad).
int64_t scan_indices(OpContext& c, const oar_tensor_view& idx, int64_t bound, const int64_t* ignore, int64_t* value,
                     int64_t* count);
std::vector<int64_t> read_indices(OpContext& c, const oar_tensor_view& idx, int64_t from, int64_t n);
// OpenCL C for oar_index_at(p, i, wide): element i of an index buffer passed as
// `__global const int*`, read as i64 when `wide`. One program then serves both
// index dtypes (a uniform branch), halving the programs to compile.
const char* index_at_source();

}  // namespace oar_ocl
