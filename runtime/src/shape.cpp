#include "oar/shape.h"

#include "oar/error.h"

namespace oar {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* what) {
  int64_t rank = ndim == 0 ? 1 : ndim;  // a scalar accepts dim 0 / -1, as in PyTorch
  if (axis < -rank || axis >= rank)
    throw IndexError(str(what, " ", axis, " is out of range for a tensor with ", ndim,
                         " dimension(s) (expected in [", -rank, ", ", rank - 1, "])"));
  return axis < 0 ? axis + rank : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(str("shapes ", shape_str(a), " and ", shape_str(b),
                           " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db,
                           ")"));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_shape_nonnegative(const Shape& shape) {
  if (shape.size() > 16)
    throw ShapeError(str("shape ", shape_str(shape), " has ", shape.size(), " dimensions; at most 16 are supported"));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError(str("negative dimension in shape ", shape_str(shape)));
    // Overflow of the element count (or of its byte size) would allocate garbage.
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t(1) << 56))
      throw ShapeError(str("shape ", shape_str(shape), " has too many elements"));
  }
}

}  // namespace oar
