"""Multinomial(total_count, probs | logits): counts of total_count categorical draws
(torch.distributions.Multinomial)."""
import math
import numbers

from .. import _C, autograd
from .._ops import ops
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_shape, expand_to, zeros_like

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Event: a count vector over the K categories summing to total_count (a Python int, as in torch)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=self.total_count, probs=self.probs)
        param_shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tuple(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        with autograd.no_grad():
            probs = self.probs.detach()
            if self.total_count == 0:
                return _C.call("fill", [], {"shape": list(self._extended_shape(sample_shape)), "value": 0.0,
                                            "dtype": probs.dtype}, probs.device)
            draws = self._categorical.sample((self.total_count,) + sample_shape)  # (n, *sample, *batch)
            draws = ops.movedim(draws, source=[0], destination=[-1])  # (*sample, *batch, n)
            shape = self._extended_shape(sample_shape)
            counts = _C.call("fill", [], {"shape": list(shape), "value": 0.0, "dtype": probs.dtype}, probs.device)
            ones = _C.call("fill", [], {"shape": list(draws.shape), "value": 1.0, "dtype": probs.dtype}, probs.device)
            return ops.scatter_add(counts, draws, ones, dim=-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        shape = broadcast_shape(logits.shape, value.shape)
        logits, value = expand_to(logits, shape), expand_to(value.to(logits.dtype), shape)
        log_n = ops.lgamma(ops.sum(value, dims=[-1], keepdim=False) + 1)
        log_xs = ops.sum(ops.lgamma(value + 1), dims=[-1], keepdim=False)
        # a zero count of an impossible class (logits -inf) contributes 0, not nan
        powers = ops.where((value == 0) & (logits == float("-inf")), zeros_like(logits), logits * value)
        return log_n - log_xs + ops.sum(powers, dims=[-1], keepdim=False)

    def entropy(self):
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)  # (n + 1, 1, ..., 1)
        support = support.narrow(0, 1, self.total_count)
        binomial_probs = ops.exp(self._binomial.log_prob(support))
        weights = ops.lgamma(support + 1)
        return term1 + ops.sum(binomial_probs * weights, dims=[0, -1], keepdim=False)
