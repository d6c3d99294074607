// Comparing a device's output with the CPU reference: shapes exactly, values
// within the tolerance of tolerances.def for floating outputs and exactly for
// integers and bools. A mismatch is described in one line: where, what was
// produced, what was expected and how many elements differ.
#pragma once

#include <string>

#include "oar/tensor.h"

namespace oar::conformance {

struct Tolerance {
  double rtol = 0, atol = 0;
};
// The row of tolerances.def for (op, dtype), else the dtype's default.
Tolerance tolerance_for(const std::string& op, DType dtype);

// "" when `got` matches `want`; else the reason. `want` may be in a wider
// floating dtype than `got` (an f64 reference): it is rounded to got's dtype.
std::string compare_tensors(const Tensor& got, const Tensor& want, const Tolerance& tol);

// Summary statistics of a random output, for the sampling ops whose values a
// device may draw with another generator: "" when mean and standard deviation
// agree with the reference within a few standard errors.
std::string compare_distributions(const Tensor& got, const Tensor& want);

}  // namespace oar::conformance
