"""HalfCauchy(scale) = |Cauchy(0, scale)| (torch.distributions.HalfCauchy)."""
from ._half import _HalfDistribution
from .cauchy import Cauchy
from .utils import full_like

__all__ = ["HalfCauchy"]


class HalfCauchy(_HalfDistribution):
    _base_cls = Cauchy

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return full_like(self.scale, float("inf"))

    @property
    def variance(self):
        return self.base_dist.variance
