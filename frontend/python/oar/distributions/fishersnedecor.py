"""FisherSnedecor(df1, df2): the F distribution (torch.distributions.FisherSnedecor), sampled as the ratio
of two scaled Gamma draws (so rsample carries their implicit gradients)."""
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import batch_shape_of, broadcast_all, expand_to, finfo, full_like

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(batch_shape_of([df1, df2], self.df1), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = tuple(batch_shape)
        new.df1, new.df2 = expand_to(self.df1, batch_shape), expand_to(self.df2, batch_shape)
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2
        return ops.where(df2 > 2, df2 / (df2 - 2), full_like(df2, float("nan")))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ops.where(self.df1 > 2, mode, full_like(mode, float("nan")))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ops.where(df2 > 4, var, full_like(var, float("nan")))

    def rsample(self, sample_shape=()):
        # X1 / X2 with Xi ~ Gamma(dfi / 2, dfi) = Chi2(dfi) / dfi
        tiny = float(finfo(self.df1.dtype).tiny)
        x1 = self._gamma1.rsample(sample_shape)
        x2 = ops.clamp(self._gamma2.rsample(sample_shape), min=tiny)
        return ops.clamp(x1 / x2, min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = ops.lgamma(ct1 + ct2) - ops.lgamma(ct1) - ops.lgamma(ct2)
        t2 = ct1 * ops.log(ct3) + (ct1 - 1) * ops.log(value)
        t3 = (ct1 + ct2) * ops.log1p(ct3 * value)
        return t1 + t2 - t3
