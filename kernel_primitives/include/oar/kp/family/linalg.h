// The linalg family: Cholesky, LU, triangular and LU solves, QR, symmetric
// eigendecomposition, and SVD on batches of matrices, written once
// (linalg.kp). A lane is one matrix (one right-hand column for the solves):
// every device gets correct decompositions; a device with a vendor solver
// (the CPU's LAPACK, CUDA's cuSOLVER) registers it at a higher priority.
// Shapes and dtypes were validated by the catalog (runtime/src/catalog/linalg.cpp).
#pragma once

#include <algorithm>

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct LinalgKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/linalg.kp"
};

template <class B>
struct Linalg {
  // The matrices of a [..., rows, cols] view: (batch, rows, cols).
  struct Dims {
    int64_t batch, rows, cols;
  };
  // The batch counts matrices even when they are empty (0 x n): their info and
  // pivots outputs are still written.
  static Dims dims(const oar_tensor_view& v) {
    int64_t batch = 1;
    for (int32_t i = 0; i + 2 < v.ndim; ++i) batch *= v.shape[i];
    return {batch, v.shape[v.ndim - 2], v.shape[v.ndim - 1]};
  }

  static Launch launch_over(const oar_tensor_view& like, int64_t lanes, int64_t work) {
    Launch L;
    L.family = "linalg";
    L.t = like.dtype;
    L.lanes = lanes;
    L.work_per_lane = work;
    return L;
  }

  // cholesky(a) -> factor, info
  static void cholesky(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(0));
    if (d.batch == 0) return;
    Launch L = launch_over(a.input(0), d.batch, d.rows * d.rows * d.rows);
    L.i = a.output(1).dtype;
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    L.p[2] = operand(a.output(1));
    L.A.i[0] = d.rows;
    L.A.i[1] = a.attr_bool("upper");
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, cholesky_lanes);
  }

  // lu_factor(a) -> lu, pivots, info
  static void lu(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(0));
    if (d.batch == 0) return;
    Launch L = launch_over(a.input(0), d.batch, d.rows * d.cols * std::min(d.rows, d.cols));
    L.i = a.output(1).dtype;
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    L.p[2] = operand(a.output(1));
    L.p[3] = operand(a.output(2));
    L.A.i[0] = d.rows;
    L.A.i[1] = d.cols;
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, lu_lanes);
  }

  // lu_solve(lu, pivots, b) -> x
  static void lu_solve(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(2));
    if (d.batch == 0 || d.cols == 0) return;
    Launch L = launch_over(a.input(2), d.batch * d.cols, d.rows * d.rows);
    L.i = a.input(1).dtype;
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    L.p[2] = operand(a.input(1));
    L.p[3] = operand(a.input(2));
    L.A.i[0] = d.rows;
    L.A.i[1] = d.cols;
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, lu_solve_lanes);
  }

  // solve_triangular(a, b) -> x (a on the left)
  static void triangular_solve(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(1));
    if (d.batch == 0 || d.cols == 0) return;
    Launch L = launch_over(a.input(1), d.batch * d.cols, d.rows * d.rows);
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    L.p[2] = operand(a.input(1));
    L.A.i[0] = d.rows;
    L.A.i[1] = d.cols;
    L.A.i[2] = a.attr_bool("upper");
    L.A.i[3] = a.attr_bool("unitriangular");
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, triangular_solve_lanes);
  }

  // qr(a) -> q, r
  static void qr(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(0));
    if (d.batch == 0) return;
    const int64_t k = std::min(d.rows, d.cols);
    const oar_tensor_view& q = a.output(0);
    const oar_tensor_view& r = a.output(1);
    const bool want_q = a.attr_string("mode") != "r";
    Launch L = launch_over(a.input(0), d.batch, d.rows * d.cols * (k + 1));
    L.p[0] = operand(q);
    L.p[1] = operand(r);
    L.p[2] = operand(a.input(0));
    L.p[3] = b.temp(uint64_t(d.batch * (d.rows * d.cols + k)) * sdk::dtype_size(a.input(0).dtype));
    L.A.i[0] = d.rows;
    L.A.i[1] = d.cols;
    L.A.i[2] = want_q ? q.shape[q.ndim - 1] : 0;
    L.A.i[3] = r.shape[r.ndim - 2];
    L.A.i[4] = want_q;
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, qr_lanes);
  }

  // eigh(a) -> eigenvalues, eigenvectors
  static void eigh(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(0));
    if (d.batch == 0) return;
    Launch L = launch_over(a.input(0), d.batch, 8 * d.rows * d.rows * d.rows);
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.output(1));
    L.p[2] = operand(a.input(0));
    L.p[3] = b.temp(uint64_t(d.batch * d.rows * d.rows) * sdk::dtype_size(a.input(0).dtype));
    L.A.i[0] = d.rows;
    L.A.i[1] = a.attr_string("UPLO") == "U";
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, eigh_lanes);
  }

  // svd_tall(a) -> u, s, v for m >= n (the catalog transposes a wide matrix)
  static void svd(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Dims d = dims(a.input(0));
    if (d.batch == 0) return;
    const oar_tensor_view& u = a.output(0);
    Launch L = launch_over(a.input(0), d.batch, 8 * d.rows * d.cols * d.cols);
    L.p[0] = operand(u);
    L.p[1] = operand(a.output(1));
    L.p[2] = operand(a.output(2));
    L.p[3] = operand(a.input(0));
    L.p[4] = b.temp(uint64_t(d.batch * d.rows * d.cols) * sdk::dtype_size(a.input(0).dtype));
    L.A.i[0] = d.rows;
    L.A.i[1] = d.cols;
    L.A.i[2] = u.shape[u.ndim - 1];
    L.A.i[3] = 1;
    OAR_KP_LAUNCH(LinalgKernels, kFloat, b, L, svd_lanes);
  }

  static oar_status_t register_ops(Registrar& all) {
    Registrar r = all.with_floats({OAR_DTYPE_F32, OAR_DTYPE_F64});  // the catalog takes these only
    r.add("linalg_cholesky", "T", DTypeSet::kFloat, entry<B, &cholesky>);
    r.add("linalg_lu_factor", "T", DTypeSet::kFloat, entry<B, &lu>);
    r.add("linalg_lu_solve", "TIT", DTypeSet::kFloat, entry<B, &lu_solve>);
    r.add("linalg_solve_triangular", "TT", DTypeSet::kFloat, entry<B, &triangular_solve>);
    r.add("linalg_qr", "T", DTypeSet::kFloat, entry<B, &qr>);
    r.add("linalg_eigh", "T", DTypeSet::kFloat, entry<B, &eigh>);
    return r.add("linalg_svd_tall", "T", DTypeSet::kFloat, entry<B, &svd>);
  }
};

}  // namespace oar::kp::family
