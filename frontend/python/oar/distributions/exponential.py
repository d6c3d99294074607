"""Exponential(rate) (torch.distributions.Exponential)."""
from .._ops import ops
from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all, expanded_copy, rand_like_shape, zeros_like

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Density rate * exp(-rate x) on x >= 0. rsample = -log(U) / rate."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of([rate], self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded_copy(self, Exponential, batch_shape, ["rate"], _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # 1 - U lies in (0, 1]: -log of it is finite and >= 0
        u = 1.0 - rand_like_shape(shape, self.rate)
        return -ops.log(u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value):
        return -ops.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ops.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -ops.log(-x)
