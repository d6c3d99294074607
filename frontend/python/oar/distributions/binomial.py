"""Binomial(total_count, probs | logits) (torch.distributions.Binomial)."""
from .. import _C, autograd
from .._ops import ops
from . import constraints
from ._discrete_sampling import binomial
from .distribution import Distribution
from .utils import (batch_shape_of, broadcast_all, expand_to, lazy_property, logits_to_probs, probs_to_logits,
                    softplus)

__all__ = ["Binomial"]


class Binomial(Distribution):
    """The number of successes in total_count independent trials of probability probs (or sigmoid(logits));
    total_count broadcasts with the probabilities."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        total, param = broadcast_all(total_count, given)
        self.total_count = total.to(param.dtype)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(batch_shape_of([total_count, given], param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = tuple(batch_shape)
        new.total_count = expand_to(self.total_count, batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, expand_to(self.__dict__[name], batch_shape))
                new._param = getattr(new, name)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ops.minimum(ops.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return binomial(self.total_count.detach(), self.probs.detach(), shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_binom = ops.lgamma(n + 1) - ops.lgamma(value + 1) - ops.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k logits - n softplus(logits)
        return log_binom + value * logits - n * softplus(logits)

    def _homogeneous_count(self, what):
        n = self.total_count
        hi, lo = float(ops.max(n).item()), float(ops.min(n).item())
        if hi != lo:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return int(hi)

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -ops.sum(ops.exp(log_prob) * log_prob, dims=[0], keepdim=False)

    def enumerate_support(self, expand=True):
        n = self._homogeneous_count("enumerate_support")
        like = self._param
        values = _C.call("arange", [], {"start": 0.0, "end": float(n + 1), "step": 1.0, "dtype": like.dtype},
                         like.device)
        values = values.reshape(n + 1, *((1,) * len(self._batch_shape)))
        return values.expand(n + 1, *self._batch_shape) if expand else values
