"""oar.svd_lowrank / oar.pca_lowrank (randomized SVD, torch 1.13's torch/_lowrank.py) against NumPy's
SVD: on matrices of rank <= q the randomized basis spans the range exactly, so the factors are exact."""
import numpy as np
import pytest

import oar

rng = np.random.default_rng(11)


def low_rank(m, n, r, batch=()):
    return rng.standard_normal(batch + (m, r)) @ rng.standard_normal(batch + (r, n))


def T(a):
    return oar.tensor(np.asarray(a), dtype=oar.float64)


@pytest.mark.parametrize("shape", [(30, 8), (8, 30), (30, 5), (3, 12, 7)])  # both branches, batched
def test_svd_lowrank_is_exact_on_low_rank_matrices(shape):
    a = low_rank(shape[-2], shape[-1], 3, shape[:-2])
    oar.manual_seed(0)
    U, S, V = oar.svd_lowrank(T(a), q=5, niter=2)
    q = 5
    assert tuple(U.shape) == shape[:-2] + (shape[-2], q) and tuple(V.shape) == shape[:-2] + (shape[-1], q)
    assert tuple(S.shape) == shape[:-2] + (q,)
    np.testing.assert_allclose(S.numpy()[..., :3], np.linalg.svd(a, compute_uv=False)[..., :3], rtol=1e-10)
    np.testing.assert_allclose((U * S.unsqueeze(-2)) @ V.mT, a, atol=1e-10)
    np.testing.assert_allclose(V.mT @ V, np.broadcast_to(np.eye(q), S.shape + (q,)), atol=1e-10)


def test_svd_lowrank_subtracts_M_without_forming_it():
    a = low_rank(20, 6, 2) + 5.0
    m = np.full((20, 6), 5.0)
    U, S, V = oar.svd_lowrank(T(a), q=4, M=T(m))
    np.testing.assert_allclose(S.numpy()[:2], np.linalg.svd(a - m, compute_uv=False)[:2], rtol=1e-10)


def test_pca_lowrank_matches_the_centered_svd():
    x = low_rank(50, 6, 3) + rng.standard_normal(6)   # rank 3 after centering
    oar.manual_seed(1)
    U, S, V = oar.pca_lowrank(T(x), q=4, niter=3)
    xc = x - x.mean(0)
    _, s, vh = np.linalg.svd(xc, full_matrices=False)
    np.testing.assert_allclose(S.numpy()[:3], s[:3], rtol=1e-10)
    # principal directions agree up to sign
    np.testing.assert_allclose(np.abs(np.sum(V.numpy()[:, :3] * vh[:3].T, 0)), np.ones(3), atol=1e-10)
    assert tuple(oar.pca_lowrank(T(x))[1].shape) == (6,)   # q defaults to min(6, m, n)
    U, S, V = oar.pca_lowrank(T(xc), q=3, center=False)
    np.testing.assert_allclose(S.numpy(), s[:3], rtol=1e-10)
    with pytest.raises(ValueError, match="not greater than min"):
        oar.pca_lowrank(T(x), q=7)
    with pytest.raises(TypeError):
        oar.pca_lowrank(x)
