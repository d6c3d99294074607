"""Correlation-matrix Cholesky factors: constraints.corr_cholesky, CorrCholeskyTransform (biject_to of it),
the tril <-> vector helpers and LKJCholesky, against PyTorch 1.13 where installed and closed forms."""
import math

import numpy as np
import pytest

import oar
import oar.distributions as D
from oar.distributions import constraints, biject_to, transform_to
from oar.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
from torch_ref import import_torch, to_torch, from_torch

rng = np.random.default_rng(5)


def T(a):
    return oar.tensor(np.asarray(a, dtype=np.float64))


def test_tril_vector_round_trip():
    v = np.arange(1.0, 7.0)
    m = vec_to_tril_matrix(T(v)).numpy()
    np.testing.assert_array_equal(m, [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(vec_to_tril_matrix(T(v[:3]), diag=-1).numpy(), [[0, 0, 0], [1, 0, 0], [2, 3, 0]])
    a = rng.standard_normal((2, 4, 4))
    np.testing.assert_array_equal(tril_matrix_to_vec(T(a), diag=1).numpy(), a[:, np.tril(np.ones((4, 4)), 1) > 0])
    with pytest.raises(ValueError):
        vec_to_tril_matrix(T(np.ones(5)))


def test_corr_cholesky_transform():
    x = T(rng.standard_normal((3, 6))).requires_grad_()
    t = biject_to(constraints.corr_cholesky)
    assert isinstance(t, D.CorrCholeskyTransform) and t == transform_to(constraints.corr_cholesky)
    y = t(x)
    assert tuple(y.shape) == (3, 4, 4)
    assert constraints.corr_cholesky.check(y).all().item()
    yy = y.detach().numpy()
    np.testing.assert_allclose(np.linalg.norm(yy, axis=-1), 1.0, rtol=1e-12)   # unit rows
    np.testing.assert_allclose(t.inv(y.detach()).numpy(), x.detach().numpy(), atol=1e-12)
    assert t.forward_shape((3, 6)) == (3, 4, 4) and t.inverse_shape((3, 4, 4)) == (3, 6)
    assert not constraints.corr_cholesky.check(T(2 * np.eye(3))).item()
    ladj = t.log_abs_det_jacobian(x, y)
    # x and the strict lower part of y have equal size: the log-det of that map, by finite differences
    for b in range(3):
        f = lambda v: tril_matrix_to_vec(t(T(v)), diag=-1).numpy()
        x0 = x.detach().numpy()[b]
        J = np.stack([(f(x0 + h) - f(x0 - h)) / 2e-6 for h in 1e-6 * np.eye(6)], 1)
        np.testing.assert_allclose(ladj[b].item(), np.linalg.slogdet(J)[1], rtol=1e-6)
    ladj.sum().backward()
    torch = import_torch()
    if torch is not None:
        tx = to_torch(x.detach().numpy()).requires_grad_()
        tt = torch.distributions.biject_to(torch.distributions.constraints.corr_cholesky)
        ty = tt(tx)
        np.testing.assert_allclose(yy, from_torch(ty), rtol=1e-12, atol=1e-14)
        tl = tt.log_abs_det_jacobian(tx, ty)
        np.testing.assert_allclose(ladj.detach().numpy(), from_torch(tl), rtol=1e-12)
        tl.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), from_torch(tx.grad), rtol=1e-10, atol=1e-12)


def test_lower_cholesky_has_no_bijection():
    # LowerCholeskyTransform drops the upper triangle, so torch registers it for transform_to only
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky"):
        biject_to(constraints.lower_cholesky)
    assert isinstance(transform_to(constraints.lower_cholesky), D.LowerCholeskyTransform)


@pytest.mark.parametrize("dim,conc", [(2, 1.0), (3, 0.5), (4, 2.0)])
def test_lkj_cholesky(dim, conc):
    oar.manual_seed(0)
    d = D.LKJCholesky(dim, T(conc))
    assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (dim, dim)
    L = d.sample((20000,))
    assert constraints.corr_cholesky.check(L).all().item()
    C = (L @ L.mT).numpy()
    # an off-diagonal correlation is 2 Beta(b, b) - 1 with b = conc + (dim - 2) / 2: E r^2 = 1 / (2 b + 1)
    b = conc + 0.5 * (dim - 2)
    assert abs((C[:, 1, 0] ** 2).mean() - 1 / (2 * b + 1)) < 0.01
    corr = np.array([[1, .3, .1, 0], [.3, 1, .2, .1], [.1, .2, 1, .3], [0, .1, .3, 1]])[:dim, :dim]
    Lc = np.linalg.cholesky(corr)
    lp = d.log_prob(T(Lc)).item()
    if dim == 2:   # r uniform on (-1, 1) at conc 1, and dr/dL[1, 0] = 1
        assert lp == pytest.approx(math.log(0.5), rel=1e-12)
    torch = import_torch()
    if torch is not None:
        want = torch.distributions.LKJCholesky(dim, to_torch(np.array(conc))).log_prob(to_torch(Lc)).item()
        assert lp == pytest.approx(want, rel=1e-12)
    bd = D.LKJCholesky(3, T([0.5, 2.0]))
    assert tuple(bd.sample((5,)).shape) == (5, 2, 3, 3) and tuple(bd.expand((4, 2)).sample().shape) == (4, 2, 3, 3)
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        D.LKJCholesky(1)
