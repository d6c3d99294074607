"""Bernoulli(probs | logits) (torch.distributions.Bernoulli)."""
import numbers

from .. import _creation
from .._ops import ops
from . import constraints
from ._probs_logits import _BinaryProbsLogits
from .exp_family import ExponentialFamily
from .utils import expand_to, softplus

__all__ = ["Bernoulli"]


class Bernoulli(_BinaryProbsLogits, ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0; give exactly one of the two."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        given, param, _ = self._set_probs_or_logits(probs, logits)
        super().__init__(() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_or_logits(Bernoulli, batch_shape, _instance)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

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
