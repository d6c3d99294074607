// CUDA linear algebra on cuSOLVER (dense, one call per matrix of a batch) and
// cuBLAS (trsm), above the linalg family of kernel_primitives/ that every
// device gets: Cholesky (potrf), LU (getrf/getrs), triangular solves (trsm),
// QR (geqrf/orgqr), symmetric eigendecomposition (syevd) and the SVD of a
// tall matrix (gesvd). The CPU's lapack.cpp is the model: results keep the
// family's conventions, so devices agree (a failed Cholesky leaves a zero
// factor; eigen- and singular vectors get the canonical sign, largest
// component positive). cuSOLVER is column-major: a row-major matrix is its
// transpose there, which the symmetric and triangular cases use as it is and
// the others transpose through the strided copy primitive. Empty matrices are
// left to the family kernels (supports() declines them), and so is every call
// while OAR_CUDA_VENDOR_SOLVERS is 0 (the default until these kernels have
// passed the conformance suite on a GPU: docs/gpu_check.md).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

using namespace nn;

struct Mats {
  int64_t batch, rows, cols;
};
Mats mats(const oar_tensor_view& v) {
  int64_t batch = 1;
  for (int32_t i = 0; i + 2 < v.ndim; ++i) batch *= v.shape[i];
  return {batch, v.shape[v.ndim - 2], v.shape[v.ndim - 1]};
}

// Only with OAR_CUDA_VENDOR_SOLVERS on; cuSOLVER's legacy API takes int sizes.
int32_t fits(const oar_kernel_context* ctx, char* reason, size_t size) {
  if (!vendor_solvers()) {
    std::snprintf(reason, size, "%s is off", kVendorSolversFlag);
    return 0;
  }
  for (int32_t i = 0; i < ctx->num_inputs; ++i) {
    const oar_tensor_view& v = ctx->inputs[i];
    if (v.ndim < 2) continue;
    const Mats d = mats(v);
    if (d.rows == 0 || d.cols == 0) {
      std::snprintf(reason, size, "empty matrices are left to the linalg family");
      return 0;
    }
    if (d.rows * d.cols > INT32_MAX) {
      std::snprintf(reason, size, "a %lld x %lld matrix exceeds cuSOLVER's 32-bit sizes", (long long)d.rows,
                    (long long)d.cols);
      return 0;
    }
  }
  return 1;
}

// One cuSOLVER / cuBLAS entry point per precision, picked by T.
template <class T>
struct Solver;
template <>
struct Solver<float> {
  static constexpr auto potrf_size = &CusolverApi::Spotrf_bufferSize;
  static constexpr auto potrf = &CusolverApi::Spotrf;
  static constexpr auto getrf_size = &CusolverApi::Sgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::Sgetrf;
  static constexpr auto getrs = &CusolverApi::Sgetrs;
  static constexpr auto geqrf_size = &CusolverApi::Sgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::Sgeqrf;
  static constexpr auto orgqr_size = &CusolverApi::Sorgqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::Sorgqr;
  static constexpr auto syevd_size = &CusolverApi::Ssyevd_bufferSize;
  static constexpr auto syevd = &CusolverApi::Ssyevd;
  static constexpr auto gesvd_size = &CusolverApi::Sgesvd_bufferSize;
  static constexpr auto gesvd = &CusolverApi::Sgesvd;
  static constexpr auto trsm = &CublasApi::Strsm;
};
template <>
struct Solver<double> {
  static constexpr auto potrf_size = &CusolverApi::Dpotrf_bufferSize;
  static constexpr auto potrf = &CusolverApi::Dpotrf;
  static constexpr auto getrf_size = &CusolverApi::Dgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::Dgetrf;
  static constexpr auto getrs = &CusolverApi::Dgetrs;
  static constexpr auto geqrf_size = &CusolverApi::Dgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::Dgeqrf;
  static constexpr auto orgqr_size = &CusolverApi::Dorgqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::Dorgqr;
  static constexpr auto syevd_size = &CusolverApi::Dsyevd_bufferSize;
  static constexpr auto syevd = &CusolverApi::Dsyevd;
  static constexpr auto gesvd_size = &CusolverApi::Dgesvd_bufferSize;
  static constexpr auto gesvd = &CusolverApi::Dgesvd;
  static constexpr auto trsm = &CublasApi::Dtrsm;
};

// Calls a cuSOLVER entry point through its member of CusolverApi.
template <class M, class... A>
void solve(M member, const char* what, A... args) {
  check_cusolver((cusolver().*member)(args...), what);
}

// ---- small kernels around the library calls ----

unsigned blocks(int64_t n) { return unsigned((n + 255) / 256); }

// Row-major [n, n] factors: zero the other triangle, and the whole matrix where info[b] > 0.
template <class T>
__global__ void cholesky_finish(T* m, int64_t batch, int64_t n, bool upper, const int* info) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= batch * n * n) return;
  const int64_t b = t / (n * n), i = (t / n) % n, j = t % n;
  if (info[b] > 0 || (upper ? j < i : j > i)) m[t] = T(0);
}

// R (row-major [rr, n]) from geqrf's column-major [m, n] result: its upper triangle.
template <class T>
__global__ void extract_r(const T* w, T* r, int64_t batch, int64_t m, int64_t n, int64_t rr) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= batch * rr * n) return;
  const int64_t b = t / (rr * n), i = (t / n) % rr, j = t % n;
  r[t] = (j >= i && i < m) ? w[b * m * n + j * m + i] : T(0);
}

// LAPACK's 1-based pivots as int, an out-of-range one meaning "no swap" (as the family).
template <class P>
__global__ void pivots_to_int(const P* p, int* out, int64_t total, int64_t n) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const int64_t v = int64_t(p[t]);
  out[t] = int(v >= 1 && v <= n ? v : t % n + 1);
}

// Column j of each row-major [rows, ld] matrix of x: its largest component made
// positive, column j of y ([n, n]) flipped with it (linalg.kp's LA_CANONICAL_SIGN).
template <class T>
__global__ void canonical_sign(T* x, int64_t batch, int64_t rows, int64_t ld, int64_t cols, T* y, int64_t n) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= batch * cols) return;
  const int64_t b = t / cols, j = t % cols;
  T* xb = x + b * rows * ld;
  int64_t best = 0;
  T big = -1;
  for (int64_t k = 0; k < rows; ++k)
    if (fabs(xb[k * ld + j]) > big) big = fabs(xb[k * ld + j]), best = k;
  if (!(xb[best * ld + j] < T(0))) return;
  for (int64_t k = 0; k < rows; ++k) xb[k * ld + j] = -xb[k * ld + j];
  if (y == nullptr) return;
  T* yb = y + b * n * n;
  for (int64_t k = 0; k < n; ++k) yb[k * n + j] = -yb[k * n + j];
}

// dst = each [rows, cols] matrix of src transposed (row-major <-> column-major).
template <class T>
void transpose(const OpContext& c, int64_t batch, int64_t rows, int64_t cols, const T* src, T* dst) {
  const int64_t shape[3] = {batch, rows, cols};
  const int64_t from[3] = {rows * cols, cols, 1}, to[3] = {rows * cols, 1, rows};
  copy_strided(c, 3, shape, sizeof(T), dst, to, src, from);
}

template <class T>
T* scratch(const OpContext& c, int64_t count) {
  return static_cast<T*>(c.workspace(uint64_t(count > 0 ? count : 1) * sizeof(T)));
}

void copy_d2d(const OpContext& c, void* dst, const void* src, int64_t bytes) {
  check(OAR_GPU(MemcpyAsync)(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice, c.stream), "cudaMemcpyAsync");
}

// Raises what LAPACK's info > 0 means for eigh / svd, reading the infos back (a sync).
void fail_on_info(const OpContext& c, const int* info, int64_t batch, const char* op, const char* routine) {
  std::vector<int> host(static_cast<size_t>(batch));
  check(OAR_GPU(MemcpyAsync)(host.data(), info, host.size() * sizeof(int), cudaMemcpyDeviceToHost, c.stream),
        "cudaMemcpyAsync");
  check(OAR_GPU(StreamSynchronize)(c.stream), "cudaStreamSynchronize");
  for (int v : host)
    if (v > 0)
      sdk::fail(OAR_STATUS_INTERNAL, std::string(op) + ": the algorithm failed to converge (cuSOLVER " + routine +
                                         " info " + std::to_string(v) + ")");
}

// ---- the ops ----

template <class T>
void cholesky(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(0));
  const int n = int(d.rows);
  const bool upper = a.attr_bool("upper");
  DenseOutput out(c, a.output(0)), info(c, a.output(1));
  T* L = out.as<T>();
  copy_d2d(c, L, dense_input(c, a.input(0)), d.batch * n * n * int64_t(sizeof(T)));
  // A symmetric matrix is its own transpose: a column-major 'U' factor read row-major is L.
  const cublasFillMode_t fill = upper ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  int lwork = 0;
  solve(Solver<T>::potrf_size, "linalg_cholesky: cusolverDnXpotrf_bufferSize", h, fill, n, L, n, &lwork);
  T* work = scratch<T>(c, lwork);
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::potrf, "linalg_cholesky: cusolverDnXpotrf", h, fill, n, L + b * n * n, n, work, lwork,
          info.as<int>() + b);
  cholesky_finish<T><<<blocks(d.batch * n * n), 256, 0, c.stream>>>(L, d.batch, n, upper, info.as<int>());
  c.check_launch("linalg_cholesky");
  out.finish();
  info.finish();
}

template <class T>
void lu_factor(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(0));
  const int m = int(d.rows), n = int(d.cols), k = std::min(m, n);
  DenseOutput out(c, a.output(0)), piv(c, a.output(1)), info(c, a.output(2));
  T* w = scratch<T>(c, d.batch * m * n);
  transpose<T>(c, d.batch, m, n, static_cast<const T*>(dense_input(c, a.input(0))), w);
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  int lwork = 0;
  solve(Solver<T>::getrf_size, "linalg_lu_factor: cusolverDnXgetrf_bufferSize", h, m, n, w, m, &lwork);
  T* work = scratch<T>(c, lwork);
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::getrf, "linalg_lu_factor: cusolverDnXgetrf", h, m, n, w + b * m * n, m, work,
          piv.as<int>() + b * k, info.as<int>() + b);
  transpose<T>(c, d.batch, n, m, w, out.as<T>());
  out.finish();
  piv.finish();
  info.finish();
}

template <class T>
void lu_solve(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(2));
  const int n = int(d.rows), k = int(d.cols);
  DenseOutput out(c, a.output(0));
  T* lu = scratch<T>(c, d.batch * n * n);
  T* x = scratch<T>(c, d.batch * n * k);
  transpose<T>(c, d.batch, n, n, static_cast<const T*>(dense_input(c, a.input(0))), lu);
  transpose<T>(c, d.batch, n, k, static_cast<const T*>(dense_input(c, a.input(2))), x);
  int* ipiv = scratch<int>(c, d.batch * n);
  const oar_tensor_view& pv = a.input(1);
  const void* p = dense_input(c, pv);
  if (pv.dtype == OAR_DTYPE_I32)
    pivots_to_int<<<blocks(d.batch * n), 256, 0, c.stream>>>(static_cast<const int32_t*>(p), ipiv, d.batch * n, n);
  else
    pivots_to_int<<<blocks(d.batch * n), 256, 0, c.stream>>>(static_cast<const int64_t*>(p), ipiv, d.batch * n, n);
  c.check_launch("linalg_lu_solve");
  int* info = scratch<int>(c, 1);
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::getrs, "linalg_lu_solve: cusolverDnXgetrs", h, CUBLAS_OP_N, n, k, lu + b * n * n, n,
          ipiv + b * n, x + b * n * k, n, info);
  transpose<T>(c, d.batch, k, n, x, out.as<T>());
  out.finish();
}

template <class T>
void solve_triangular(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(1));
  const int n = int(d.rows), k = int(d.cols);
  DenseOutput out(c, a.output(0));
  T* x = out.as<T>();
  const T* A = static_cast<const T*>(dense_input(c, a.input(0)));
  copy_d2d(c, x, dense_input(c, a.input(1)), d.batch * n * k * int64_t(sizeof(T)));
  // Row-major A X = B is X^T A^T = B^T column-major, where the data already are
  // X^T ([k, n]) and A^T: a right-side solve whose triangle is the other one.
  const cublasFillMode_t fill = a.attr_bool("upper") ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const cublasDiagType_t diag = a.attr_bool("unitriangular") ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  cublasHandle_t h = cublas_handle(c.device, c.stream);
  const T one = 1;
  for (int64_t b = 0; b < d.batch; ++b)
    check_cublas((cublas().*Solver<T>::trsm)(h, CUBLAS_SIDE_RIGHT, fill, CUBLAS_OP_N, diag, k, n, &one, A + b * n * n,
                                              n, x + b * n * k, k),
                 "linalg_solve_triangular: cublasXtrsm");
  out.finish();
}

template <class T>
void qr(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(0));
  const int m = int(d.rows), n = int(d.cols), k = std::min(m, n);
  const bool want_q = a.attr_string("mode") != "r";
  const oar_tensor_view& qv = a.output(0);
  const oar_tensor_view& rv = a.output(1);
  const int qc = want_q ? int(qv.shape[qv.ndim - 1]) : 0;
  const int64_t rr = rv.shape[rv.ndim - 2];
  T* w = scratch<T>(c, d.batch * m * n);
  T* tau = scratch<T>(c, d.batch * k);
  transpose<T>(c, d.batch, m, n, static_cast<const T*>(dense_input(c, a.input(0))), w);
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  int lwork = 0, lwork_q = 0;
  solve(Solver<T>::geqrf_size, "linalg_qr: cusolverDnXgeqrf_bufferSize", h, m, n, w, m, &lwork);
  T* q = nullptr;
  if (want_q) {
    q = scratch<T>(c, d.batch * m * qc);
    solve(Solver<T>::orgqr_size, "linalg_qr: cusolverDnXorgqr_bufferSize", h, m, qc, k, q, m, tau, &lwork_q);
  }
  T* work = scratch<T>(c, std::max(lwork, lwork_q));
  int* info = scratch<int>(c, 1);
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::geqrf, "linalg_qr: cusolverDnXgeqrf", h, m, n, w + b * m * n, m, tau + b * k, work, lwork, info);
  DenseOutput r(c, rv);
  extract_r<T><<<blocks(d.batch * rr * n), 256, 0, c.stream>>>(w, r.as<T>(), d.batch, m, n, rr);
  c.check_launch("linalg_qr");
  r.finish();
  if (!want_q) return;
  // orgqr wants the k reflectors as the first columns of a column-major [m, qc] array.
  check(OAR_GPU(MemsetAsync)(q, 0, size_t(d.batch * m * qc) * sizeof(T), c.stream), "cudaMemsetAsync");
  for (int64_t b = 0; b < d.batch; ++b) {
    copy_d2d(c, q + b * m * qc, w + b * m * n, int64_t(m) * k * int64_t(sizeof(T)));
    solve(Solver<T>::orgqr, "linalg_qr: cusolverDnXorgqr", h, m, qc, k, q + b * m * qc, m, tau + b * k, work,
          lwork_q, info);
  }
  DenseOutput qo(c, qv);
  transpose<T>(c, d.batch, qc, m, q, qo.as<T>());
  qo.finish();
}

template <class T>
void eigh(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(0));
  const int n = int(d.rows);
  // The row-major lower triangle is the column-major upper one.
  const cublasFillMode_t fill = a.attr_string("UPLO") == "U" ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  DenseOutput w(c, a.output(0)), v(c, a.output(1));
  T* m = scratch<T>(c, d.batch * n * n);
  copy_d2d(c, m, dense_input(c, a.input(0)), d.batch * n * n * int64_t(sizeof(T)));
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  int lwork = 0;
  solve(Solver<T>::syevd_size, "linalg_eigh: cusolverDnXsyevd_bufferSize", h, CUSOLVER_EIG_MODE_VECTOR, fill, n, m, n,
        w.as<T>(), &lwork);
  T* work = scratch<T>(c, lwork);
  int* info = scratch<int>(c, d.batch);
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::syevd, "linalg_eigh: cusolverDnXsyevd", h, CUSOLVER_EIG_MODE_VECTOR, fill, n, m + b * n * n, n,
          w.as<T>() + b * n, work, lwork, info + b);
  fail_on_info(c, info, d.batch, "linalg.eigh", "syevd");
  // Eigenvectors are the column-major columns: transposed, they are row-major columns.
  transpose<T>(c, d.batch, n, n, m, v.as<T>());
  canonical_sign<T><<<blocks(d.batch * n), 256, 0, c.stream>>>(v.as<T>(), d.batch, n, n, n, nullptr, 0);
  c.check_launch("linalg_eigh");
  w.finish();
  v.finish();
}

template <class T>
void svd_tall(const OpContext& c) {
  const sdk::KernelArgs& a = c.args;
  const Mats d = mats(a.input(0));
  const int m = int(d.rows), n = int(d.cols);
  const oar_tensor_view& uv = a.output(0);
  const int uc = int(uv.shape[uv.ndim - 1]);
  DenseOutput u(c, uv), s(c, a.output(1)), v(c, a.output(2));
  T* w = scratch<T>(c, d.batch * m * n);
  T* ucm = scratch<T>(c, d.batch * m * uc);
  transpose<T>(c, d.batch, m, n, static_cast<const T*>(dense_input(c, a.input(0))), w);
  cusolverDnHandle_t h = cusolver_handle(c.device, c.stream);
  int lwork = 0;
  solve(Solver<T>::gesvd_size, "linalg_svd: cusolverDnXgesvd_bufferSize", h, m, n, &lwork);
  T* work = scratch<T>(c, lwork);
  T* rwork = scratch<T>(c, n);
  int* info = scratch<int>(c, d.batch);
  const signed char jobu = uc == m ? 'A' : 'S';
  // V^T column-major is V row-major: gesvd writes it straight into the output.
  for (int64_t b = 0; b < d.batch; ++b)
    solve(Solver<T>::gesvd, "linalg_svd: cusolverDnXgesvd", h, jobu, static_cast<signed char>('A'), m, n,
          w + b * m * n, m, s.as<T>() + b * n, ucm + b * m * uc, m, v.as<T>() + b * n * n, n, work, lwork, rwork,
          info + b);
  fail_on_info(c, info, d.batch, "linalg.svd", "gesvd");
  transpose<T>(c, d.batch, uc, m, ucm, u.as<T>());
  canonical_sign<T><<<blocks(d.batch * n), 256, 0, c.stream>>>(u.as<T>(), d.batch, m, uc, n, v.as<T>(), n);
  c.check_launch("linalg_svd");
  u.finish();
  s.finish();
  v.finish();
}

template <void (*F32)(const OpContext&), void (*F64)(const OpContext&)>
oar_status_t kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    if (a.input(0).dtype == OAR_DTYPE_F64) F64(c);
    else F32(c);
  });
}

}  // namespace

oar_status_t register_linalg_kernels(const oar_kernel_registrar* r) {
  // Above the primitive family (priority 0), which keeps empty matrices.
  constexpr int32_t kPriority = 10;
  for (oar_dtype_t t : {OAR_DTYPE_F32, OAR_DTYPE_F64}) {
    const std::initializer_list<oar_dtype_t> one{t};
    if (auto st = sdk::register_kernel(r, "linalg_cholesky", one, kernel<cholesky<float>, cholesky<double>>,
                                       "cusolver", kPriority, fits))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_lu_factor", one, kernel<lu_factor<float>, lu_factor<double>>,
                                       "cusolver", kPriority, fits))
      return st;
    for (oar_dtype_t i : {OAR_DTYPE_I32, OAR_DTYPE_I64})
      if (auto st = sdk::register_kernel(r, "linalg_lu_solve", {t, i, t}, kernel<lu_solve<float>, lu_solve<double>>,
                                         "cusolver", kPriority, fits))
        return st;
    if (auto st = sdk::register_kernel(r, "linalg_solve_triangular", {t, t},
                                       kernel<solve_triangular<float>, solve_triangular<double>>, "cublas", kPriority,
                                       fits))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_qr", one, kernel<qr<float>, qr<double>>, "cusolver", kPriority, fits))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_eigh", one, kernel<eigh<float>, eigh<double>>, "cusolver", kPriority,
                                       fits))
      return st;
    if (auto st = sdk::register_kernel(r, "linalg_svd_tall", one, kernel<svd_tall<float>, svd_tall<double>>,
                                       "cusolver", kPriority, fits))
      return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
