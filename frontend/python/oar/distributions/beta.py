"""Beta(concentration1, concentration0) on [0, 1] (torch.distributions.Beta)."""
import numbers

from .._ops import ops
from . import constraints
from ._standard_gamma import standard_gamma
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, expand_to, finfo, xlogy

__all__ = ["Beta"]


def _lbeta(a, b):
    return ops.lgamma(a) + ops.lgamma(b) - ops.lgamma(a + b)


class Beta(ExponentialFamily):
    """Density x^(a-1) (1-x)^(b-1) / B(a, b) with a = concentration1, b = concentration0.
    Samples are X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), so rsample is differentiable through the
    Gamma draws' implicit gradients."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        both_numbers = isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number)
        super().__init__(() if both_numbers else self.concentration1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration1 = expand_to(self.concentration1, batch_shape)
        new.concentration0 = expand_to(self.concentration0, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # Dirichlet's mode, as torch computes it: at an end point when both concentrations are below 1.
        a, b = self.concentration1, self.concentration0
        am1, bm1 = ops.clamp(a - 1, min=0.0), ops.clamp(b - 1, min=0.0)
        interior = am1 / (am1 + bm1)
        end = (a >= b).to(a.dtype)
        return ops.where((a < 1) & (b < 1), end, interior)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(expand_to(self.concentration1, shape))
        y = standard_gamma(expand_to(self.concentration0, shape))
        info = finfo(x.dtype)
        return ops.clamp(x / (x + y), min=float(info.tiny), max=float(1 - info.eps))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return xlogy(a - 1, value) + xlogy(b - 1, 1 - value) - _lbeta(a, b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (_lbeta(a, b) - (a - 1) * ops.digamma(a) - (b - 1) * ops.digamma(b)
                + (total - 2) * ops.digamma(total))

    @property
    def _natural_params(self):
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return _lbeta(x, y)
