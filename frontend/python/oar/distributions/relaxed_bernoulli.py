"""RelaxedBernoulli (binary Concrete / Gumbel-sigmoid, Maddison et al. 2017, Jang et al. 2017) and its
logit-space LogitRelaxedBernoulli (torch.distributions.RelaxedBernoulli)."""

from .. import _C
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (batch_shape_of, broadcast_all, clamp_probs, expand_to, lazy_property, logits_to_probs,
                    probs_to_logits, rand_like_shape, softplus)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _temperature(temperature, like):
    if isinstance(temperature, _C.Tensor):
        return temperature
    return _C.tensor(float(temperature), like.dtype, like.device)


class LogitRelaxedBernoulli(Distribution):
    """(logit(U) + logits) / temperature for U uniform: the logit of a RelaxedBernoulli sample."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = False  # as in torch 1.13, though rsample works (RelaxedBernoulli says True)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        self.temperature = _temperature(temperature, param)
        super().__init__(batch_shape_of([given], param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = tuple(batch_shape)
        new.temperature = self.temperature
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, expand_to(self.__dict__[name], batch_shape))
                new._param = getattr(new, name)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(expand_to(self.probs, shape))
        u = clamp_probs(rand_like_shape(shape, probs))
        return (ops.log(u) - ops.log1p(-u) + ops.log(probs) - ops.log1p(-probs)) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = self.logits - value * self.temperature
        return ops.log(self.temperature) + diff - 2 * softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach Bernoulli draws as the
    temperature goes to 0; rsample is differentiable in probs/logits."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
