"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)
(torch.distributions.MultivariateNormal). Everything goes through the lower Cholesky factor L of the
covariance: oar.linalg.cholesky and oar.linalg.solve_triangular do the matrix work."""
import math

from .. import _C, _creation
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, diagonal, expand_to, eye_like, lazy_property

__all__ = ["MultivariateNormal"]


def _linalg():
    from .. import linalg
    return linalg


def _solve_lower(L, B):
    """L^-1 B for lower-triangular L, batch dims broadcast."""
    shape = broadcast_shape(L.shape[:-2], B.shape[:-2])
    return _linalg().solve_triangular(expand_to(L, shape + tuple(L.shape[-2:])),
                                      expand_to(B, shape + tuple(B.shape[-2:])), upper=False)


def _batch_mv(m, v):
    return (m @ v.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L, x):
    """x^T (L L^T)^-1 x over the batch: the squared norm of L^-1 x."""
    y = _solve_lower(L, x.unsqueeze(-1)).squeeze(-1)
    return ops.sum(y * y, dims=[-1], keepdim=False)


def _precision_to_scale_tril(P):
    """The Cholesky factor of P^-1: with P = Lp Lp^T, P^-1 = Lp^-T Lp^-1."""
    Lp = _linalg().cholesky(P)
    Lp_inv = _solve_lower(Lp, expand_to(eye_like(P, P.shape[-1]), P.shape))
    return _linalg().cholesky(Lp_inv.transpose(-2, -1) @ Lp_inv)


class ScaleTrilMatrices:
    """The three matrix views of a distribution parameterised by a lower-triangular factor L of a matrix S
    (`_unbroadcasted_scale_tril`): L, S = L L^T and S^-1, each expanded by the class's `_full`."""

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.transpose(-2, -1))

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        L_inv = _solve_lower(L, expand_to(eye_like(L, L.shape[-1]), L.shape))
        return self._full(L_inv.transpose(-2, -1) @ L_inv)


class MultivariateNormal(ScaleTrilMatrices, Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if not isinstance(loc, _C.Tensor) or loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix)) if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        if matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] != loc.shape[-1]:
            raise ValueError(f"{name} must be a square matrix of size loc.shape[-1] = {loc.shape[-1]}, "
                             f"got shape {tuple(matrix.shape)}")
        batch_shape = broadcast_shape(matrix.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        setattr(self, name, expand_to(matrix, batch_shape + (n, n)))
        self.loc = expand_to(loc, batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg().cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = expand_to(self.loc, loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, expand_to(getattr(self, name), cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, m):
        return expand_to(m, self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return expand_to(ops.sum(L * L, dims=[-1], keepdim=False), self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _creation.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return ops.sum(ops.log(diagonal(self._unbroadcasted_scale_tril)), dims=[-1], keepdim=False)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return expand_to(H, self._batch_shape)
