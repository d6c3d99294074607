"""NegativeBinomial(total_count, probs | logits) (torch.distributions.NegativeBinomial): the number of
successes, each of probability probs, before total_count failures. Samples are
Poisson(Gamma(total_count, (1 - p) / p)) draws."""
from .. import autograd
from .._ops import ops
from . import constraints
from ._discrete_sampling import poisson
from ._probs_logits import _BinaryProbsLogits
from .distribution import Distribution
from .gamma import Gamma
from .utils import batch_shape_of, lazy_property, softplus, zeros_like

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbsLogits, Distribution):
    """P(k) = C(k + r - 1, k) p^k (1 - p)^r for r = total_count > 0 (real), k = 0, 1, ..."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        given, param, (total,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total.to(param.dtype)
        super().__init__(batch_shape_of([total_count, given], param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_or_logits(NegativeBinomial, batch_shape, _instance, ["total_count"])

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self):
        return ops.clamp(ops.floor((self.total_count - 1) * ops.exp(self.logits)), min=0.0)

    @property
    def variance(self):
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=ops.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        with autograd.no_grad():
            rate = self._gamma.sample(sample_shape)
            return poisson(rate, tuple(rate.shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r, logits = self.total_count, self.logits
        # log sigmoid(x) = -softplus(-x)
        log_unnormalized = -r * softplus(logits) - value * softplus(-logits)
        log_normalization = -ops.lgamma(r + value) + ops.lgamma(1.0 + value) + ops.lgamma(r)
        # total_count + value == 0 (an empty count of a degenerate distribution): probability 1
        log_normalization = ops.where(r + value == 0, zeros_like(log_normalization), log_normalization)
        return log_unnormalized - log_normalization
