"""Gamma(concentration, rate) (torch.distributions.Gamma)."""
import numbers

from .._ops import ops
from . import constraints
from ._standard_gamma import standard_gamma
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, expand_to, finfo, xlogy

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density rate^a x^(a-1) e^(-rate x) / Gamma(a). rsample is differentiable in both parameters
    (implicit reparameterization for the concentration)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if both_numbers else self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = expand_to(self.concentration, batch_shape)
        new.rate = expand_to(self.rate, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ops.clamp((self.concentration - 1) / self.rate, min=0.0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(expand_to(self.concentration, shape)) / expand_to(self.rate, shape)
        return ops.clamp(value, min=float(finfo(value.dtype).tiny))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, rate = self.concentration, self.rate
        return xlogy(a, rate) + xlogy(a - 1, value) - rate * value - ops.lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - ops.log(self.rate) + ops.lgamma(a) + (1.0 - a) * ops.digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ops.lgamma(x + 1) + (x + 1) * ops.log(-y.reciprocal())

    def cdf(self, value):
        raise NotImplementedError("Gamma.cdf needs the regularized incomplete gamma function (not in oar yet)")
