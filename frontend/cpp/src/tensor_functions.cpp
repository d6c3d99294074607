// The hand-written tensor functions of the C++ frontend (oar/tensor_functions.h):
// compositions of catalog ops, the same ones the Python frontend writes in
// frontend/python/oar (_functions.py, _tensor_math.py, _tensor_reduce.py,
// _tensor_select.py, _tensor_layout.py, indexing.cpp's index_put_), so both
// frontends give the same values, on every device, with gradients wherever
// the ops have them.
#include "oar/tensor_functions.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/op_registry.h"

namespace oar {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A 0-d tensor of `value` in `dtype` on x's device.
Tensor constant(double value, DType dtype, const Tensor& like) { return Tensor::full({}, value, dtype, like.device()); }

Tensor false_like(const Tensor& x) { return oar::fill(x.shape(), 0.0, DType::boolean, x.device()); }

void require_defined(const Tensor& t, const char* fn, const char* arg) {
  if (!t.defined()) throw ValueError(str(fn, ": argument '", arg, "' is an undefined tensor"));
}

std::optional<PromotionOperand> operand_of(const Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return PromotionOperand{t.dtype(), t.dim() == 0};
}

// The dispatcher's promotion rule, as an op with every input promoted applies it.
DType promote(size_t count, const std::function<std::optional<PromotionOperand>(size_t)>& operand) {
  static const OpSchema& add = OpRegistry::instance().get("add");
  std::optional<DType> dt = promoted_dtype(add, count, operand);
  if (!dt) throw ValueError("result_type: needs at least one defined tensor");
  return *dt;
}

// ---- rounded division (remainder, fmod) ----

// PyTorch raises for an integer zero divisor. A trace cannot read values on
// the host; the int_* kernels give 0 there.
void check_int_divisor(const Tensor& b) {
  if (graph::Tracer::active() != nullptr) return;
  if (oar::any(oar::eq(b, constant(0, b.dtype(), b))).item() != 0) throw ValueError("integer division by zero");
}

// Division rounded in result_type(a, b): integers through the catalog's exact
// int_* op, f16/bf16 computed in f32 as PyTorch does (Python's _rounded_divide).
template <class FloatFn>
Tensor rounded_divide(const Tensor& a, const Tensor& b, const char* int_op, FloatFn float_fn) {
  require_defined(a, int_op, "a");
  require_defined(b, int_op, "b");
  const DType dt = result_type(a, b);
  if (dt == DType::boolean) throw DTypeError("rounded division is not defined for bool tensors");
  const Tensor x = a.to(dt), y = b.to(dt);
  if (!is_floating(dt)) {
    check_int_divisor(y);
    return call1(int_op, {x, y});
  }
  if (dt == DType::f16 || dt == DType::bf16) return float_fn(x.to(DType::f32), y.to(DType::f32)).to(dt);
  return float_fn(x, y);
}

// fmod with the result moved to b's sign where they differ (PyTorch's remainder).
Tensor remainder_float(const Tensor& a, const Tensor& b) {
  const Tensor mod = oar::fmod(a, b);
  const Tensor zero = constant(0, mod.dtype(), mod);
  const Tensor fix = oar::logical_and(oar::ne(mod, zero), oar::ne(oar::lt(b, zero), oar::lt(mod, zero)));
  return oar::where(fix, oar::add(mod, b), mod);
}

Tensor fmod_any(const Tensor& a, const Tensor& b) {
  return rounded_divide(a, b, "int_fmod", [](const Tensor& x, const Tensor& y) { return oar::fmod(x, y); });
}

// ---- shapes ----

Tensor atleast_1d(const Tensor& x) { return x.dim() >= 1 ? x : x.reshape({1}); }
Tensor atleast_2d(const Tensor& x) {
  if (x.dim() >= 2) return x;
  return x.dim() == 1 ? x.reshape({1, x.size(0)}) : x.reshape({1, 1});
}

void require_tensors(const std::vector<Tensor>& tensors, const char* fn) {
  if (tensors.empty()) throw ValueError(str(fn, ": expects a non-empty list of tensors"));
  for (const Tensor& t : tensors) require_defined(t, fn, "tensors");
}

// ---- index_put ----

// A value may have more dims than the indexed result when the extra leading
// ones have size 1 (NumPy and PyTorch drop them).
Tensor drop_leading_ones(Tensor v, size_t rank) {
  while (size_t(v.dim()) > rank && v.size(0) == 1) v = v.squeeze(0);
  return v;
}

Tensor broadcast_value(const Tensor& value, const Shape& target) {
  Tensor v = drop_leading_ones(value, target.size());
  bool ok = v.shape().size() <= target.size();
  for (size_t i = 0; ok && i < v.shape().size(); ++i) {
    const int64_t a = v.shape()[v.shape().size() - 1 - i], t = target[target.size() - 1 - i];
    ok = a == 1 || a == t;
  }
  if (!ok)
    throw ShapeError(str("index_put: values of shape ", shape_str(value.shape()),
                         " cannot be broadcast to the indexing result of shape ", shape_str(target)));
  return v.expand(target);
}

}  // namespace

// ---- type promotion ----

DType result_type(const std::vector<Tensor>& operands) {
  return promote(operands.size(), [&](size_t i) { return operand_of(operands[i]); });
}

DType result_type(const Tensor& a, const Tensor& b) { return result_type(std::vector<Tensor>{a, b}); }

DType result_type(const Tensor& a, double b) {
  require_defined(a, "result_type", "a");
  // The dtype oar/tensor_ops.h's scalar rule gives b (scalar_tensor), as a 0-d operand.
  const bool integral = std::isfinite(b) && b == std::floor(b);
  const DType scalar = scalar_operand_dtype(a.dtype(), integral ? ScalarKind::kInteger : ScalarKind::kFloat);
  return promote(2, [&](size_t i) -> std::optional<PromotionOperand> {
    if (i == 0) return operand_of(a);
    return PromotionOperand{scalar, true};
  });
}

// ---- math ----

Tensor remainder(const Tensor& a, const Tensor& b) { return rounded_divide(a, b, "int_remainder", remainder_float); }
Tensor remainder(const Tensor& a, double b) { return remainder(a, scalar_tensor(b, a)); }
Tensor remainder(double a, const Tensor& b) { return remainder(scalar_tensor(a, b), b); }

// (Here rather than in inplace.cpp: it shares rounded_divide with remainder.)
Tensor fmod_(const Tensor& self, const Tensor& other) {
  return inplace_assign(self, fmod_any(self.inplace_source({other}), other), "fmod_");
}
Tensor fmod_(const Tensor& self, double other) { return fmod_(self, scalar_tensor(other, self)); }

Tensor round(const Tensor& x, int64_t decimals) {
  require_defined(x, "round", "x");
  if (!is_floating(x.dtype())) return x.clone();  // integers are whole already (PyTorch keeps their dtype)
  if (decimals == 0) return oar::round(x);
  const Tensor scale = scalar_tensor(std::pow(10.0, double(decimals)), x);
  return oar::div(oar::round(oar::mul(x, scale)), scale);
}

Tensor reciprocal(const Tensor& x) { return 1.0 / x; }

Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  require_defined(x, "clamp", "x");
  if (!lo.defined() && !hi.defined()) throw ValueError("clamp: at least one of min and max must be defined");
  Tensor y = lo.defined() ? oar::maximum(x, lo) : x;
  return hi.defined() ? oar::minimum(y, hi) : y;
}

Tensor clamp_min(const Tensor& x, double lo) { return oar::clamp(x, lo, kInf); }
Tensor clamp_max(const Tensor& x, double hi) { return oar::clamp(x, -kInf, hi); }

// Python's lerp: the ends in their common dtype (floating only), the weight in it too.
Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  const DType dt = result_type(start, end);
  if (!is_floating(dt)) throw DTypeError(str("lerp: expected floating point tensors, got ", dtype_name(dt)));
  return oar::lerp(start.to(dt), end.to(dt), constant(weight, dt, start));
}

Tensor where(const Tensor& condition, const Tensor& a, double b) {
  require_defined(a, "where", "a");
  return oar::where(condition, a, scalar_tensor(b, a));
}

Tensor where(const Tensor& condition, double a, const Tensor& b) {
  require_defined(b, "where", "b");
  return oar::where(condition, scalar_tensor(a, b), b);
}

// ---- comparison ----

bool equal(const Tensor& a, const Tensor& b) {
  require_defined(a, "equal", "a");
  require_defined(b, "equal", "b");
  if (a.shape() != b.shape()) return false;
  return oar::all(oar::eq(a, b)).item() != 0;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return oar::all(oar::isclose(a, b, rtol, atol, equal_nan)).item() != 0;
}

Tensor isnan(const Tensor& x) { return oar::ne(x, x); }

Tensor isinf(const Tensor& x) {
  if (!is_floating(x.dtype())) return false_like(x);
  return oar::eq(oar::abs(x), constant(kInf, x.dtype(), x));
}

Tensor isposinf(const Tensor& x) {
  if (!is_floating(x.dtype())) return false_like(x);
  return oar::eq(x, constant(kInf, x.dtype(), x));
}

Tensor isneginf(const Tensor& x) {
  if (!is_floating(x.dtype())) return false_like(x);
  return oar::eq(x, constant(-kInf, x.dtype(), x));
}

Tensor isfinite(const Tensor& x) {
  if (!is_floating(x.dtype())) return oar::logical_not(false_like(x));
  return oar::lt(oar::abs(x), constant(kInf, x.dtype(), x));  // false for inf and NaN
}

// ---- reduction ----

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dim, bool keepdim) {
  require_defined(x, "norm", "x");
  if (!is_floating(x.dtype()))
    throw DTypeError(str("norm: input dtype should be floating point, got ", dtype_name(x.dtype())));
  return oar::vector_norm(x, dim, keepdim, p);
}

Tensor norm(const Tensor& x, const std::string& p, const std::vector<int64_t>& dim, bool keepdim) {
  if (p == "fro") return norm(x, 2.0, dim, keepdim);
  if (p != "nuc") throw ValueError(str("norm: p='", p, "' is not supported (use 'fro', 'nuc' or a number)"));
  require_defined(x, "norm", "x");
  if (!is_floating(x.dtype()))
    throw DTypeError(str("norm: input dtype should be floating point, got ", dtype_name(x.dtype())));
  if (dim.empty() && x.dim() != 2)
    throw ShapeError(str("norm: p='nuc' needs a 2-D input or a dim of two dims, got a ", x.dim(), "-D input"));
  if (!dim.empty() && dim.size() != 2) throw ValueError(str("norm: p='nuc' needs two dims, got ", dim.size()));
  const int64_t d0 = normalize_axis(dim.empty() ? 0 : dim[0], x.dim());
  const int64_t d1 = normalize_axis(dim.empty() ? 1 : dim[1], x.dim());
  if (d0 == d1) throw ValueError(str("norm: p='nuc' needs two different dims, got ", d0, " twice"));
  // The sum of the singular values of the matrices in dims (d0, d1) (Python's linalg.matrix_norm).
  const Tensor m = oar::movedim(x, {d0, d1}, {x.dim() - 2, x.dim() - 1});
  const Tensor s = oar::linalg_svd(m, false)[1];
  Tensor r = oar::sum(s, {s.dim() - 1});
  if (keepdim) r = r.unsqueeze(std::min(d0, d1)).unsqueeze(std::max(d0, d1));
  return r;
}

// ---- sort ----

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  require_defined(x, "argsort", "x");
  const Tensor keys = x.dtype() == DType::boolean ? x.to(DType::u8) : x;  // sort has no bool form
  return oar::sort(keys, dim, descending)[1];
}

// ---- shape ----

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  require_defined(x, "repeat", "x");
  if (int64_t(repeats.size()) < x.dim())
    throw ShapeError(str("repeat: the number of repeats (", repeats.size(),
                         ") can not be smaller than the number of dimensions of the tensor (", x.dim(), ")"));
  for (int64_t r : repeats)
    if (r < 0) throw ValueError(str("repeat: repeats must be non-negative, got ", r));
  Shape shape(repeats.size() - size_t(x.dim()), 1);
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  // Each dim s becomes [1, s] expanded to [r, s], then merged into r * s.
  Shape interleaved, expanded, result;
  for (size_t i = 0; i < shape.size(); ++i) {
    interleaved.push_back(1), interleaved.push_back(shape[i]);
    expanded.push_back(repeats[i]), expanded.push_back(shape[i]);
    result.push_back(repeats[i] * shape[i]);
  }
  return x.reshape(interleaved).expand(expanded).reshape(result);
}

Tensor unflatten(const Tensor& x, int64_t dim, const std::vector<int64_t>& sizes) {
  require_defined(x, "unflatten", "x");
  if (x.dim() == 0) throw ShapeError("unflatten: a 0-d tensor has no dim to unflatten");
  const int64_t d = normalize_axis(dim, x.dim());
  if (sizes.empty()) throw ValueError("unflatten: sizes must be non-empty");
  int64_t known = 1, unknown = 0;
  for (int64_t s : sizes) {
    if (s == -1) ++unknown;
    else if (s < 0) throw ShapeError(str("unflatten: invalid size ", s));
    else known *= s;
  }
  const int64_t n = x.size(d);
  const bool fits = unknown == 0 ? known == n : unknown == 1 && known != 0 && n % known == 0;
  if (!fits)
    throw ShapeError(str("unflatten: provided sizes ", shape_str(sizes), " don't multiply up to the size of dim ", dim,
                         " (", n, ") in the input tensor"));
  Shape shape(x.shape().begin(), x.shape().begin() + d);
  for (int64_t s : sizes) shape.push_back(s == -1 ? n / known : s);
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  return x.reshape(shape);
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  require_tensors(tensors, "hstack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(atleast_1d(t));
  return oar::concat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  require_tensors(tensors, "vstack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(atleast_2d(t));
  return oar::concat(parts, 0);
}

Tensor swapaxes(const Tensor& x, int64_t axis0, int64_t axis1) { return x.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& x, int64_t dim0, int64_t dim1) { return x.transpose(dim0, dim1); }
Tensor broadcast_to(const Tensor& x, const std::vector<int64_t>& shape) { return x.expand(shape); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return x.unsqueeze(dim); }

// ---- indexing ----

// x[indices] = values written with put (a scatter: the last write to a
// position wins) or put's accumulate (scatter_add) into x with the indexed
// dims moved first; each index names a row of those dims, and each row's
// elements are its element indices in the permuted, flattened x.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  require_defined(x, "index_put", "x");
  require_defined(values, "index_put", "values");
  // One entry per dim of x the indices address: an i64 index, or undefined (the whole dim).
  std::vector<Tensor> per_dim;
  for (const Tensor& t : indices) {
    if (!t.defined()) {
      per_dim.push_back(Tensor());
      continue;
    }
    const Tensor i = t.to(x.device());
    if (i.dtype() == DType::boolean) {  // a mask: one index per dim it covers (its nonzero positions)
      if (i.dim() == 0) throw IndexError("index_put: a 0-d boolean index is not supported");
      if (int64_t(per_dim.size()) + i.dim() > x.dim())
        throw IndexError(str("index_put: too many indices for a tensor of dimension ", x.dim()));
      for (int64_t k = 0; k < i.dim(); ++k)
        if (i.size(k) != x.size(int64_t(per_dim.size()) + k))
          throw IndexError(str("index_put: the shape of the mask ", shape_str(i.shape()), " does not match the ",
                               "indexed tensor ", shape_str(x.shape()), " at dimension ", int64_t(per_dim.size()) + k));
      const Tensor positions = oar::nonzero(i);  // [n, i.dim()]
      for (int64_t k = 0; k < i.dim(); ++k) per_dim.push_back(positions.select(1, k).to(DType::i64));
      continue;
    }
    if (!is_integral(i.dtype()))
      throw IndexError(str("index_put: tensors used as indices must be integer or bool tensors, got ",
                           dtype_name(i.dtype())));
    per_dim.push_back(i.to(DType::i64));
  }
  if (int64_t(per_dim.size()) > x.dim())
    throw IndexError(str("index_put: too many indices for a tensor of dimension ", x.dim(), " (got ", per_dim.size(),
                         ")"));
  std::vector<int64_t> adv;  // the indexed dims
  Shape index_shape;         // the index tensors' broadcast shape
  for (size_t d = 0; d < per_dim.size(); ++d)
    if (per_dim[d].defined()) {
      adv.push_back(int64_t(d));
      index_shape = broadcast_shapes(index_shape, per_dim[d].shape());
    }
  Tensor v = values.to(x.device()).to(x.dtype());
  if (adv.empty()) {  // no index tensor: the whole of x
    Tensor whole = broadcast_value(v, x.shape());
    return accumulate ? oar::add(x, whole) : whole.clone();
  }
  // The flat row index over the indexed dims (row-major), negative entries wrapped.
  const bool on_host_check = graph::Tracer::active() == nullptr;  // a trace cannot read values back
  Tensor row;
  for (int64_t d : adv) {
    const int64_t n = x.size(d);
    const Tensor i = per_dim[size_t(d)].expand(index_shape);
    if (on_host_check && i.numel() > 0) {
      const int64_t lo = int64_t(oar::min(i).item()), hi = int64_t(oar::max(i).item());
      if (lo < -n || hi >= n)
        throw IndexError(str("index ", lo < -n ? lo : hi, " is out of bounds for dimension ", d, " with size ", n));
    }
    const Tensor size = constant(double(n), DType::i64, x);
    const Tensor wrapped = oar::where(oar::lt(i, constant(0, DType::i64, x)), oar::add(i, size), i);
    row = row.defined() ? oar::add(oar::mul(row, size), wrapped) : wrapped;
  }
  // x with the indexed dims first: [indexed..., rest...].
  std::vector<int64_t> order(adv.begin(), adv.end());
  Shape rest;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (std::find(adv.begin(), adv.end(), d) == adv.end()) order.push_back(d), rest.push_back(x.size(d));
  bool adjacent = true;
  for (size_t k = 1; k < adv.size(); ++k) adjacent = adjacent && adv[k] == adv[k - 1] + 1;
  const int64_t insert_at = adjacent ? adv.front() : 0;  // where x[indices] shows the index dims
  const int64_t k = int64_t(index_shape.size()), r = int64_t(rest.size());
  const int64_t count = numel_of(index_shape), inner = numel_of(rest);
  if (count == 0 || inner == 0) return x.clone();  // nothing is written
  // values as x[indices] is shaped: rest[:insert_at] + index_shape + rest[insert_at:],
  // then laid out as [index rows, rest elements].
  Shape shown(rest.begin(), rest.begin() + insert_at);
  shown.insert(shown.end(), index_shape.begin(), index_shape.end());
  shown.insert(shown.end(), rest.begin() + insert_at, rest.end());
  std::vector<int64_t> to_rows;
  for (int64_t i = 0; i < k; ++i) to_rows.push_back(insert_at + i);
  for (int64_t i = 0; i < r; ++i) to_rows.push_back(i < insert_at ? i : k + i);
  const Tensor source = broadcast_value(v, shown).permute(to_rows).reshape({count, inner});
  // Element e of row j sits at row[j] * inner + e of the permuted x, flattened.
  const Tensor elements = oar::add(oar::mul(row.reshape({count, 1}), constant(double(inner), DType::i64, x)),
                                   oar::arange(0, double(inner), 1, DType::i64, x.device()).reshape({1, inner}));
  const bool as_u8 = x.dtype() == DType::boolean;  // scatter_add (accumulate) has no bool form
  const Tensor target = as_u8 ? x.permute(order).to(DType::u8) : x.permute(order);
  Tensor written = oar::put(target, elements, as_u8 ? source.to(DType::u8) : source, accumulate);
  if (as_u8) written = written.to(DType::boolean);
  std::vector<int64_t> back(order.size());
  for (size_t i = 0; i < order.size(); ++i) back[size_t(order[i])] = int64_t(i);
  return written.permute(back).contiguous();
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, double value, bool accumulate) {
  require_defined(x, "index_put", "x");
  return index_put(x, indices, constant(value, x.dtype(), x), accumulate);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  require_defined(x, "masked_fill", "x");
  require_defined(value, "masked_fill", "value");
  if (value.numel() != 1)
    throw ShapeError(str("masked_fill: value must be a 0-d (one-element) tensor, got shape ", shape_str(value.shape())));
  if (mask.dtype() != DType::boolean)
    throw DTypeError(str("masked_fill: the mask must be bool, got ", dtype_name(mask.dtype())));
  return oar::where(mask, value.reshape({}).to(x.dtype()), x);
}

}  // namespace oar
