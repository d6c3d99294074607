// Catalog: linear algebra on batches of matrices ([..., m, n], float32 or
// float64): the factorizations with kernels (Cholesky, LU, QR, symmetric
// eigendecomposition, SVD of a tall matrix, triangular and LU solves, tril and
// triu) and the composites written with them (solve, inv, det, slogdet, SVD
// of any shape), each with a gradient rule (runtime/src/autograd/rules_linalg.cpp).
// Kernels: kernel_primitives' linalg family on every device. Errors name the
// PyTorch function (linalg.cholesky, ...), which is what users call.
#include "catalog_util.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

Shape with_tail(Shape s, std::initializer_list<int64_t> tail) {
  for (int64_t d : tail) s.push_back(d);
  return s;
}

void require_linalg_dtype(const InferContext& c, size_t i, const char* fn) {
  const DType d = c.dtype(i);
  if (d != DType::f32 && d != DType::f64)
    throw DTypeError(str(fn, ": expected a float32 or float64 tensor for '", c.schema.inputs[i].name, "', got ",
                         dtype_name(d)));
}

void require_matrix(const InferContext& c, size_t i, const char* fn, bool square) {
  if (c.ndim(i) < 2)
    throw ShapeError(str(fn, ": '", c.schema.inputs[i].name, "' must have at least 2 dimensions, got shape ",
                         shape_str(c.shape(i))));
  const Shape& s = c.shape(i);
  if (square && s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError(str(fn, ": '", c.schema.inputs[i].name, "' must be batches of square matrices, got shape ",
                         shape_str(s)));
  require_linalg_dtype(c, i, fn);
}

// b (or the lu factors' right-hand side) next to a square a: same batch, n rows.
void require_rhs(const InferContext& c, size_t a, size_t b, const char* fn) {
  require_matrix(c, b, fn, false);
  const Shape &sa = c.shape(a), &sb = c.shape(b);
  if (batch_of(sa) != batch_of(sb) || sb[sb.size() - 2] != sa[sa.size() - 1])
    throw ShapeError(str(fn, ": '", c.schema.inputs[b].name, "' of shape ", shape_str(sb),
                         " does not match the matrices of shape ", shape_str(sa),
                         " (same batch dims, and as many rows as the matrices have columns)"));
  if (c.dtype(a) != c.dtype(b))
    throw DTypeError(str(fn, ": expected '", c.schema.inputs[a].name, "' and '", c.schema.inputs[b].name,
                         "' of one dtype, got ", dtype_name(c.dtype(a)), " and ", dtype_name(c.dtype(b))));
}

OpSchema linalg_schema(const std::string& name, std::vector<InputSpec> inputs, std::vector<std::string> outputs,
                       std::vector<AttrSpec> attrs, InferFn infer, std::string doc) {
  return make_schema(name, std::move(inputs), std::move(outputs), std::move(attrs), std::move(infer), std::move(doc),
                     DTypePolicy::kNone);
}

// Written with the factorizations, but with a gradient rule of its own.
OpSchema with_decomposition(OpSchema s, DecomposeFn fn) {
  s.decompose = std::move(fn);
  return s;
}

std::vector<int32_t> host_ints(const Tensor& t) { return t.to(DType::i32).to_vector<int32_t>(); }

// LU of square matrices, refusing singular ones (solve, inv).
std::vector<Tensor> lu_nonsingular(const Tensor& a, const char* fn) {
  auto lu = call("linalg_lu_factor", {a});
  const auto info = host_ints(lu[2]);
  for (size_t k = 0; k < info.size(); ++k)
    if (info[k] > 0)
      throw ValueError(str(fn, ": The solver failed because the input matrix", info.size() > 1 ? str(" ", k) : "",
                           " is singular (U[", info[k] - 1, ", ", info[k] - 1, "] is zero)."));
  return lu;
}

// The sign of each permutation that LU's pivots (1-based row swaps) make.
Tensor pivot_signs(const Tensor& pivots, const Tensor& like, const Shape& batch) {
  const auto p = host_ints(pivots);
  const int64_t n = pivots.dim() == 0 ? 0 : pivots.shape().back();
  std::vector<double> signs;
  for (size_t b = 0; n > 0 && b < p.size() / size_t(n); ++b) {
    double s = 1;
    for (int64_t i = 0; i < n; ++i)
      if (p[b * size_t(n) + size_t(i)] != i + 1) s = -s;
    signs.push_back(s);
  }
  if (n == 0) signs.assign(size_t(numel_of(batch)), 1.0);
  return Tensor::from_vector(signs, batch, Device::cpu()).to(like.dtype()).to(like.device());
}

// The diagonals of [..., n, n] as [..., n].
Tensor diagonal_of(const Tensor& m) {
  const int64_t n = m.shape().back();
  Tensor eye = call1("tril", {call1("triu", {Tensor::ones({n, n}, m.dtype(), m.device())})});
  return call1("sum", {call1("mul", {m, eye})}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}});
}

std::vector<Tensor> det_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor& a = in[0];
  const Shape batch = batch_of(a.shape());
  if (a.shape().back() == 0) return {Tensor::ones(batch, a.dtype(), a.device())};
  auto lu = call("linalg_lu_factor", {a});
  Tensor d = call1("prod", {diagonal_of(lu[0])}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}});
  return {call1("mul", {d, pivot_signs(lu[1], a, batch)})};
}

std::vector<Tensor> slogdet_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor& a = in[0];
  const Shape batch = batch_of(a.shape());
  if (a.shape().back() == 0) return {Tensor::ones(batch, a.dtype(), a.device()), Tensor::zeros(batch, a.dtype(), a.device())};
  auto lu = call("linalg_lu_factor", {a});
  const Tensor diag = diagonal_of(lu[0]);
  const Attrs last{{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}};
  Tensor sign = call1("mul", {call1("prod", {call1("sign", {diag})}, last), pivot_signs(lu[1], a, batch)});
  Tensor logabs = call1("sum", {call1("log", {call1("abs", {diag})})}, last);
  return {sign, logabs};
}

std::vector<Tensor> solve_decompose(const std::vector<Tensor>& in, const Attrs&) {
  auto lu = lu_nonsingular(in[0], "linalg.solve");
  return {call1("linalg_lu_solve", {lu[0], lu[1], in[1]})};
}

std::vector<Tensor> inv_decompose(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor& a = in[0];
  const int64_t n = a.shape().back();
  auto lu = lu_nonsingular(a, "linalg.inv");
  Tensor eye = call1("tril", {call1("triu", {Tensor::ones({n, n}, a.dtype(), a.device())})});
  return {call1("linalg_lu_solve", {lu[0], lu[1], eye.expand(a.shape()).contiguous()})};
}

// A wide matrix is the transpose of a tall one: a^T = u' s v'^T, so a = v' s u'^T.
std::vector<Tensor> svd_decompose(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor& a = in[0];
  const int64_t m = a.shape()[a.dim() - 2], n = a.shape().back();
  const Attrs full{{"full_matrices", attrs.get_bool("full_matrices")}};
  if (m >= n) {
    auto r = call("linalg_svd_tall", {a}, full);
    return {r[0], r[1], r[2].transpose(-2, -1).contiguous()};
  }
  auto r = call("linalg_svd_tall", {a.transpose(-2, -1).contiguous()}, full);
  return {r[2], r[1], r[0].transpose(-2, -1).contiguous()};
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  const std::vector<InputSpec> x{InputSpec{"x"}};
  const std::vector<InputSpec> A{InputSpec{"A"}};
  for (const char* name : {"tril", "triu"}) {
    const bool upper = name[3] == 'u';
    r.add(make_schema(name, x, {"y"}, {attr("diagonal", AttrType::kInt, int64_t(0))},
                      [](const InferContext& c) -> std::vector<TensorMeta> {
                        if (c.ndim(0) < 2)
                          throw ShapeError(str(c.schema.name, ": input must have at least 2 dimensions, got shape ",
                                               shape_str(c.shape(0))));
                        return {{c.shape(0), c.dtype(0)}};
                      },
                      upper ? "the elements on and above diagonal `diagonal` of each matrix; the rest zero"
                            : "the elements on and below diagonal `diagonal` of each matrix; the rest zero",
                      DTypePolicy::kNone),
          {"[4,5]", "[3,4,4] diagonal=1", "[5,3] diagonal=-1", "[2,3]{0:2}"});
  }

  r.add(linalg_schema("linalg_cholesky", A, {"L", "info"}, {attr("upper", AttrType::kBool, false)},
                      [](const InferContext& c) -> std::vector<TensorMeta> {
                        require_matrix(c, 0, "linalg.cholesky", true);
                        return {{c.shape(0), c.dtype(0)}, {batch_of(c.shape(0)), DType::i32}};
                      },
                      "Cholesky factor of symmetric positive-definite matrices (lower, or upper = L^T; reads the "
                      "lower triangle); info = order of the first leading minor that is not positive definite, 0 if none"),
        // 1x1 examples: a random matrix is rarely positive definite (the op cases
        // would still agree, but a gradient check needs a factorization)
        {"[1,1]{1:2}", "[3,1,1]{1:2} upper=true"});

  r.add(backward_kernel(
            linalg_schema("linalg_lu_factor", A, {"LU", "pivots", "info"}, {},
                          [](const InferContext& c) -> std::vector<TensorMeta> {
                            require_matrix(c, 0, "linalg.lu_factor", false);
                            const Shape& s = c.shape(0);
                            const int64_t k = std::min(s[s.size() - 2], s.back());
                            return {{s, c.dtype(0)}, {with_tail(batch_of(s), {k}), DType::i32},
                                    {batch_of(s), DType::i32}};
                          },
                          "LU factorization with partial pivoting (LAPACK getrf): L (unit, below the diagonal) and U "
                          "packed in LU, 1-based row swaps, info = first zero pivot + 1 (0 if none); LU has a "
                          "gradient for square A")),
        {"[4,4]", "[2,3,5]", "[5,3]"});

  r.add(backward_kernel(
            linalg_schema("linalg_lu_solve", {InputSpec{"LU"}, unpromoted("pivots"), InputSpec{"B"}}, {"X"}, {},
                          [](const InferContext& c) -> std::vector<TensorMeta> {
                            require_matrix(c, 0, "linalg.lu_solve", true);
                            require_integral_index(c, 1);
                            require_rhs(c, 0, 2, "linalg.lu_solve");
                            const Shape& s = c.shape(0);
                            if (c.shape(1) != with_tail(batch_of(s), {s.back()}))
                              throw ShapeError(str("linalg.lu_solve: pivots of shape ", shape_str(c.shape(1)),
                                                   " do not match LU of shape ", shape_str(s)));
                            return {{c.shape(2), c.dtype(2)}};
                          },
                          "solves A X = B from A's LU factorization (linalg_lu_factor)"),
            Gradient::kNone),
        // any pivots in range are a valid factorization's; U's diagonal away from zero
        {"[3,3]{1:2} [3]{1:4} [3,2]", "[2,4,4]{1:2} [2,4]{1:5} [2,4,1]"});

  r.add(linalg_schema("linalg_solve_triangular", {InputSpec{"A"}, InputSpec{"B"}}, {"X"},
                      {attr("upper", AttrType::kBool), attr("unitriangular", AttrType::kBool, false)},
                      [](const InferContext& c) -> std::vector<TensorMeta> {
                        require_matrix(c, 0, "linalg.solve_triangular", true);
                        require_rhs(c, 0, 1, "linalg.solve_triangular");
                        return {{c.shape(1), c.dtype(1)}};
                      },
                      "solves A X = B for triangular A (only its upper or lower triangle is read)"),
        {"[4,4]{1:2} [4,3] upper=true", "[2,3,3]{1:2} [2,3,2] upper=false unitriangular=true"});

  r.add(linalg_schema("linalg_qr", A, {"Q", "R"}, {attr("mode", AttrType::kString, std::string("reduced"))},
                      [](const InferContext& c) -> std::vector<TensorMeta> {
                        require_matrix(c, 0, "linalg.qr", false);
                        const std::string mode = c.attrs.get_string("mode");
                        if (mode != "reduced" && mode != "complete" && mode != "r")
                          throw ValueError(str("linalg.qr: mode must be 'reduced', 'complete' or 'r', got '", mode, "'"));
                        const Shape& s = c.shape(0);
                        const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
                        const int64_t cols = mode == "complete" ? m : k;
                        Shape q = mode == "r" ? Shape{0} : with_tail(batch_of(s), {m, cols});
                        return {{q, c.dtype(0)}, {with_tail(batch_of(s), {cols, n}), c.dtype(0)}};
                      },
                      "QR factorization by Householder reflections (signs as LAPACK's geqrf)"),
        {"[5,3]", "[3,5]", "[2,4,4] mode='complete'", "[6,4] mode='r'"});

  r.add(linalg_schema("linalg_eigh", A, {"eigenvalues", "eigenvectors"},
                      {attr("UPLO", AttrType::kString, std::string("L"))},
                      [](const InferContext& c) -> std::vector<TensorMeta> {
                        require_matrix(c, 0, "linalg.eigh", true);
                        const std::string uplo = c.attrs.get_string("UPLO");
                        if (uplo != "L" && uplo != "U")
                          throw ValueError(str("linalg.eigh: UPLO must be 'L' or 'U', got '", uplo, "'"));
                        const Shape& s = c.shape(0);
                        return {{with_tail(batch_of(s), {s.back()}), c.dtype(0)}, {s, c.dtype(0)}};
                      },
                      "eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric matrices, from the "
                      "UPLO triangle (Jacobi rotations)"),
        {"[4,4]", "[2,3,3] UPLO='U'"});

  r.add(backward_kernel(
            linalg_schema("linalg_svd_tall", A, {"U", "S", "V"}, {attr("full_matrices", AttrType::kBool, false)},
                          [](const InferContext& c) -> std::vector<TensorMeta> {
                            require_matrix(c, 0, "linalg.svd", false);
                            const Shape& s = c.shape(0);
                            const int64_t m = s[s.size() - 2], n = s.back();
                            if (m < n)
                              throw ShapeError(str("linalg_svd_tall: expects m >= n, got shape ", shape_str(s)));
                            const Shape b = batch_of(s);
                            return {{with_tail(b, {m, c.attrs.get_bool("full_matrices") ? m : n}), c.dtype(0)},
                                    {with_tail(b, {n}), c.dtype(0)},
                                    {with_tail(b, {n, n}), c.dtype(0)}};
                          },
                          "SVD of tall matrices (m >= n) by one-sided Jacobi: U, S (descending), V (not transposed)"),
            Gradient::kNone),
        {"[5,3]", "[2,4,4] full_matrices=true"});

  r.add(with_decomposition(linalg_schema("linalg_svd", A, {"U", "S", "Vh"}, {attr("full_matrices", AttrType::kBool, true)},
                                [](const InferContext& c) -> std::vector<TensorMeta> {
                                  require_matrix(c, 0, "linalg.svd", false);
                                  const Shape& s = c.shape(0);
                                  const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
                                  const bool full = c.attrs.get_bool("full_matrices");
                                  const Shape b = batch_of(s);
                                  return {{with_tail(b, {m, full ? m : k}), c.dtype(0)},
                                          {with_tail(b, {k}), c.dtype(0)},
                                          {with_tail(b, {full ? n : k, n}), c.dtype(0)}};
                                },
                                "singular value decomposition A = U diag(S) Vh, S descending"),
                  svd_decompose),
        // reduced: U's columns past min(m, n) are arbitrary, so they get no gradient
        {"[5,3] full_matrices=false", "[3,5] full_matrices=false", "[2,4,4] full_matrices=false"});

  r.add(with_decomposition(linalg_schema("linalg_solve", {InputSpec{"A"}, InputSpec{"B"}}, {"X"}, {},
                                [](const InferContext& c) -> std::vector<TensorMeta> {
                                  require_matrix(c, 0, "linalg.solve", true);
                                  require_rhs(c, 0, 1, "linalg.solve");
                                  return {{c.shape(1), c.dtype(1)}};
                                },
                                "solves A X = B (LU with partial pivoting); a singular A is an error"),
                  solve_decompose),
        {"[4,4] [4,2]", "[2,3,3] [2,3,1]"});
  r.add(with_decomposition(linalg_schema("linalg_inv", A, {"Ainv"}, {},
                                [](const InferContext& c) -> std::vector<TensorMeta> {
                                  require_matrix(c, 0, "linalg.inv", true);
                                  return {{c.shape(0), c.dtype(0)}};
                                },
                                "inverse of square matrices; a singular matrix is an error"),
                  inv_decompose),
        {"[3,3]", "[2,4,4]"});
  r.add(with_decomposition(linalg_schema("linalg_det", A, {"det"}, {},
                                [](const InferContext& c) -> std::vector<TensorMeta> {
                                  require_matrix(c, 0, "linalg.det", true);
                                  return {{batch_of(c.shape(0)), c.dtype(0)}};
                                },
                                "determinant of square matrices (from LU)"),
                  det_decompose),
        {"[3,3]", "[2,4,4]"});
  r.add(with_decomposition(linalg_schema("linalg_slogdet", A, {"sign", "logabsdet"}, {},
                                [](const InferContext& c) -> std::vector<TensorMeta> {
                                  require_matrix(c, 0, "linalg.slogdet", true);
                                  const Shape b = batch_of(c.shape(0));
                                  return {{b, c.dtype(0)}, {b, c.dtype(0)}};
                                },
                                "sign and log of the absolute value of the determinant (from LU)"),
                  slogdet_decompose),
        {"[3,3]", "[2,4,4]"});
}

}  // namespace oar
