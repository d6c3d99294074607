"""StudentT(df, loc, scale) (torch.distributions.StudentT)."""
import math

from .._ops import ops
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all, expand_to, full_like, randn_like_shape

__all__ = ["StudentT"]


class StudentT(Distribution):
    """loc + scale * X / sqrt(Z / df) with X ~ Normal(0, 1), Z ~ Chi2(df): rsample is differentiable in
    all three parameters (df through the Gamma draw's implicit gradient)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(batch_shape_of([df, loc, scale], self.df), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = tuple(batch_shape)
        new.df, new.loc, new.scale = (expand_to(t, batch_shape) for t in (self.df, self.loc, self.scale))
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return ops.where(self.df > 1, self.loc, full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / ops.clamp(df - 2, min=1e-30)
        inf, nan = full_like(df, float("inf")), full_like(df, float("nan"))
        return ops.where(df > 2, finite, ops.where(df > 1, inf, nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = randn_like_shape(shape, self.df)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ops.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_z = (ops.log(self.scale) + 0.5 * ops.log(df) + 0.5 * math.log(math.pi)
                 + ops.lgamma(0.5 * df) - ops.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * ops.log1p(y.pow(2) / df) - log_z

    def entropy(self):
        df = self.df
        lbeta = ops.lgamma(0.5 * df) + math.lgamma(0.5) - ops.lgamma(0.5 * (df + 1))
        return (ops.log(self.scale) + 0.5 * (df + 1) * (ops.digamma(0.5 * (df + 1)) - ops.digamma(0.5 * df))
                + 0.5 * ops.log(df) + lbeta)
