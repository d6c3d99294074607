// Gradient rules of the linear-algebra ops (runtime/src/catalog/linalg.cpp),
// written with ops so they are differentiable again. Formulas as PyTorch's
// (FunctionsManual.cpp) for real inputs; references in each rule. As in
// PyTorch, cholesky and eigh, which read one triangle, return the symmetric
// gradient (the derivative along symmetric perturbations), so a PyTorch
// program gets PyTorch's numbers; the conformance suite's one-element finite
// differences are allowed to differ (tests/conformance/expectations.txt).
#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

Tensor mT(const Tensor& x) { return x.transpose(-2, -1); }
Tensor mm(const Tensor& a, const Tensor& b) { return op("matmul", {a, b}); }
Tensor tril(const Tensor& x, int64_t k = 0) { return op("tril", {x}, {{"diagonal", k}}); }
Tensor triu(const Tensor& x, int64_t k = 0) { return op("triu", {x}, {{"diagonal", k}}); }
Tensor scale(const Tensor& x, double v) { return mul(x, scalar_like(x, v)); }
Tensor eye_like(const Tensor& x, int64_t n) { return tril(triu(Tensor::ones({n, n}, x.dtype(), x.device()))); }
// A X = B for triangular A (left side); both operands get the same batch dims.
Tensor solve_tri(const Tensor& a, const Tensor& b, bool upper, bool unit = false) {
  return op("linalg_solve_triangular", {a, b}, {{"upper", upper}, {"unitriangular", unit}});
}
// X A = B, as A^T X^T = B^T.
Tensor solve_tri_right(const Tensor& a, const Tensor& b, bool upper) { return mT(solve_tri(mT(a), mT(b), !upper)); }
// diag(v) for a batch of vectors [..., n]: eye scaled column-wise.
Tensor diag_embed(const Tensor& v) { return mul(eye_like(v, v.shape().back()), v.unsqueeze(-2)); }
// M with its diagonal set to 1 (safe denominators; their quotients are zeroed or replaced).
Tensor plus_eye(const Tensor& m) { return add(m, eye_like(m, m.shape().back())); }
Tensor lead(const Tensor& t, int64_t dim, int64_t n) { return t.narrow(dim, 0, n); }

// A = QR, A square or tall (m >= n), gA = [gQ + Q copyltu(M)] R^{-T} with
// M = R gR^T - gQ^T Q, copyltu(M) = tril(M) + tril(M, -1)^T (Walter & Lehmann;
// Liao et al. 2019, which PyTorch's linalg_qr_backward implements).
Tensor qr_grad_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor M;
  if (gR.defined()) M = mm(R, mT(gR));
  if (gQ.defined()) M = M.defined() ? sub(M, mm(mT(gQ), Q)) : neg(mm(mT(gQ), Q));
  Tensor copyltu = add(tril(M), mT(tril(M, -1)));
  Tensor b = mm(Q, copyltu);
  if (gQ.defined()) b = add(b, gQ);
  return solve_tri_right(mT(R), b, false);
}

// adj(A)^T for square A = U diag(S) V^T: det(U) det(V) U diag(p) V^T with
// p_i the product of the singular values but s_i (no division, so it holds
// for singular A).
Tensor cofactors(const Tensor& A) {
  auto usv = ops("linalg_svd", {A}, {{"full_matrices", false}});
  const Tensor &U = usv[0], &S = usv[1], &Vh = usv[2];
  const int64_t n = S.shape().back();
  Tensor eye = eye_like(S, n);
  // others[..., i, j] = s_j off the diagonal, 1 on it.
  Tensor others = add(mul(S.unsqueeze(-2), sub(ones_like(eye), eye)), eye);
  Tensor p = op("prod", {others}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}});
  Tensor sign = mul(op("linalg_det", {U}), op("linalg_det", {Vh}));
  return mul(mm(mul(U, p.unsqueeze(-2)), Vh), sign.unsqueeze(-1).unsqueeze(-1));
}

// P with A = P L U from LAPACK's 1-based row swaps [..., n] (applied in
// order), built on the host: the pivots are n small integers per matrix.
Tensor permutation_from_pivots(const Tensor& pivots, int64_t n, const Tensor& like) {
  const std::vector<int64_t> piv = pivots.to(DType::i64).to(Device::cpu()).to_vector<int64_t>();
  const int64_t batch = n ? int64_t(piv.size()) / n : 0;
  std::vector<double> mats(size_t(batch * n * n), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int64_t> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[size_t(i)] = i;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = piv[size_t(b * n + i)] - 1;
      if (r >= 0 && r < n) std::swap(p[size_t(i)], p[size_t(r)]);
    }
    for (int64_t j = 0; j < n; ++j) mats[size_t(b * n * n + p[size_t(j)] * n + j)] = 1.0;
  }
  Shape shape(like.shape().begin(), like.shape().end() - 2);
  shape.push_back(n);
  shape.push_back(n);
  return Tensor::from_host(mats.data(), int64_t(mats.size()), shape, DType::f64, Device::cpu())
      .to(like.dtype())
      .to(like.device());
}

void register_linalg_rules() {
  for (const char* name : {"tril", "triu"}) {
    const bool upper = name[3] == 'u';
    register_grad_rule(name, [upper](const GradContext& c) -> std::vector<Tensor> {
      const int64_t k = c.attrs.get_int("diagonal");
      Tensor g = c.grad_or_zeros(0);
      return {upper ? triu(g, k) : tril(g, k)};
    });
  }

  // Murray 2016 (arXiv:1602.07527): gA = L^{-T} Phi L^{-1}, Phi = sym(tril(L^T gL)) with half diagonal.
  register_grad_rule("linalg_cholesky", [](const GradContext& c) -> std::vector<Tensor> {
    const bool upper = c.attrs.get_bool("upper");
    Tensor L = upper ? mT(c.outputs[0]) : c.outputs[0];
    Tensor gL = c.grad_or_zeros(0);
    if (upper) gL = mT(gL);
    Tensor t = tril(mm(mT(L), gL));
    Tensor phi = scale(add(t, mT(tril(t, -1))), 0.5);
    Tensor y = solve_tri(mT(L), phi, true);
    return {solve_tri_right(L, y, false)};
  });

  // X = A^{-1} B: gB = A^{-T} g, gA = -gB X^T on A's triangle.
  register_grad_rule("linalg_solve_triangular", [](const GradContext& c) -> std::vector<Tensor> {
    const bool upper = c.attrs.get_bool("upper"), unit = c.attrs.get_bool("unitriangular");
    Tensor g = c.grad_or_zeros(0);
    Tensor gB = solve_tri(mT(c.inputs[0]), g, !upper, unit);
    Tensor gA;
    if (c.needs(0)) {
      gA = neg(mm(gB, mT(c.outputs[0])));
      gA = upper ? triu(gA, unit ? 1 : 0) : tril(gA, unit ? -1 : 0);
    }
    return {gA, c.needs(1) ? gB : Tensor()};
  });

  register_grad_rule("linalg_qr", [](const GradContext& c) -> std::vector<Tensor> {
    const std::string mode = c.attrs.get_string("mode");
    if (mode == "r")
      throw ValueError("linalg.qr: the derivative is not defined for mode='r' (Q is not computed); use mode='reduced'");
    const Tensor &Q = c.outputs[0], &R = c.outputs[1];
    const int64_t m = Q.shape()[Q.dim() - 2], n = R.shape().back();
    if (mode == "complete" && m > n)
      throw NotImplementedError("linalg.qr: the derivative of mode='complete' is not defined when nrows > ncols "
                                "(Q's trailing columns are arbitrary); use mode='reduced'");
    const Tensor &gQ = c.grads[0], &gR = c.grads[1];
    if (!gQ.defined() && !gR.defined()) return {Tensor()};
    if (m >= n) return {qr_grad_tall(gQ, gR, Q, R)};
    // Wide A = [X | Y] with X = Q U (square) and Y = Q V, R = [U | V].
    const Tensor U = lead(R, -1, m), Y = c.inputs[0].narrow(-1, m, n - m);
    Tensor gU = gR.defined() ? lead(gR, -1, m) : Tensor();
    Tensor gV = gR.defined() ? gR.narrow(-1, m, n - m) : Tensor();
    Tensor gQx = gQ;
    if (gV.defined()) gQx = gQx.defined() ? add(gQx, mm(Y, mT(gV))) : mm(Y, mT(gV));
    Tensor gX = qr_grad_tall(gQx, gU, Q, U);
    Tensor gY = gV.defined() ? mm(Q, gV) : zeros_like(Y);
    return {op("concat", {gX, gY}, {{"dim", int64_t(-1)}})};
  });

  // gA = V (skew(V^T gV) / E + diag(gw)) V^T, E_ij = w_j - w_i (PyTorch's linalg_eig_backward, hermitian).
  register_grad_rule("linalg_eigh", [](const GradContext& c) -> std::vector<Tensor> {
    const Tensor &w = c.outputs[0], &V = c.outputs[1];
    const Tensor &gw = c.grads[0], &gV = c.grads[1];
    Tensor inner;
    if (gV.defined()) {
      Tensor vg = mm(mT(V), gV);
      Tensor skew = scale(sub(vg, mT(vg)), 0.5);
      Tensor E = plus_eye(sub(w.unsqueeze(-2), w.unsqueeze(-1)));
      inner = div(skew, E);
    }
    if (gw.defined()) inner = inner.defined() ? add(inner, diag_embed(gw)) : diag_embed(gw);
    if (!inner.defined()) return {Tensor()};
    return {mm(V, mm(inner, mT(V)))};
  });

  // Townsend 2016, "Differentiating the singular value decomposition":
  // gA = U[(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
  //      + (I - U U^T) gU S^{-1} V^T + U S^{-1} gV^T (I - V V^T),  F_ij = 1 / (s_j^2 - s_i^2).
  // With full_matrices, the columns past min(m, n) are arbitrary and get no gradient (as PyTorch).
  register_grad_rule("linalg_svd", [](const GradContext& c) -> std::vector<Tensor> {
    const Tensor& S = c.outputs[1];
    const int64_t k = S.shape().back();
    const Tensor U = lead(c.outputs[0], -1, k), Vh = lead(c.outputs[2], -2, k);
    const Tensor gU = c.grads[0].defined() ? lead(c.grads[0], -1, k) : Tensor();
    const Tensor gVh = c.grads[2].defined() ? lead(c.grads[2], -2, k) : Tensor();
    const Tensor& gS = c.grads[1];
    const Tensor V = mT(Vh);
    const int64_t m = U.shape()[U.dim() - 2], n = Vh.shape().back();
    if (!gU.defined() && !gVh.defined()) {
      if (!gS.defined()) return {Tensor()};
      return {mm(U, mul(gS.unsqueeze(-1), Vh))};
    }
    Tensor S2 = mul(S, S);
    Tensor E = plus_eye(sub(S2.unsqueeze(-2), S2.unsqueeze(-1)));
    Tensor inner = gS.defined() ? diag_embed(gS) : Tensor();
    auto acc = [&inner](const Tensor& t) { inner = inner.defined() ? add(inner, t) : t; };
    Tensor gV = gVh.defined() ? mT(gVh) : Tensor();
    if (gU.defined()) {
      Tensor ug = mm(mT(U), gU);
      acc(mul(div(sub(ug, mT(ug)), E), S.unsqueeze(-2)));
    }
    if (gV.defined()) {
      Tensor vg = mm(mT(V), gV);
      acc(mul(S.unsqueeze(-1), div(sub(vg, mT(vg)), E)));
    }
    Tensor gA = mm(U, mm(inner, Vh));
    if (gU.defined() && m > k) {
      Tensor proj = sub(gU, mm(U, mm(mT(U), gU)));
      gA = add(gA, mm(div(proj, S.unsqueeze(-2)), Vh));
    }
    if (gV.defined() && n > k) {
      Tensor proj = sub(mT(gV), mm(mm(mT(gV), V), Vh));
      gA = add(gA, mm(U, div(proj, S.unsqueeze(-1))));
    }
    return {gA};
  });

  // X = A^{-1} B: gB = A^{-T} g, gA = -gB X^T.
  register_grad_rule("linalg_solve", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor gB = op("linalg_solve", {mT(c.inputs[0]), c.grad_or_zeros(0)});
    return {c.needs(0) ? neg(mm(gB, mT(c.outputs[0]))) : Tensor(), c.needs(1) ? gB : Tensor()};
  });

  // gA = -A^{-T} g A^{-T}.
  register_grad_rule("linalg_inv", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor it = mT(c.outputs[0]);
    return {neg(mm(it, mm(c.grad_or_zeros(0), it)))};
  });

  // A = P L U (square): with gL = tril(gLU, -1), gU = triu(gLU),
  // phi = tril(L^T gL, -1) + triu(gU U^T) and gA = P L^{-T} phi U^{-T}
  // (PyTorch's linalg_lu_backward for m = n). The pivots are piecewise constant.
  register_grad_rule("linalg_lu_factor", [](const GradContext& c) -> std::vector<Tensor> {
    const Tensor& A = c.inputs[0];
    const int64_t m = A.shape()[A.dim() - 2], n = A.shape().back();
    if (m != n)
      throw NotImplementedError(str("linalg.lu_factor: the derivative is implemented for square matrices, got ",
                                    shape_str(A.shape())));
    const Tensor& LU = c.outputs[0];
    Tensor g = c.grad_or_zeros(0);
    Tensor L = add(tril(LU, -1), eye_like(LU, n)), U = triu(LU);
    Tensor phi = add(tril(mm(mT(L), tril(g, -1)), -1), triu(mm(triu(g), mT(U))));
    Tensor x = solve_tri(mT(L), phi, true, true);
    Tensor y = solve_tri_right(mT(U), x, false);
    return {mm(permutation_from_pivots(c.outputs[1], n, A), y)};
  });

  // d det = tr(adj(A) dA): gA = g adj(A)^T, the cofactor matrix. For an
  // invertible A that is det A^{-T}; where some det is exactly 0 (a zero
  // pivot, so no inverse) the whole batch takes the SVD form, as PyTorch's
  // linalg_det_backward does. Checking for it reads the dets back (one sync).
  register_grad_rule("linalg_det", [](const GradContext& c) -> std::vector<Tensor> {
    const Tensor& A = c.inputs[0];
    const Tensor& det = c.outputs[0];
    Tensor g = c.grad_or_zeros(0);
    Tensor singular = op("eq", {det, scalar_like(det, 0.0)});
    if (op("sum", {singular.to(det.dtype())}).item() == 0)
      return {mul(mul(g, det).unsqueeze(-1).unsqueeze(-1), mT(op("linalg_inv", {A})))};
    return {mul(g.unsqueeze(-1).unsqueeze(-1), cofactors(A))};
  });

  // d log|det| = tr(A^{-1} dA); the sign is piecewise constant.
  register_grad_rule("linalg_slogdet", [](const GradContext& c) -> std::vector<Tensor> {
    if (!c.grads[1].defined()) return {Tensor()};
    return {mul(c.grads[1].unsqueeze(-1).unsqueeze(-1), mT(op("linalg_inv", {c.inputs[0]})))};
  });
}

}  // namespace

void register_linalg_grad_rules() { register_linalg_rules(); }

}  // namespace oar::autograd
