"""RelaxedBernoulli (binary Concrete / Gumbel-sigmoid, Maddison et al. 2017, Jang et al. 2017) and its
logit-space LogitRelaxedBernoulli (torch.distributions.RelaxedBernoulli)."""

from .. import _C
from .._ops import ops
from . import constraints
from ._probs_logits import _BinaryProbsLogits
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import batch_shape_of, clamp_probs, expand_to, rand_like_shape, softplus

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _temperature(temperature, like):
    if isinstance(temperature, _C.Tensor):
        return temperature
    return _C.tensor(float(temperature), like.dtype, like.device)


class _RelaxedDistribution(TransformedDistribution):
    """RelaxedBernoulli and RelaxedOneHotCategorical: a transformed relaxed base whose temperature, logits and
    probs they show."""
    has_rsample = True

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LogitRelaxedBernoulli(_BinaryProbsLogits, Distribution):
    """(logit(U) + logits) / temperature for U uniform: the logit of a RelaxedBernoulli sample."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = False  # as in torch 1.13, though rsample works (RelaxedBernoulli says True)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        given, param, _ = self._set_probs_or_logits(probs, logits)
        self.temperature = _temperature(temperature, param)
        super().__init__(batch_shape_of([given], param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_probs_or_logits(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

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


class RelaxedBernoulli(_RelaxedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach Bernoulli draws as the
    temperature goes to 0; rsample is differentiable in probs/logits."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
