"""Binomial(total_count, probs | logits) (torch.distributions.Binomial)."""
from .. import _C, autograd
from .._ops import ops
from . import constraints
from ._discrete_sampling import binomial
from ._probs_logits import _BinaryProbsLogits
from .distribution import Distribution
from .utils import batch_shape_of, softplus

__all__ = ["Binomial"]


class Binomial(_BinaryProbsLogits, Distribution):
    """The number of successes in total_count independent trials of probability probs (or sigmoid(logits));
    total_count broadcasts with the probabilities."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        given, param, (total,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total.to(param.dtype)
        super().__init__(batch_shape_of([total_count, given], param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_or_logits(Binomial, batch_shape, _instance, ["total_count"])

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

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
