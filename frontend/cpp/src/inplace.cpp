// In-place forms of the C++ frontend (oar/inplace.h, oar/tensor_functions.h):
// each computes its out-of-place form from self.inplace_source(others) and
// hands the result to inplace_assign (Tensor::update_), the path the Python
// frontend's in-place methods take too (Tensor._update_ / _inplace_src), so
// versions, views and autograd behave the same in both.
#include "oar/inplace.h"

#include <utility>

#include "oar/error.h"
#include "oar/tensor_functions.h"

namespace oar {

namespace {

int kind_of(DType d) { return d == DType::boolean ? 0 : is_floating(d) ? 2 : 1; }

Tensor scaled(const Tensor& other, double alpha) {
  return alpha == 1.0 ? other : oar::mul(other, scalar_tensor(alpha, other));
}

}  // namespace

Tensor inplace_assign(const Tensor& self, Tensor result, const char* op) {
  if (!self.defined() || !result.defined()) throw ValueError(str(op, ": undefined tensor"));
  if (kind_of(result.dtype()) > kind_of(self.dtype()))  // PyTorch refuses int_t += 0.5
    throw DTypeError(str(op, ": result type ", dtype_name(result.dtype()), " can't be cast to the desired output type ",
                         dtype_name(self.dtype()), " of an in-place operation"));
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  Tensor target = self;  // the same TensorImpl: update_ changes what every handle of it shows
  target.update_(std::move(result));
  return target;
}

// ---- arithmetic ----

Tensor add_(const Tensor& self, const Tensor& other, double alpha) {
  const Tensor b = scaled(other, alpha);
  return inplace_assign(self, oar::add(self.inplace_source({b}), b), "add_");
}
Tensor add_(const Tensor& self, double other, double alpha) {
  return inplace_assign(self, oar::add(self.inplace_source(), scalar_tensor(other * alpha, self)), "add_");
}
Tensor sub_(const Tensor& self, const Tensor& other, double alpha) {
  const Tensor b = scaled(other, alpha);
  return inplace_assign(self, oar::sub(self.inplace_source({b}), b), "sub_");
}
Tensor sub_(const Tensor& self, double other, double alpha) {
  return inplace_assign(self, oar::sub(self.inplace_source(), scalar_tensor(other * alpha, self)), "sub_");
}
Tensor mul_(const Tensor& self, const Tensor& other) {
  return inplace_assign(self, oar::mul(self.inplace_source({other}), other), "mul_");
}
Tensor mul_(const Tensor& self, double other) {
  return inplace_assign(self, oar::mul(self.inplace_source(), scalar_tensor(other, self)), "mul_");
}
Tensor div_(const Tensor& self, const Tensor& other) {
  return inplace_assign(self, oar::div(self.inplace_source({other}), other), "div_");
}
Tensor div_(const Tensor& self, double other) {
  return inplace_assign(self, oar::div(self.inplace_source(), scalar_tensor(other, self)), "div_");
}
Tensor pow_(const Tensor& self, const Tensor& exponent) {
  return inplace_assign(self, oar::pow(self.inplace_source({exponent}), exponent), "pow_");
}
Tensor pow_(const Tensor& self, double exponent) {
  return inplace_assign(self, oar::pow(self.inplace_source(), scalar_tensor(exponent, self)), "pow_");
}
Tensor remainder_(const Tensor& self, const Tensor& other) {
  return inplace_assign(self, remainder(self.inplace_source({other}), other), "remainder_");
}
Tensor remainder_(const Tensor& self, double other) {
  return remainder_(self, scalar_tensor(other, self));
}
Tensor reciprocal_(const Tensor& self) { return inplace_assign(self, reciprocal(self.inplace_source()), "reciprocal_"); }
Tensor round_(const Tensor& self, int64_t decimals) {
  return inplace_assign(self, round(self.inplace_source(), decimals), "round_");
}
Tensor zero_(const Tensor& self) { return inplace_assign(self, Tensor::zeros({}, self.dtype(), self.device()), "zero_"); }
Tensor fill_(const Tensor& self, double value) {
  return inplace_assign(self, Tensor::full({}, value, self.dtype(), self.device()), "fill_");
}
Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return inplace_assign(self, oar::lerp(self.inplace_source({end, weight}), end, weight), "lerp_");
}
Tensor lerp_(const Tensor& self, const Tensor& end, double weight) {
  return inplace_assign(self, lerp(self.inplace_source({end}), end, weight), "lerp_");
}
Tensor addcmul_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value) {
  return inplace_assign(self, oar::addcmul(self.inplace_source({tensor1, tensor2}), tensor1, tensor2, value),
                        "addcmul_");
}
Tensor addcdiv_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value) {
  return inplace_assign(self, oar::addcdiv(self.inplace_source({tensor1, tensor2}), tensor1, tensor2, value),
                        "addcdiv_");
}

// ---- clamp-like ----

Tensor clamp_(const Tensor& self, const Tensor& min, const Tensor& max) {
  std::vector<Tensor> others;
  if (min.defined()) others.push_back(min);
  if (max.defined()) others.push_back(max);
  return inplace_assign(self, clamp(self.inplace_source(others), min, max), "clamp_");
}
Tensor clamp_min_(const Tensor& self, double min) {
  return inplace_assign(self, clamp_min(self.inplace_source(), min), "clamp_min_");
}
Tensor clamp_max_(const Tensor& self, double max) {
  return inplace_assign(self, clamp_max(self.inplace_source(), max), "clamp_max_");
}
Tensor nan_to_num_(const Tensor& self, double nan, const std::vector<double>& posinf,
                   const std::vector<double>& neginf) {
  return inplace_assign(self, oar::nan_to_num(self.inplace_source(), nan, posinf, neginf), "nan_to_num_");
}
Tensor tril_(const Tensor& self, int64_t diagonal) {
  return inplace_assign(self, oar::tril(self.inplace_source(), diagonal), "tril_");
}
Tensor triu_(const Tensor& self, int64_t diagonal) {
  return inplace_assign(self, oar::triu(self.inplace_source(), diagonal), "triu_");
}
Tensor cumsum_(const Tensor& self, int64_t dim) {
  return inplace_assign(self, oar::cumsum(self.inplace_source(), dim), "cumsum_");
}
Tensor cumprod_(const Tensor& self, int64_t dim) {
  return inplace_assign(self, oar::cumprod(self.inplace_source(), dim), "cumprod_");
}

// ---- indexing ----

Tensor masked_fill_(const Tensor& self, const Tensor& mask, double value) {
  return inplace_assign(self, oar::masked_fill(self.inplace_source(), mask, value), "masked_fill_");
}
Tensor masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return inplace_assign(self, masked_fill(self.inplace_source({value}), mask, value), "masked_fill_");
}
Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const Tensor src = source.to(self.dtype());
  return inplace_assign(self, oar::masked_scatter(self.inplace_source({src}), mask, src), "masked_scatter_");
}
Tensor index_fill_(const Tensor& self, const Tensor& index, int64_t dim, double value) {
  return inplace_assign(self, oar::index_fill(self.inplace_source(), index, dim, value), "index_fill_");
}
Tensor index_copy_(const Tensor& self, const Tensor& index, const Tensor& source, int64_t dim) {
  const Tensor src = source.to(self.dtype());
  return inplace_assign(self, oar::index_copy(self.inplace_source({src}), index, src, dim), "index_copy_");
}
Tensor index_add_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim, double alpha) {
  return inplace_assign(self, oar::index_add(self.inplace_source({src}), index, src, dim, alpha), "index_add_");
}
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return inplace_assign(self, index_put(self.inplace_source({values}), indices, values, accumulate), "index_put_");
}
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, double value, bool accumulate) {
  return inplace_assign(self, index_put(self.inplace_source(), indices, value, accumulate), "index_put_");
}
Tensor scatter_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim) {
  const Tensor s = src.to(self.dtype());
  return inplace_assign(self, oar::scatter(self.inplace_source({s}), index, s, dim), "scatter_");
}
Tensor scatter_(const Tensor& self, const Tensor& index, double value, int64_t dim) {
  const Tensor s = oar::fill(index.shape(), value, self.dtype(), self.device());
  return inplace_assign(self, oar::scatter(self.inplace_source(), index, s, dim), "scatter_");
}
Tensor scatter_add_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim) {
  const Tensor s = src.to(self.dtype());
  return inplace_assign(self, oar::scatter_add(self.inplace_source({s}), index, s, dim), "scatter_add_");
}
Tensor scatter_reduce_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim,
                       const std::string& reduce, bool include_self) {
  const Tensor s = src.to(self.dtype());
  return inplace_assign(self, oar::scatter_reduce(self.inplace_source({s}), index, s, dim, reduce, include_self),
                        "scatter_reduce_");
}
Tensor put_(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  const Tensor src = source.to(self.dtype());
  return inplace_assign(self, oar::put(self.inplace_source({src}), index, src, accumulate), "put_");
}

// ---- view changes ----

namespace {

Tensor show(const Tensor& self, const Tensor& view) {
  Tensor target = self;  // the same TensorImpl
  target.set_view_(view);
  return target;
}

}  // namespace

Tensor transpose_(const Tensor& self, int64_t dim0, int64_t dim1) { return show(self, self.transpose(dim0, dim1)); }
Tensor swapaxes_(const Tensor& self, int64_t axis0, int64_t axis1) { return show(self, self.transpose(axis0, axis1)); }
Tensor t_(const Tensor& self) { return show(self, self.t()); }
Tensor unsqueeze_(const Tensor& self, int64_t dim) { return show(self, self.unsqueeze(dim)); }
Tensor squeeze_(const Tensor& self) { return show(self, self.squeeze()); }
Tensor squeeze_(const Tensor& self, int64_t dim) { return show(self, self.squeeze(dim)); }

}  // namespace oar
