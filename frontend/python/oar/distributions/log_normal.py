"""LogNormal(loc, scale) = exp(Normal(loc, scale)) (torch.distributions.LogNormal)."""
from .._ops import ops
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return ops.exp(self.loc + self.scale.pow(2) / 2)

    @property
    def mode(self):
        return ops.exp(self.loc - self.scale.pow(2))

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return ops.expm1(s2) * ops.exp(2 * self.loc + s2)

    def entropy(self):
        return self.base_dist.entropy() + self.loc
