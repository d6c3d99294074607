"""Gumbel(loc, scale) (torch.distributions.Gumbel): loc - scale * log(-log U)."""
import math

from .._ops import ops
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import EULER_GAMMA, broadcast_all, finfo, full_like

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        base = Uniform(full_like(self.loc, float(info.tiny)), full_like(self.loc, float(1 - info.eps)),
                       validate_args=validate_args)
        # U -> -log U (> 0) -> log(-log U) -> loc - scale * log(-log U)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-full_like(self.scale, 1.0)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        batch_shape = tuple(batch_shape)
        new.loc, new.scale = self.loc.expand(*batch_shape), self.scale.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - ops.exp(z)) - ops.log(self.scale)

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return ops.log(self.scale) + (1 + EULER_GAMMA)
