"""Wishart(df, covariance_matrix | precision_matrix | scale_tril) (torch.distributions.Wishart).

Distribution of X = sum_k x_k x_k^T over df Gaussian vectors x_k ~ N(0, Sigma) (df real, > p - 1). All the
matrix work goes through the lower Cholesky factor L of Sigma, as in MultivariateNormal. rsample is the
Bartlett decomposition X = (L A)(L A)^T, A lower triangular with sqrt(Chi2(df - i)) on the diagonal and
standard normals below it: differentiable in L and (implicit Chi2 gradients) in df."""
import math
import numbers
import warnings

from .. import _C, _creation, autograd
from .._ops import ops
from ..special import digamma, multigammaln
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate_normal import ScaleTrilMatrices, _linalg, _precision_to_scale_tril, _solve_lower
from .utils import broadcast_shape, expand_to, finfo

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: sum_{i<p} digamma(x - i/2)."""
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    half = _C.call("arange", [], {"start": 0.0, "end": float(p), "step": 1.0, "dtype": x.dtype}, x.device) / 2
    return ops.sum(digamma(x.unsqueeze(-1) - half), dims=[-1], keepdim=False)


def _clamp_above_eps(x):
    return ops.clamp(x, min=float(finfo(x.dtype).eps))


def _diag(m):
    return ops.diagonal(m, dim1=-2, dim2=-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """Wishart distribution over p x p positive definite matrices, with mean df * Sigma; give exactly one
    of covariance_matrix (Sigma), precision_matrix (Sigma^-1) or scale_tril (L, Sigma = L L^T)."""
    arg_constraints = {
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
        "df": constraints.greater_than(0),
    }
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _C.tensor(float(df), param.dtype, param.device)
        else:
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = expand_to(df, batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]

        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")

        matrix_shape = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = expand_to(param, matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = expand_to(param, matrix_shape)
        else:
            self.precision_matrix = expand_to(param, matrix_shape)

        # torch writes this into the class's dict; here each instance has its own (df > p - 1 for its p)
        self.arg_constraints = dict(type(self).arg_constraints, df=constraints.greater_than(p - 1))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.")

        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg().cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._make_chi2(self.df, batch_shape)

    def _make_chi2(self, df, batch_shape):
        """Chi2(df - i), i < p: the squared diagonal of the Bartlett factor."""
        L = self._unbroadcasted_scale_tril
        offsets = _C.call("arange", [], {"start": 0.0, "end": float(self._event_shape[-1]), "step": 1.0,
                                         "dtype": L.dtype}, L.device)
        return Chi2(df=df.unsqueeze(-1) - expand_to(offsets, tuple(batch_shape) + (self._event_shape[-1],)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = expand_to(self._unbroadcasted_scale_tril, cov_shape)
        new.df = expand_to(self.df, batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        if "arg_constraints" in self.__dict__:
            new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, expand_to(self.__dict__[name], cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._make_chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self, m):
        return expand_to(m, tuple(self._batch_shape) + tuple(self._event_shape))

    def _df_matrix(self, df=None):
        return (self.df if df is None else df).reshape(*(tuple(self._batch_shape) + (1, 1)))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) Sigma; NaN where df <= p + 1 (no mode inside the support)."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ops.where(factor <= 0, factor * float("nan"), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = _diag(V)
        return self._df_matrix() * (V * V + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        diag = _clamp_above_eps(ops.sqrt(self._dist_chi2.rsample(sample_shape)))
        shape = tuple(sample_shape) + tuple(self._batch_shape) + (p, p)
        below = ops.tril(_creation.randn(*shape, dtype=L.dtype, device=L.device), diagonal=-1)
        chol = L @ (ops.diag_embed(diag) + below)
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        with autograd.no_grad():
            return ~self.support.check(sample.detach())

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett-decomposition draws. A draw that is not numerically positive definite (likely for
        p - 1 < df < p) is drawn again, up to max_try_correction (default 10) times, with a warning;
        one that stays singular is returned as it is (its log_prob may be -inf).
        torch 1.13 tests the flag the other way round and so warns "Singular sample detected." and
        redraws on every call; here only singular draws are replaced."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                replace = is_singular & ~self._singular(sample_new)
                sample = ops.where(replace.unsqueeze(-1).unsqueeze(-1), sample_new, sample)
                is_singular = is_singular & ~replace
                if not bool(is_singular.any()):
                    break
        return sample

    def _trace_inv_cov_times(self, value):
        """trace(Sigma^-1 X) = trace(L^-1 X L^-T), by two triangular solves."""
        L = self._unbroadcasted_scale_tril
        Y = _solve_lower(L, value)
        Z = _solve_lower(L, Y.transpose(-2, -1))
        return ops.sum(_diag(Z), dims=[-1], keepdim=False)

    def _half_log_det(self):
        return ops.sum(ops.log(_diag(self._unbroadcasted_scale_tril)), dims=[-1], keepdim=False)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        return (-nu * (p * _log_2 / 2 + self._half_log_det())
                - multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * _linalg().slogdet(value).logabsdet
                - self._trace_inv_cov_times(value) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _log_2 / 2 + self._half_log_det())
                + multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-_linalg().slogdet(-2 * x).logabsdet + _log_2 * p)
                + multigammaln(y + (p + 1) / 2, p))
