"""Randomized low-rank SVD and PCA (torch.svd_lowrank, torch.pca_lowrank): Halko, Martinsson and Tropp
2009, Algorithms 4.4 and 5.1, written as torch 1.13's torch/_lowrank.py with oar.linalg."""
from . import _C
from . import linalg as _la

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    return A.dtype if A.is_floating_point() else _C.dtype.float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An orthonormal [.., m, q] basis Q whose span approximates the range of A - M (subspace iteration)."""
    from . import randn
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    # A - M is never formed: M may be a broadcast mean, cheaper to apply than to subtract
    if M is None:
        Q = _la.qr(A @ R).Q
        for _ in range(niter):
            Q = _la.qr(A.mT @ Q).Q
            Q = _la.qr(A @ Q).Q
        return Q
    Q = _la.qr(A @ R - M @ R).Q
    for _ in range(niter):
        Q = _la.qr(A.mT @ Q - M.mT @ Q).Q
        Q = _la.qr(A @ Q - M @ Q).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if m < n or n > q:
        # the basis of A^T keeps B small when A is wide or has more columns than q
        Q = get_approximate_basis(A.mT, q, niter=niter, M=None if M is None else M.mT)
        B_t = A @ Q if M is None else A @ Q - M @ Q
        U, S, Vh = _la.svd(B_t, full_matrices=False)
        return U, S, Q @ Vh.mT
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M
    U, S, Vh = _la.svd(B, full_matrices=False)
    return Q @ U, S, Vh.mT


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~= U diag(S) V^T, U [.., m, q], V [.., n, q]; random, so seed oar to repeat it."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the (centered) data A [.., m, n]: the principal directions are V's columns and
    S**2 / (m - 1) the variances along them."""
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"pca_lowrank: A must be a Tensor, got {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
