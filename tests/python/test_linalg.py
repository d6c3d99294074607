"""oar.linalg against NumPy (LAPACK) on every device: values, the invariants that define
decompositions whose signs are free (eigh, svd), gradients by finite differences (gradcheck in
float64), errors for singular / non-positive-definite / badly shaped input, and PyTorch's numbers
where torch is installed."""
import math

import numpy as np
import pytest

import oar
from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]
rng = np.random.default_rng(7)


def spd(n, batch=(), seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def T(a, device, dtype=oar.float64, grad=False):
    t = oar.tensor(np.asarray(a), dtype=dtype, device=device)
    return t.requires_grad_() if grad else t


def N(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,tol", [(oar.float32, 2e-4), (oar.float64, 1e-10)])
def test_cholesky_solve_inv_det(device, dtype, tol):
    a = spd(5, (2,))
    b = rng.standard_normal((2, 5, 3))
    A, B = T(a, device, dtype), T(b, device, dtype)
    L = oar.linalg.cholesky(A)
    np.testing.assert_allclose(N(L), np.linalg.cholesky(a), rtol=tol * 10, atol=tol * 10)
    U = oar.linalg.cholesky(A, upper=True)
    np.testing.assert_allclose(N(U), np.swapaxes(np.linalg.cholesky(a), -1, -2), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(N(oar.linalg.solve(A, B)), np.linalg.solve(a, b), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(N(oar.linalg.inv(A)), np.linalg.inv(a), rtol=tol * 10, atol=tol * 10)
    g = rng.standard_normal((4, 4))
    np.testing.assert_allclose(N(oar.linalg.det(T(g, device, dtype))), np.linalg.det(g), rtol=tol * 10)
    sign, logabs = oar.linalg.slogdet(T(g, device, dtype))
    s_ref, l_ref = np.linalg.slogdet(g)
    assert N(sign) == s_ref
    np.testing.assert_allclose(N(logabs), l_ref, rtol=tol * 10)
    # vector right-hand side and broadcast batch dims
    v = rng.standard_normal(5)
    np.testing.assert_allclose(N(oar.linalg.solve(A, T(v, device, dtype))), np.linalg.solve(a, v), rtol=tol * 10,
                               atol=tol * 10)
    x = oar.linalg.solve(A, T(b[0], device, dtype))
    np.testing.assert_allclose(N(x), np.linalg.solve(a, np.broadcast_to(b[0], (2, 5, 3))), rtol=tol * 10,
                               atol=tol * 10)


@pytest.mark.parametrize("device", DEVICES)
def test_lu_factor_and_permutation(device):
    a = rng.standard_normal((3, 4, 4))
    P, L, U = oar.linalg.lu(T(a, device))
    np.testing.assert_allclose(N(P @ L @ U), a, atol=1e-12)
    assert np.allclose(np.triu(N(L), 1), 0) and np.allclose(np.diagonal(N(L), axis1=-2, axis2=-1), 1)
    LU, piv = oar.linalg.lu_factor(T(a, device))
    b = rng.standard_normal((3, 4, 2))
    np.testing.assert_allclose(N(oar.linalg.lu_solve(LU, piv, T(b, device))), np.linalg.solve(a, b), atol=1e-10)
    # rectangular LU
    r = rng.standard_normal((5, 3))
    P, L, U = oar.linalg.lu(T(r, device))
    assert tuple(L.shape) == (5, 3) and tuple(U.shape) == (3, 3)
    np.testing.assert_allclose(N(P @ L @ U), r, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,mode", [((6, 4), "reduced"), ((4, 6), "reduced"), ((5, 5), "complete"),
                                        ((6, 3), "complete"), ((2, 5, 3), "r")])
def test_qr_matches_lapack(device, shape, mode):
    a = rng.standard_normal(shape)
    Q, R = oar.linalg.qr(T(a, device), mode=mode)
    q_ref, r_ref = np.linalg.qr(a, mode=mode) if mode != "r" else (None, np.linalg.qr(a, mode="r"))
    np.testing.assert_allclose(N(R), r_ref, atol=1e-10)  # same Householder signs as LAPACK's geqrf
    if mode != "r":
        np.testing.assert_allclose(N(Q), q_ref, atol=1e-10)
        np.testing.assert_allclose(N(Q @ R), a, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,tol", [(oar.float32, 1e-4), (oar.float64, 1e-10)])
def test_eigh_invariants(device, dtype, tol):
    s = rng.standard_normal((3, 6, 6))
    s = s + np.swapaxes(s, -1, -2)
    w, V = oar.linalg.eigh(T(s, device, dtype))
    np.testing.assert_allclose(N(w), np.linalg.eigvalsh(s), rtol=tol * 10, atol=tol * 10)
    v = N(V)
    np.testing.assert_allclose(v @ np.swapaxes(v, -1, -2), np.broadcast_to(np.eye(6), (3, 6, 6)), atol=tol * 10)
    np.testing.assert_allclose(s @ v, v * N(w)[..., None, :], atol=tol * 100)
    # only the named triangle is read
    junk = s.copy()
    junk[..., 0, 5] = 99.0
    np.testing.assert_allclose(N(oar.linalg.eigvalsh(T(junk, device, dtype))), np.linalg.eigvalsh(s),
                               rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(N(oar.linalg.eigvalsh(T(np.swapaxes(junk, -1, -2), device, dtype), UPLO="U")),
                               np.linalg.eigvalsh(s), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), (3, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_invariants(device, shape, full):
    a = rng.standard_normal(shape)
    U, S, Vh = oar.linalg.svd(T(a, device), full_matrices=full)
    u_ref, s_ref, vh_ref = np.linalg.svd(a, full_matrices=full)
    assert tuple(U.shape) == u_ref.shape and tuple(Vh.shape) == vh_ref.shape
    np.testing.assert_allclose(N(S), s_ref, atol=1e-10)
    k = min(shape[-2:])
    u, vh = N(U), N(Vh)
    np.testing.assert_allclose(u[..., :k] * N(S)[..., None, :] @ vh[..., :k, :], a, atol=1e-10)
    m, n = shape[-2:]
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                               (u.shape[-1],) * 2), atol=1e-10)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] +
                               (vh.shape[-2],) * 2), atol=1e-10)
    # singular vectors equal LAPACK's up to one sign per pair
    signs = np.sign(np.sum(u[..., :k] * u_ref[..., :k], axis=-2))
    np.testing.assert_allclose(u[..., :k], u_ref[..., :k] * signs[..., None, :], atol=1e-8)
    del m, n


@pytest.mark.parametrize("device", DEVICES)
def test_svd_rank_deficient_completes_basis(device):
    a = np.outer(rng.standard_normal(5), rng.standard_normal(3))  # rank 1
    U, S, Vh = oar.linalg.svd(T(a, device), full_matrices=True)
    u = N(U)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-10)
    np.testing.assert_allclose(N(S)[1:], 0, atol=1e-10)
    assert int(oar.linalg.matrix_rank(T(a, device))) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_triangular_solve_left_right_unit(device):
    a = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal((4, 3))
    A = T(a, device)
    np.testing.assert_allclose(N(oar.linalg.solve_triangular(A, T(b, device), upper=False)), np.linalg.solve(a, b),
                               atol=1e-12)
    c = rng.standard_normal((3, 4))
    np.testing.assert_allclose(N(oar.linalg.solve_triangular(A, T(c, device), upper=False, left=False)),
                               c @ np.linalg.inv(a), atol=1e-12)
    unit = np.tril(a, -1) + np.eye(4)
    np.testing.assert_allclose(N(oar.linalg.solve_triangular(A, T(b, device), upper=False, unitriangular=True)),
                               np.linalg.solve(unit, b), atol=1e-12)
    np.testing.assert_allclose(N(oar.linalg.solve_triangular(A.mT, T(b, device), upper=True)),
                               np.linalg.solve(a.T, b), atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_norms_lstsq_pinv_power(device):
    a = rng.standard_normal((5, 3))
    A = T(a, device)
    for ord in [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
        np.testing.assert_allclose(N(oar.linalg.norm(A, ord)), np.linalg.norm(a, ord), rtol=1e-10, err_msg=str(ord))
    x = rng.standard_normal((2, 7))
    for ord in [0, 1, 2, 3.5, math.inf, -math.inf]:
        np.testing.assert_allclose(N(oar.linalg.vector_norm(T(x, device), ord, dim=1)),
                                   np.linalg.norm(x, ord, axis=1), rtol=1e-10, err_msg=str(ord))
    b = rng.standard_normal((5, 2))
    np.testing.assert_allclose(N(oar.linalg.lstsq(A, T(b, device)).solution), np.linalg.lstsq(a, b, rcond=None)[0],
                               atol=1e-10)
    w = rng.standard_normal((3, 5))  # wide: the minimum-norm solution
    c = rng.standard_normal((3, 1))
    np.testing.assert_allclose(N(oar.linalg.lstsq(T(w, device), T(c, device)).solution),
                               np.linalg.lstsq(w, c, rcond=None)[0], atol=1e-10)
    np.testing.assert_allclose(N(oar.linalg.pinv(A)), np.linalg.pinv(a), atol=1e-10)
    sq = rng.standard_normal((3, 3))
    for n in [0, 1, 3, 6, -2]:
        np.testing.assert_allclose(N(oar.linalg.matrix_power(T(sq, device), n)), np.linalg.matrix_power(sq, n),
                                   rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(N(oar.linalg.cond(T(sq, device))), np.linalg.cond(sq), rtol=1e-9)
    np.testing.assert_allclose(N(oar.linalg.cross(T(a, device), T(a[::-1].copy(), device))),
                               np.cross(a, a[::-1]), atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_tril_triu(device):
    x = rng.standard_normal((2, 4, 5))
    for k in [-2, 0, 1, 7]:
        np.testing.assert_array_equal(N(oar.tril(T(x, device), k)), np.tril(x, k))
        np.testing.assert_array_equal(N(T(x, device).triu(k)), np.triu(x, k))
    i = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(N(oar.tril(oar.tensor(i, device=device))), np.tril(i))


@pytest.mark.parametrize("device", DEVICES)
def test_errors_are_clear(device):
    not_pd = T([[1.0, 2.0], [2.0, 1.0]], device)
    with pytest.raises(oar.linalg.LinAlgError, match="leading minor of order 2 is not positive-definite"):
        oar.linalg.cholesky(not_pd)
    L, info = oar.linalg.cholesky_ex(not_pd)
    assert int(info) == 2
    singular = T([[1.0, 2.0], [2.0, 4.0]], device)
    with pytest.raises(oar.linalg.LinAlgError, match="singular"):
        oar.linalg.inv(singular)
    with pytest.raises(oar.linalg.LinAlgError, match="singular"):
        oar.linalg.solve(singular, T([1.0, 1.0], device))
    assert float(oar.linalg.det(singular)) == 0.0
    with pytest.raises(oar.ShapeError, match="square"):
        oar.linalg.inv(T(np.ones((2, 3)), device))
    with pytest.raises(oar.DTypeError, match="float"):
        oar.linalg.det(oar.ones(3, 3, dtype=oar.int64, device=device))
    with pytest.raises(oar.ShapeError):
        oar.linalg.solve(T(np.eye(3), device), T(np.ones((4, 1)), device))
    with pytest.raises(ValueError, match="mode"):
        oar.linalg.qr(T(np.eye(3), device), mode="full")
    assert issubclass(oar.linalg.LinAlgError, RuntimeError)


def _gradcheck(fn, *arrays, device):
    inputs = tuple(T(a, device, grad=True) for a in arrays)
    assert oar.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_by_finite_differences(device):
    a = spd(4, seed=3)
    g = rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 2))
    _gradcheck(lambda A: oar.linalg.cholesky(0.5 * (A + A.mT)), a, device=device)
    _gradcheck(lambda A: oar.linalg.cholesky(0.5 * (A + A.mT), upper=True), a, device=device)
    _gradcheck(lambda A, B: oar.linalg.solve(A, B), g, b, device=device)
    _gradcheck(lambda A: oar.linalg.inv(A), g, device=device)
    _gradcheck(lambda A: oar.linalg.det(A), g, device=device)
    _gradcheck(lambda A: oar.linalg.slogdet(A).logabsdet, g, device=device)
    _gradcheck(lambda A, B: oar.linalg.solve_triangular(A, B, upper=True), np.triu(g) + 4 * np.eye(4), b,
               device=device)
    _gradcheck(lambda A: oar.linalg.qr(A), rng.standard_normal((5, 3)), device=device)
    _gradcheck(lambda A: oar.linalg.qr(A), rng.standard_normal((3, 5)), device=device)
    s = g + g.T
    _gradcheck(lambda A: oar.linalg.eigh(0.5 * (A + A.mT)), s, device=device)
    for shape in [(5, 3), (3, 5), (4, 4)]:
        _gradcheck(lambda A: oar.linalg.svd(A, full_matrices=False), rng.standard_normal(shape), device=device)
    _gradcheck(lambda A: oar.linalg.svdvals(A), rng.standard_normal((4, 3)), device=device)
    _gradcheck(lambda A: oar.linalg.norm(A, "nuc"), rng.standard_normal((3, 4)), device=device)
    _gradcheck(lambda A: oar.tril(A, -1) + oar.triu(A, 2), g, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_second_order(device):
    g = rng.standard_normal((3, 3))
    inputs = (T(g, device, grad=True),)
    assert oar.autograd.gradgradcheck(lambda A: oar.linalg.inv(A), inputs, atol=1e-5, rtol=1e-3)
    assert oar.autograd.gradgradcheck(lambda A: oar.linalg.det(A), inputs, atol=1e-5, rtol=1e-3)


def test_matches_pytorch():
    torch = import_torch()
    a = spd(4, (2,), seed=5)
    g = rng.standard_normal((2, 4, 4))
    for name, fn in [("cholesky", lambda m, x: m.linalg.cholesky(x)), ("inv", lambda m, x: m.linalg.inv(x)),
                     ("det", lambda m, x: m.linalg.det(x)), ("eigvalsh", lambda m, x: m.linalg.eigvalsh(x)),
                     ("svdvals", lambda m, x: m.linalg.svdvals(x)), ("qr.R", lambda m, x: m.linalg.qr(x).R)]:
        got = N(fn(oar, oar.tensor(a, dtype=oar.float64)))
        want = from_torch(fn(torch, to_torch(a)))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=name)
    # gradients of a scalar loss through several factorizations
    x_o = oar.tensor(g, dtype=oar.float64).requires_grad_()
    x_t = to_torch(g).requires_grad_()
    for m, x in [(oar, x_o), (torch, x_t)]:
        y = m.linalg.svdvals(x).sum() + m.linalg.det(x).sum() + m.linalg.eigvalsh(x + x.mT).pow(2).sum()
        y.backward()
    np.testing.assert_allclose(N(x_o.grad), from_torch(x_t.grad), rtol=1e-8, atol=1e-8)
    # torch.svd returns V; torch.qr(some=False) a complete Q
    U, S, V = oar.svd(oar.tensor(g[0], dtype=oar.float64))
    np.testing.assert_allclose(N(U) * N(S) @ N(V).T, g[0], atol=1e-10)
    tall = rng.standard_normal((5, 3))
    Q, R = oar.qr(oar.tensor(tall, dtype=oar.float64), some=False)
    assert tuple(Q.shape) == (5, 5) and tuple(R.shape) == (5, 3)
    np.testing.assert_allclose(N(Q), from_torch(torch.qr(to_torch(tall), some=False).Q), atol=1e-10)


def cofactor_matrix(a):
    """C[i, j] = (-1)^(i+j) det(minor(i, j)): the gradient of det at any A, singular or not."""
    n = a.shape[0]
    c = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            c[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return c


@pytest.mark.parametrize("device", DEVICES)
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(device):
    # Exactly singular (a zero pivot): no inverse, but det still has a gradient, as in PyTorch.
    mats = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],   # rank 2
                     [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]],   # invertible, same batch
                     [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]])  # a zero row
    a = T(mats, device, grad=True)
    d = oar.linalg.det(a)
    np.testing.assert_allclose(d.detach().cpu().numpy(), np.linalg.det(mats), atol=1e-12)
    w = np.array([0.5, -1.5, 2.0])
    (d * T(w, device)).sum().backward()
    want = np.stack([wi * cofactor_matrix(m) for wi, m in zip(w, mats)])
    # det is a polynomial in A's entries, so the cofactors are exact. (Debian's PyTorch 1.13 is no
    # reference here: its backward returns zeros at exactly singular inputs.)
    np.testing.assert_allclose(a.grad.cpu().numpy(), want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_lu_factor_gradients(device):
    # Square A: the packed LU and the P, L, U of linalg.lu get gradients (the pivots are piecewise
    # constant, so finite differences see the same row order); PyTorch's numbers where installed.
    a = rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)[[2, 0, 3, 1]]  # pivoting happens, well conditioned
    _gradcheck(lambda x: oar.linalg.lu_factor(x).LU, a, device=device)
    _gradcheck(lambda x: tuple(oar.linalg.lu(x))[1:], a, device=device)
    w = rng.standard_normal((2, 4, 4))
    x = T(a, device, grad=True)
    (oar.linalg.lu_factor(x).LU * T(w, device)).sum().backward()
    torch = import_torch()
    if torch is not None:
        tx = to_torch(a).requires_grad_()
        (torch.linalg.lu_factor(tx).LU * to_torch(w)).sum().backward()
        np.testing.assert_allclose(N(x.grad), from_torch(tx.grad), rtol=1e-9, atol=1e-10)
    with pytest.raises(NotImplementedError, match="non-square"):
        oar.linalg.lu_factor(T(rng.standard_normal((5, 3)), device, grad=True))


def test_torch_lu_lu_unpack_tensorinv_tensorsolve():
    # torch.lu / lu_unpack (packed factors of any shape) and linalg.tensorinv / tensorsolve against NumPy
    a = rng.standard_normal((2, 4, 3))
    LU, piv = oar.lu(T(a, "cpu"))
    LU2, piv2, info = T(a, "cpu").lu(get_infos=True)
    assert info.tolist() == [0, 0] and piv2.tolist() == piv.tolist()
    P, L, U = oar.lu_unpack(LU, piv)
    assert tuple(P.shape) == (2, 4, 4) and tuple(L.shape) == (2, 4, 3) and tuple(U.shape) == (2, 3, 3)
    np.testing.assert_allclose(N(P @ L @ U), a, atol=1e-12)
    assert oar.lu_unpack(LU, piv, unpack_data=False).L.numel() == 0
    s = rng.standard_normal((6, 6)) + 3 * np.eye(6)
    np.testing.assert_allclose(N(oar.linalg.tensorinv(T(s.reshape(2, 3, 6), "cpu"), ind=2)),
                               np.linalg.tensorinv(s.reshape(2, 3, 6), ind=2), rtol=1e-10)
    b = rng.standard_normal((2, 3))
    a4 = s.reshape(2, 3, 2, 3)
    np.testing.assert_allclose(N(oar.linalg.tensorsolve(T(a4, "cpu"), T(b, "cpu"))), np.linalg.tensorsolve(a4, b),
                               rtol=1e-10)
    np.testing.assert_allclose(N(oar.linalg.tensorsolve(T(a4, "cpu"), T(b, "cpu"), dims=(0,))),
                               np.linalg.tensorsolve(a4, b, axes=(0,)), rtol=1e-10)
    with pytest.raises(ValueError, match="tensorinv"):
        oar.linalg.tensorinv(T(rng.standard_normal((2, 3, 4)), "cpu"), ind=1)
