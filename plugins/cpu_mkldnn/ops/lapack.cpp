// CPU linear algebra on LAPACK (LAPACKE, row-major) and BLAS (cblas trsm),
// above the linalg family of kernel_primitives/ that every device gets:
// Cholesky (potrf), LU (getrf/getrs), triangular solves (trsm), QR
// (geqrf/orgqr), symmetric eigendecomposition (syevd) and the SVD of a tall
// matrix (gesdd). Results keep the family's conventions, so devices agree:
// a failed Cholesky leaves a zero factor, and eigen-/singular vectors get
// the canonical sign (largest component positive), as in linalg.kp.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "oar/plugin_sdk/kernel_api.hpp"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

namespace sdk = oar::sdk;

template <class T>
T* at(const oar_tensor_view& v) {
  return reinterpret_cast<T*>(static_cast<char*>(v.data) + v.offset * int64_t(sizeof(T)));
}

struct Mats {
  int64_t batch, rows, cols;
};
// Counts empty (0 x n) matrices too: their info and pivots are still written.
Mats mats(const oar_tensor_view& v) {
  int64_t batch = 1;
  for (int32_t i = 0; i + 2 < v.ndim; ++i) batch *= v.shape[i];
  return {batch, v.shape[v.ndim - 2], v.shape[v.ndim - 1]};
}

// One LAPACKE entry point per precision, picked by T.
template <class T>
struct Lapack;
template <>
struct Lapack<float> {
  static constexpr auto potrf = LAPACKE_spotrf;
  static constexpr auto getrf = LAPACKE_sgetrf;
  static constexpr auto getrs = LAPACKE_sgetrs;
  static constexpr auto geqrf = LAPACKE_sgeqrf;
  static constexpr auto orgqr = LAPACKE_sorgqr;
  static constexpr auto syevd = LAPACKE_ssyevd;
  static constexpr auto gesdd = LAPACKE_sgesdd;
  static constexpr auto trsm = cblas_strsm;
};
template <>
struct Lapack<double> {
  static constexpr auto potrf = LAPACKE_dpotrf;
  static constexpr auto getrf = LAPACKE_dgetrf;
  static constexpr auto getrs = LAPACKE_dgetrs;
  static constexpr auto geqrf = LAPACKE_dgeqrf;
  static constexpr auto orgqr = LAPACKE_dorgqr;
  static constexpr auto syevd = LAPACKE_dsyevd;
  static constexpr auto gesdd = LAPACKE_dgesdd;
  static constexpr auto trsm = cblas_dtrsm;
};

void check(lapack_int info, const char* routine, const char* op) {
  if (info < 0)
    sdk::fail(OAR_STATUS_INTERNAL, std::string(op) + ": LAPACK " + routine + " rejected argument " +
                                       std::to_string(-info));
}

// Column j of the row-major [rows, ld] matrix x: its largest component made
// positive (and column j of y, [n, n], flipped with it) -- linalg.kp's
// LA_CANONICAL_SIGN.
template <class T>
void canonical_sign(T* x, int64_t rows, int64_t ld, int64_t j, T* y, int64_t n) {
  int64_t best = 0;
  T big = -1;
  for (int64_t k = 0; k < rows; ++k)
    if (std::abs(x[k * ld + j]) > big) big = std::abs(x[k * ld + j]), best = k;
  if (!(x[best * ld + j] < T(0))) return;
  for (int64_t k = 0; k < rows; ++k) x[k * ld + j] = -x[k * ld + j];
  if (y)
    for (int64_t k = 0; k < n; ++k) y[k * n + j] = -y[k * n + j];
}

template <class T>
void cholesky(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(0));
  const int64_t n = d.rows;
  const bool upper = a.attr_bool("upper");
  T* L = at<T>(a.output(0));
  int32_t* info = at<int32_t>(a.output(1));
  std::memcpy(L, at<T>(a.input(0)), size_t(d.batch * n * n) * sizeof(T));
  for (int64_t b = 0; b < d.batch; ++b) {
    T* m = L + b * n * n;
    if (n == 0) {
      info[b] = 0;
      continue;
    }
    lapack_int r = Lapack<T>::potrf(LAPACK_ROW_MAJOR, 'L', lapack_int(n), m, lapack_int(n));
    check(r, "potrf", "linalg_cholesky");
    info[b] = int32_t(r);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (r > 0) m[i * n + j] = 0;  // as the primitive kernel: no partial factor
        else if (j > i) m[i * n + j] = 0;
      }
    if (upper)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < i; ++j) std::swap(m[i * n + j], m[j * n + i]);
  }
}

template <class T>
void lu_factor(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  T* lu = at<T>(a.output(0));
  int32_t* piv = at<int32_t>(a.output(1));
  int32_t* info = at<int32_t>(a.output(2));
  std::memcpy(lu, at<T>(a.input(0)), size_t(d.batch * m * n) * sizeof(T));
  std::vector<lapack_int> ipiv(size_t(std::max<int64_t>(k, 1)));
  for (int64_t b = 0; b < d.batch; ++b) {
    if (k == 0) {
      info[b] = 0;
      continue;
    }
    lapack_int r = Lapack<T>::getrf(LAPACK_ROW_MAJOR, lapack_int(m), lapack_int(n), lu + b * m * n,
                                    lapack_int(n), ipiv.data());
    check(r, "getrf", "linalg_lu_factor");
    info[b] = int32_t(r);
    for (int64_t i = 0; i < k; ++i) piv[b * k + i] = int32_t(ipiv[size_t(i)]);
  }
}

template <class T>
void lu_solve(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(2));
  const int64_t n = d.rows, k = d.cols;
  if (k == 0 || n == 0) return;
  const T* lu = at<T>(a.input(0));
  T* x = at<T>(a.output(0));
  std::memcpy(x, at<T>(a.input(2)), size_t(d.batch * n * k) * sizeof(T));
  std::vector<lapack_int> ipiv(size_t(std::max<int64_t>(n, 1)));
  const oar_tensor_view& pv = a.input(1);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = pv.dtype == OAR_DTYPE_I32 ? at<int32_t>(pv)[b * n + i] : at<int64_t>(pv)[b * n + i];
      ipiv[size_t(i)] = lapack_int(p >= 1 && p <= n ? p : i + 1);  // out of range: no swap (as the family)
    }
    check(Lapack<T>::getrs(LAPACK_ROW_MAJOR, 'N', lapack_int(n), lapack_int(k), lu + b * n * n, lapack_int(n),
                           ipiv.data(), x + b * n * k, lapack_int(k)),
          "getrs", "linalg_lu_solve");
  }
}

template <class T>
void solve_triangular(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(1));
  const int64_t n = d.rows, k = d.cols;
  if (k == 0 || n == 0) return;
  const T* A = at<T>(a.input(0));
  T* x = at<T>(a.output(0));
  std::memcpy(x, at<T>(a.input(1)), size_t(d.batch * n * k) * sizeof(T));
  const auto uplo = a.attr_bool("upper") ? CblasUpper : CblasLower;
  const auto diag = a.attr_bool("unitriangular") ? CblasUnit : CblasNonUnit;
  for (int64_t b = 0; b < d.batch; ++b)
    Lapack<T>::trsm(CblasRowMajor, CblasLeft, uplo, CblasNoTrans, diag, int(n), int(k), T(1), A + b * n * n, int(n),
                    x + b * n * k, int(k));
}

template <class T>
void qr(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const bool want_q = a.attr_string("mode") != "r";
  const oar_tensor_view& qv = a.output(0);
  const oar_tensor_view& rv = a.output(1);
  const int64_t qc = want_q ? qv.shape[qv.ndim - 1] : 0, rr = rv.shape[rv.ndim - 2];
  const T* in = at<T>(a.input(0));
  std::vector<T> w(size_t(m * std::max(n, qc))), tau(size_t(std::max<int64_t>(k, 1)));
  for (int64_t b = 0; b < d.batch; ++b) {
    if (k == 0) {  // an empty matrix: R is empty or zero, Q the identity's first columns
      std::fill(at<T>(rv) + b * rr * n, at<T>(rv) + (b + 1) * rr * n, T(0));
      if (want_q)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < qc; ++j) at<T>(qv)[b * m * qc + i * qc + j] = i == j ? T(1) : T(0);
      continue;
    }
    std::memcpy(w.data(), in + b * m * n, size_t(m * n) * sizeof(T));
    check(Lapack<T>::geqrf(LAPACK_ROW_MAJOR, lapack_int(m), lapack_int(n), w.data(), lapack_int(n), tau.data()),
          "geqrf", "linalg_qr");
    T* r = at<T>(rv) + b * rr * n;
    for (int64_t i = 0; i < rr; ++i)
      for (int64_t j = 0; j < n; ++j) r[i * n + j] = (j >= i && i < m) ? w[size_t(i * n + j)] : T(0);
    if (!want_q) continue;
    // orgqr wants the reflectors in the first k columns of an [m, qc] array.
    T* q = at<T>(qv) + b * m * qc;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < qc; ++j) q[i * qc + j] = j < k ? w[size_t(i * n + j)] : T(0);
    check(Lapack<T>::orgqr(LAPACK_ROW_MAJOR, lapack_int(m), lapack_int(qc), lapack_int(k), q, lapack_int(qc),
                           tau.data()),
          "orgqr", "linalg_qr");
  }
}

template <class T>
void eigh(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(0));
  const int64_t n = d.rows;
  const char uplo = a.attr_string("UPLO") == "U" ? 'U' : 'L';
  T* w = at<T>(a.output(0));
  T* v = at<T>(a.output(1));
  std::memcpy(v, at<T>(a.input(0)), size_t(d.batch * n * n) * sizeof(T));
  for (int64_t b = 0; b < d.batch && n > 0; ++b) {
    lapack_int r = Lapack<T>::syevd(LAPACK_ROW_MAJOR, 'V', uplo, lapack_int(n), v + b * n * n, lapack_int(n), w + b * n);
    check(r, "syevd", "linalg_eigh");
    if (r > 0) sdk::fail(OAR_STATUS_INTERNAL, "linalg.eigh: the algorithm failed to converge (LAPACK syevd info " +
                                                  std::to_string(r) + ")");
    for (int64_t j = 0; j < n; ++j) canonical_sign<T>(v + b * n * n, n, n, j, nullptr, 0);
  }
}

template <class T>
void svd_tall(const sdk::KernelArgs& a) {
  const Mats d = mats(a.input(0));
  const int64_t m = d.rows, n = d.cols;
  const oar_tensor_view& uv = a.output(0);
  const int64_t uc = uv.shape[uv.ndim - 1];
  std::vector<T> w(size_t(m * n)), vt(size_t(n * n));
  for (int64_t b = 0; b < d.batch; ++b) {
    std::memcpy(w.data(), at<T>(a.input(0)) + b * m * n, size_t(m * n) * sizeof(T));
    T* u = at<T>(uv) + b * m * uc;
    T* s = at<T>(a.output(1)) + b * n;
    T* v = at<T>(a.output(2)) + b * n * n;
    if (n == 0) {  // no singular values: U is the identity's first columns
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < uc; ++j) u[i * uc + j] = i == j ? T(1) : T(0);
      continue;
    }
    lapack_int r = Lapack<T>::gesdd(LAPACK_ROW_MAJOR, uc == m ? 'A' : 'S', lapack_int(m), lapack_int(n), w.data(),
                                    lapack_int(n), s, u, lapack_int(uc), vt.data(), lapack_int(n));
    check(r, "gesdd", "linalg_svd");
    if (r > 0) sdk::fail(OAR_STATUS_INTERNAL, "linalg.svd: the algorithm failed to converge (LAPACK gesdd info " +
                                                  std::to_string(r) + ")");
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) v[i * n + j] = vt[size_t(j * n + i)];
    for (int64_t j = 0; j < n; ++j) canonical_sign<T>(u, m, uc, j, v, n);
  }
}

template <void (*F32)(const sdk::KernelArgs&), void (*F64)(const sdk::KernelArgs&)>
oar_status_t kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (a.input(0).dtype == OAR_DTYPE_F64) F64(a);
    else F32(a);
  });
}

}  // namespace

oar_status_t register_lapack_kernels(const oar_kernel_registrar* r) {
  // Above the primitive family (priority 0): LAPACK's blocked algorithms win at every size that matters.
  constexpr int32_t kPriority = 10;
  for (oar_dtype_t t : {OAR_DTYPE_F32, OAR_DTYPE_F64}) {
    const std::initializer_list<oar_dtype_t> one{t};
    if (auto st = sdk::register_kernel(r, "linalg_cholesky", one, kernel<cholesky<float>, cholesky<double>>, "lapack",
                                       kPriority))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_lu_factor", one, kernel<lu_factor<float>, lu_factor<double>>,
                                       "lapack", kPriority))
      return st;
    for (oar_dtype_t i : {OAR_DTYPE_I32, OAR_DTYPE_I64})
      if (auto st = sdk::register_kernel(r, "linalg_lu_solve", {t, i, t}, kernel<lu_solve<float>, lu_solve<double>>,
                                         "lapack", kPriority))
        return st;
    if (auto st = sdk::register_kernel(r, "linalg_solve_triangular", {t, t},
                                       kernel<solve_triangular<float>, solve_triangular<double>>, "blas", kPriority))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_qr", one, kernel<qr<float>, qr<double>>, "lapack", kPriority))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_eigh", one, kernel<eigh<float>, eigh<double>>, "lapack", kPriority))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_svd_tall", one, kernel<svd_tall<float>, svd_tall<double>>, "lapack",
                                       kPriority))
      return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
