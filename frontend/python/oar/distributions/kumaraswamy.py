"""Kumaraswamy(concentration1, concentration0) on [0, 1] (torch.distributions.Kumaraswamy): density
a b x^(a-1) (1 - x^a)^(b-1); samples (1 - U^(1/b))^(1/a) for U uniform."""
from .._ops import ops
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import EULER_GAMMA, broadcast_all, full_like

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    return b * ops.exp(ops.lgamma(arg1) + ops.lgamma(b) - ops.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0.0), full_like(self.concentration0, 1.0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration1 = self.concentration1.expand(*batch_shape)
        new.concentration0 = self.concentration0.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a) for a, b >= 1 (not both 1); nan where there is no interior mode.
        # (torch 1.13's expression is nan for every concentration0 > 1.)
        a, b = self.concentration1, self.concentration0
        mode = ops.exp((ops.log(ops.clamp(a - 1, min=0.0)) - ops.log(a * b - 1)) / a)
        return ops.where((a < 1) | (b < 1) | ((a == 1) & (b == 1)), full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = ops.digamma(b + 1) + EULER_GAMMA
        return t0 + t1 * h0 - ops.log(a) - ops.log(b)
