"""Bernoulli(probs | logits) (torch.distributions.Bernoulli)."""
import numbers

from .. import _creation
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, expand_to, lazy_property, logits_to_probs, probs_to_logits, softplus

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0; give exactly one of the two."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = expand_to(self.probs, batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = expand_to(self.logits, batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ops.where(self.probs == 0.5, mode * float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = expand_to(self.probs.detach(), shape)
        u = _creation.rand(*shape, dtype=probs.dtype, device=probs.device)
        return (u < probs).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # -binary_cross_entropy_with_logits(logits, value)
        return value * self.logits - softplus(self.logits)

    def entropy(self):
        return softplus(self.logits) - self.probs * self.logits

    @property
    def _natural_params(self):
        return (ops.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return softplus(x)

    def enumerate_support(self, expand=True):
        values = _creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape(2, *((1,) * len(self._batch_shape)))
        return values.expand(2, *self._batch_shape) if expand else values
