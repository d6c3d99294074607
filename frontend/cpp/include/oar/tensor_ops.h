// Arithmetic operators on oar::Tensor for the C++ frontend: a + b, a * 2.0,
// -a, matmul(a, b), as a PyTorch user writes them. Each is one catalog op
// through eager dispatch (so broadcasting, promotion and autograd apply).
// A double scalar becomes a 0-d tensor of the other operand's dtype when that
// is floating (PyTorch's "wrapped number" rule: a scalar does not widen a
// tensor), f32 when the tensor is integral and the scalar is fractional.
#pragma once

#include "oar/ops.h"  // oar::matmul, oar::sum, oar::exp, ...: generated from the catalog
#include "oar/tensor.h"

namespace oar {

// A 0-d tensor holding `value`, with the dtype a scalar operand of `like` takes.
Tensor scalar_tensor(double value, const Tensor& like);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);

Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// Not catalog ops (creation from a tensor's shape, dtype and device).
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);

}  // namespace oar
