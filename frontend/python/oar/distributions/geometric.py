"""Geometric(probs | logits): failures before the first success (torch.distributions.Geometric)."""
from .. import autograd
from .._ops import ops
from . import constraints
from ._probs_logits import _BinaryProbsLogits
from .distribution import Distribution
from .utils import all_true, batch_shape_of, finfo, rand_like_shape, softplus, zeros_like

__all__ = ["Geometric"]


class Geometric(_BinaryProbsLogits, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, ...; probs in (0, 1]."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        given, param, _ = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape_of([given], param), validate_args=validate_args)
        if self._validate_args and probs is not None and not all_true(self.probs > 0):
            value = self.probs
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to satisfy the constraint {constraints.positive!r}, but found "
                             f"invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_probs_or_logits(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            probs = self.probs.detach()
            u = rand_like_shape(shape, probs, low=float(finfo(probs.dtype).tiny))
            return ops.floor(ops.log(u) / ops.log1p(-probs))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self.probs
        term = value * ops.log1p(-p)
        term = ops.where((p == 1) & (value == 0), zeros_like(term), term)  # 0 * log(0) is 0 here
        return term + ops.log(p)

    def entropy(self):
        # binary cross-entropy of p with itself (in logits form), per success probability
        return (softplus(self.logits) - self.probs * self.logits) / self.probs
