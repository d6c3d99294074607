// PyTorch tensor functions the C++ frontend adds by hand to the generated
// oar::<op> (oar/ops.h): the ones whose PyTorch signature needs code over the
// catalog ops (numbers, dtype rules, dim conventions, host results), the same
// compositions as the Python frontend's (frontend/python/oar), and the
// in-place forms oar::<op>_(self, ...) of the arithmetic, clamp/where-like and
// indexing functions. (The in-place forms of the one-tensor elementwise ops,
// oar::exp_, oar::relu_, oar::clamp_(self, min, max), ..., are generated into
// oar/ops.h.)
//
// In-place forms take `self` by const reference, write into its memory (or a
// view's base) through oar/inplace.h -- so versions, views and autograd behave
// as Tensor::copy_ -- and return self. Their arguments are those of the
// out-of-place form: oar::index_fill_(x, index, dim, value) as
// oar::index_fill(x, index, dim, value).
//
// A double operand follows oar/tensor_ops.h's scalar rule (a double holding a
// whole number counts as an integer scalar; a scalar does not widen a tensor).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "oar/inplace.h"
#include "oar/ops.h"
#include "oar/tensor.h"
#include "oar/tensor_ops.h"

namespace oar {

// ---- type promotion ----
// The dtype PyTorch gives an op on these operands (torch.result_type): 0-d
// tensors only raise the kind of the dimensioned ones. The dispatcher's own
// promotion rule (promoted_dtype), so it is what oar::add & co. compute in.
DType result_type(const std::vector<Tensor>& operands);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, double b);

// ---- math ----
// a % b with the sign of b (Python's rule: -7 % 2 == 1), in result_type(a, b);
// an integer zero divisor is a ValueError (outside a trace). f16/bf16 compute in f32.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, double b);
Tensor remainder(double a, const Tensor& b);
// Rounds half to even at `decimals` decimal places (negative: tens, hundreds, ...);
// integer tensors are returned as a copy. oar::round(x) is the catalog op.
Tensor round(const Tensor& x, int64_t decimals);
Tensor reciprocal(const Tensor& x);  // 1 / x (integers give floats)
// Tensor bounds (undefined = none) broadcast and take part in type promotion;
// oar::clamp(x, min, max) with doubles is the catalog op.
Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max);
Tensor clamp_min(const Tensor& x, double min);
Tensor clamp_max(const Tensor& x, double max);
Tensor lerp(const Tensor& start, const Tensor& end, double weight);
// `a` where condition else `b`, a number taking the other operand's dtype kind.
Tensor where(const Tensor& condition, const Tensor& a, double b);
Tensor where(const Tensor& condition, double a, const Tensor& b);

// ---- comparison ----
// Same shape and equal elements (a host bool; reads the device).
bool equal(const Tensor& a, const Tensor& b);
// Every element isclose (a host bool); a and b must have one dtype.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
// Elementwise tests, bool results; integer and bool tensors hold no NaN or infinity.
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
Tensor isfinite(const Tensor& x);

// ---- reduction ----
// torch.norm: the vector p-norm over dim (every element when empty); p = 2, 1,
// inf, -inf, 0 or any other number (oar::vector_norm). Floating inputs only.
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int64_t>& dim = {}, bool keepdim = false);
// p = "fro" (the 2-norm over dim) or "nuc" (the sum of singular values of the
// matrices in dims dim, two of them; a 2-D x's by default).
Tensor norm(const Tensor& x, const std::string& p, const std::vector<int64_t>& dim = {}, bool keepdim = false);

// ---- sort ----
// The indices that sort x along dim (a stable sort; NaN sorts above every number).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);

// ---- shape ----
// x tiled repeats[i] times along dim i (repeats may add leading dims): Tensor.repeat.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
// dim split into `sizes` (one of them may be -1).
Tensor unflatten(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes);
// Joined along dim 1 (dim 0 for 1-D tensors) / dim 0 after making them 2-D.
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor swapaxes(const Tensor& x, int64_t axis0, int64_t axis1);  // a view (Tensor::transpose)
Tensor swapdims(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor broadcast_to(const Tensor& x, const std::vector<int64_t>& shape);  // a view (Tensor::expand)
Tensor unsqueeze(const Tensor& x, int64_t dim);                          // a view

// ---- indexing ----
// x with x[indices] = values (accumulate: +=, repeated positions summing;
// otherwise the last write to a position wins), as x.index_put_(indices,
// values) in PyTorch. indices[k] indexes dim k (after the dims earlier
// entries cover): an integer tensor (negative entries count from the end), a
// bool mask (covering as many dims as it has), or an undefined Tensor for the
// whole dim. The index tensors broadcast together; NumPy's rule places their
// dims (in place when the indexed dims are adjacent, first otherwise), and
// values broadcast to that result's shape. Differentiable in x and values.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, double value, bool accumulate = false);
// value a 0-d (or one-element) tensor; oar::masked_fill(x, mask, double) is the catalog op.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

// ---- in-place forms (self = f(self, ...); return self) ----
Tensor add_(const Tensor& self, const Tensor& other, double alpha = 1.0);  // self += alpha * other
Tensor add_(const Tensor& self, double other, double alpha = 1.0);
Tensor sub_(const Tensor& self, const Tensor& other, double alpha = 1.0);  // self -= alpha * other
Tensor sub_(const Tensor& self, double other, double alpha = 1.0);
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor mul_(const Tensor& self, double other);
Tensor div_(const Tensor& self, const Tensor& other);  // true division: self must be floating
Tensor div_(const Tensor& self, double other);
Tensor pow_(const Tensor& self, const Tensor& exponent);
Tensor pow_(const Tensor& self, double exponent);
Tensor remainder_(const Tensor& self, const Tensor& other);
Tensor remainder_(const Tensor& self, double other);
// C's fmod (the sign of self); integers divide exactly in their own dtype.
Tensor fmod_(const Tensor& self, const Tensor& other);
Tensor fmod_(const Tensor& self, double other);
Tensor reciprocal_(const Tensor& self);
Tensor round_(const Tensor& self, int64_t decimals);  // round_(self) is generated
Tensor zero_(const Tensor& self);
Tensor fill_(const Tensor& self, double value);
Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor lerp_(const Tensor& self, const Tensor& end, double weight);
Tensor addcmul_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
Tensor addcdiv_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
// clamp_(self, double min, double max) is generated.
Tensor clamp_(const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_min_(const Tensor& self, double min);
Tensor clamp_max_(const Tensor& self, double max);
Tensor nan_to_num_(const Tensor& self, double nan = 0.0, const std::vector<double>& posinf = {},
                   const std::vector<double>& neginf = {});
Tensor tril_(const Tensor& self, int64_t diagonal = 0);
Tensor triu_(const Tensor& self, int64_t diagonal = 0);
Tensor cumsum_(const Tensor& self, int64_t dim);
Tensor cumprod_(const Tensor& self, int64_t dim);
Tensor masked_fill_(const Tensor& self, const Tensor& mask, double value);
Tensor masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor index_fill_(const Tensor& self, const Tensor& index, int64_t dim, double value);
Tensor index_copy_(const Tensor& self, const Tensor& index, const Tensor& source, int64_t dim);
Tensor index_add_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim, double alpha = 1.0);
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                  bool accumulate = false);
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, double value, bool accumulate = false);
Tensor scatter_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim);
Tensor scatter_(const Tensor& self, const Tensor& index, double value, int64_t dim);
Tensor scatter_add_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim);
Tensor scatter_reduce_(const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim,
                       const std::string& reduce, bool include_self = true);
Tensor put_(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

// In-place view changes (Tensor::set_view_): self now shows the view, with
// the view's history under autograd.
Tensor transpose_(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor swapaxes_(const Tensor& self, int64_t axis0, int64_t axis1);
Tensor t_(const Tensor& self);
Tensor unsqueeze_(const Tensor& self, int64_t dim);
Tensor squeeze_(const Tensor& self);
Tensor squeeze_(const Tensor& self, int64_t dim);

}  // namespace oar
