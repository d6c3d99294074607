// Shorthands for writing gradient rules with ops: each helper is a catalog op
// call, so a rule written with them is itself differentiable (double grad).
#pragma once

#include "node.h"
#include "oar/dispatch.h"
#include "oar/error.h"

namespace oar::autograd::rules {

inline Tensor op(const char* name, const std::vector<Tensor>& in, const Attrs& attrs = {}) {
  return call1(name, in, attrs);
}
inline std::vector<Tensor> ops(const char* name, const std::vector<Tensor>& in, const Attrs& attrs = {}) {
  return call(std::string(name), in, attrs);
}
inline Tensor add(const Tensor& a, const Tensor& b) { return op("add", {a, b}); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return op("sub", {a, b}); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return op("mul", {a, b}); }
inline Tensor div(const Tensor& a, const Tensor& b) { return op("div", {a, b}); }
inline Tensor neg(const Tensor& a) { return op("neg", {a}); }
// A 0-d constant of t's dtype and device.
inline Tensor scalar_like(const Tensor& t, double v) { return Tensor::full({}, v, t.dtype(), t.device()); }
inline Tensor zeros_like(const Tensor& t) { return Tensor::zeros(t.shape(), t.dtype(), t.device()); }
inline Tensor ones_like(const Tensor& t) { return Tensor::ones(t.shape(), t.dtype(), t.device()); }
// mask (bool) as t's dtype
inline Tensor as_dtype_of(const Tensor& mask, const Tensor& t) { return mask.to(t.dtype()); }

}  // namespace oar::autograd::rules
