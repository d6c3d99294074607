"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)
(torch.distributions.LowRankMultivariateNormal). log_prob and entropy use the Woodbury identity and the
matrix determinant lemma through the m x m capacitance matrix I + W^T D^-1 W, so no n x n factorization."""
import math

from .. import _C
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv, _linalg, _solve_lower
from .utils import broadcast_shape, diagonal, expand_to, eye_like, lazy_property, randn_like_shape

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^-1 W."""
    m = W.shape[-1]
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    K = Wt_Dinv @ W + eye_like(W, m)
    return _linalg().cholesky(K)


def _lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return (2 * ops.sum(ops.log(diagonal(capacitance_tril)), dims=[-1], keepdim=False)
            + ops.sum(ops.log(D), dims=[-1], keepdim=False))


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2 (Woodbury)."""
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    return ops.sum(x.pow(2) / D, dims=[-1], keepdim=False) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if not isinstance(loc, _C.Tensor) or loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        n, m = event_shape[0], cov_factor.shape[-1]
        try:
            batch_shape = broadcast_shape(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        except _C.ShapeError:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from None
        self.loc = expand_to(loc, batch_shape + (n,))
        self.cov_factor = expand_to(cov_factor, batch_shape + (n, m))
        self.cov_diag = expand_to(cov_diag, batch_shape + (n,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = expand_to(self.loc, loc_shape)
        new.cov_diag = expand_to(self.cov_diag, loc_shape)
        new.cov_factor = expand_to(self.cov_factor, loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return expand_to(ops.sum(W.pow(2), dims=[-1], keepdim=False) + D, self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        # L = D^1/2 chol(I + D^-1/2 W W^T D^-1/2): the n x n factor, built only on request
        n = self._event_shape[0]
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        d_sqrt = ops.sqrt(D).unsqueeze(-1)
        Dinvsqrt_W = W / d_sqrt
        K = Dinvsqrt_W @ Dinvsqrt_W.transpose(-2, -1) + eye_like(W, n)
        return expand_to(d_sqrt * _linalg().cholesky(K), self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        cov = W @ W.transpose(-2, -1) + ops.diag_embed(D)
        return expand_to(cov, self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        # (W W^T + D)^-1 = D^-1 - A^T A with A = C^-1 W^T D^-1 (Woodbury)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
        A = _solve_lower(self._capacitance_tril, Wt_Dinv)
        prec = ops.diag_embed(D.reciprocal()) - A.transpose(-2, -1) @ A
        return expand_to(prec, self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_W = randn_like_shape(shape[:-1] + tuple(W.shape[-1:]), self.loc)
        eps_D = randn_like_shape(shape, self.loc)
        return self.loc + _batch_mv(W, eps_W) + ops.sqrt(D) * eps_D

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        M = _lowrank_mahalanobis(W, D, diff, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return expand_to(H, self._batch_shape)
