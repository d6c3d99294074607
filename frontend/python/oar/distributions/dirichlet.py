"""Dirichlet(concentration) on the simplex (torch.distributions.Dirichlet)."""
from .. import _C
from .._ops import ops
from . import constraints
from ._standard_gamma import standard_gamma
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import expand_to, finfo, xlogy

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Density prod_i x_i^(a_i - 1) / B(a) on the simplex. rsample normalizes independent Gamma(a_i, 1)
    draws, so it is differentiable through their implicit gradients."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, _C.Tensor) or concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = expand_to(self.concentration, batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(expand_to(self.concentration, shape))
        y = x / ops.sum(x, dims=[-1], keepdim=True)
        info = finfo(y.dtype)
        return ops.clamp(y, min=float(info.tiny), max=float(1 - info.eps))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (ops.sum(xlogy(a - 1.0, value), dims=[-1], keepdim=False)
                + ops.lgamma(ops.sum(a, dims=[-1], keepdim=False)) - ops.sum(ops.lgamma(a), dims=[-1], keepdim=False))

    @property
    def mean(self):
        return self.concentration / ops.sum(self.concentration, dims=[-1], keepdim=True)

    @property
    def mode(self):
        am1 = ops.clamp(self.concentration - 1, min=0.0)
        total = ops.sum(am1, dims=[-1], keepdim=True)
        interior = am1 / total
        # every concentration below 1: torch's answer is the first vertex
        k = self.concentration.shape[-1]
        first = (_C.call("arange", [], {"start": 0.0, "end": float(k), "step": 1.0, "dtype": am1.dtype},
                         am1.device) == 0).to(am1.dtype)
        all_below = ops.max(self.concentration, dims=[-1], keepdim=True) < 1
        return ops.where(all_below, expand_to(first, interior.shape), interior)

    @property
    def variance(self):
        a = self.concentration
        a0 = ops.sum(a, dims=[-1], keepdim=True)
        return a * (a0 - a) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = ops.sum(a, dims=[-1], keepdim=False)
        return (ops.sum(ops.lgamma(a), dims=[-1], keepdim=False) - ops.lgamma(a0) - (k - a0) * ops.digamma(a0)
                - ops.sum((a - 1.0) * ops.digamma(a), dims=[-1], keepdim=False))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return ops.sum(ops.lgamma(x), dims=[-1], keepdim=False) - ops.lgamma(ops.sum(x, dims=[-1], keepdim=False))
