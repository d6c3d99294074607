// Tensor operators and small helpers of the C++ frontend: thin calls into the
// op catalog (see oar/tensor_ops.h for the scalar dtype rule).
#include "oar/tensor_ops.h"

#include <cmath>

#include "oar/dispatch.h"
#include "oar/error.h"

namespace oar {

Tensor scalar_tensor(double value, const Tensor& like) {
  if (!like.defined()) throw ValueError("scalar operand combined with an undefined tensor");
  // A C++ double counts as an integer when it holds one.
  bool integral = std::isfinite(value) && value == std::floor(value);
  DType dt = scalar_operand_dtype(like.dtype(), integral ? ScalarKind::kInteger : ScalarKind::kFloat);
  return Tensor::full({}, value, dt, like.device());
}

Tensor operator+(const Tensor& a, const Tensor& b) { return call1("add", {a, b}); }
Tensor operator-(const Tensor& a, const Tensor& b) { return call1("sub", {a, b}); }
Tensor operator*(const Tensor& a, const Tensor& b) { return call1("mul", {a, b}); }
Tensor operator/(const Tensor& a, const Tensor& b) { return call1("div", {a, b}); }
Tensor operator-(const Tensor& a) { return call1("neg", {a}); }

Tensor operator+(const Tensor& a, double b) { return a + scalar_tensor(b, a); }
Tensor operator-(const Tensor& a, double b) { return a - scalar_tensor(b, a); }
Tensor operator*(const Tensor& a, double b) { return a * scalar_tensor(b, a); }
Tensor operator/(const Tensor& a, double b) { return a / scalar_tensor(b, a); }
Tensor operator+(double a, const Tensor& b) { return scalar_tensor(a, b) + b; }
Tensor operator-(double a, const Tensor& b) { return scalar_tensor(a, b) - b; }
Tensor operator*(double a, const Tensor& b) { return scalar_tensor(a, b) * b; }
Tensor operator/(double a, const Tensor& b) { return scalar_tensor(a, b) / b; }

Tensor zeros_like(const Tensor& x) { return Tensor::zeros(x.shape(), x.dtype(), x.device()); }
Tensor ones_like(const Tensor& x) { return Tensor::ones(x.shape(), x.dtype(), x.device()); }

}  // namespace oar
