"""Uniform(low, high) on the half-open interval [low, high) (torch.distributions.Uniform)."""
import numbers

from .. import _creation
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, expand_to

__all__ = ["Uniform"]


class Uniform(Distribution):
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if both_numbers else self.low.shape, validate_args=validate_args)
        if self._validate_args:
            from .utils import all_true
            if not all_true(self.low < self.high):
                raise ValueError(f"Expected parameter low (Tensor of shape {tuple(self.low.shape)}) of distribution "
                                 f"{self!r} to be less than high (Uniform needs low < high), but found invalid "
                                 f"values:\nlow={self.low}\nhigh={self.high}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = tuple(batch_shape)
        new.low, new.high = expand_to(self.low, batch_shape), expand_to(self.high, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")  # every point of the interval is a mode

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _creation.rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return ops.log(lb * ub) - ops.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.clamp((value - self.low) / (self.high - self.low), min=0.0, max=1.0)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ops.log(self.high - self.low)
