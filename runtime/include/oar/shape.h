// Shape and stride helpers shared by tensors, schemas and kernels' callers:
// contiguous strides, element counts, axis normalisation and broadcasting,
// each throwing a typed error that names the offending shape or axis.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace oar {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"
// Wraps a possibly negative axis into [0, ndim); throws IndexError naming `what`.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* what = "dim");
// NumPy broadcasting; throws ShapeError naming both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);
void check_shape_nonnegative(const Shape& shape);

}  // namespace oar
