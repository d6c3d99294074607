"""Poisson(rate) (torch.distributions.Poisson)."""
from .. import autograd
from .._ops import ops
from . import constraints
from ._discrete_sampling import poisson
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all, expanded_copy, xlogy

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """P(k) = rate^k e^-rate / k! on the nonnegative integers (samples are floating, as in torch)."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of([rate], self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded_copy(self, Poisson, batch_shape, ["rate"], _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return ops.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return poisson(self.rate.detach(), shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return xlogy(value, self.rate) - self.rate - ops.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (ops.log(self.rate),)

    def _log_normalizer(self, x):
        return ops.exp(x)
