"""Laplace(loc, scale) (torch.distributions.Laplace)."""
import math

from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all, expanded_copy, finfo, rand_like_shape

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale). rsample inverts the cdf at a uniform draw."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of([loc, scale], self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded_copy(self, Laplace, batch_shape, ["loc", "scale"], _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = float(finfo(self.loc.dtype).eps)
        # U uniform on (-1, 1): |U| < 1 keeps log1p(-|U|) finite
        u = rand_like_shape(shape, self.loc) * 2 - 1
        u = ops.clamp(u, min=eps - 1, max=1 - eps)
        return self.loc - self.scale * ops.sign(u) * ops.log1p(-ops.abs(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ops.log(2 * self.scale) - ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * ops.sign(z) * ops.expm1(-ops.abs(z) / self.scale)

    def icdf(self, value):
        t = value - 0.5
        return self.loc - self.scale * ops.sign(t) * ops.log1p(-2 * ops.abs(t))

    def entropy(self):
        return 1 + ops.log(2 * self.scale)
