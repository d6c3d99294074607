"""HalfCauchy and HalfNormal: |X| for X = Base(0, scale), a distribution symmetric about 0, so on [0, inf) the
density is twice the base's, cdf(x) = 2 base.cdf(x) - 1, and the entropy is the base's less log 2."""
import math

from .._ops import ops
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import full_like, zeros_like


class _HalfDistribution(TransformedDistribution):
    """Subclasses name _base_cls (Cauchy, Normal) and give mean, variance and expand."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base_cls = None

    def __init__(self, scale, validate_args=None):
        base = self._base_cls(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ops.where(value >= 0, log_prob, full_like(log_prob, float("-inf")))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
