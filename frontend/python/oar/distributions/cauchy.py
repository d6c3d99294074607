"""Cauchy(loc, scale) (torch.distributions.Cauchy)."""
import math

from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all, expanded_copy, full_like, rand_like_shape

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)); mean and variance are undefined (nan / inf as in
    torch). rsample = loc + scale * tan(pi (U - 1/2))."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of([loc, scale], self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded_copy(self, Cauchy, batch_shape, ["loc", "scale"], _instance)

    @property
    def mean(self):
        return full_like(self.loc, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full_like(self.loc, float("inf"))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand_like_shape(shape, self.loc)
        return self.loc + self.scale * ops.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - ops.log(self.scale) - ops.log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + ops.log(self.scale)
