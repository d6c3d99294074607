"""RelaxedOneHotCategorical (Concrete / Gumbel-softmax, Maddison et al. 2017, Jang et al. 2017) and its
log-space ExpRelaxedCategorical (torch.distributions.RelaxedOneHotCategorical)."""
import math

from .._ops import ops
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .relaxed_bernoulli import _RelaxedDistribution, _temperature
from .transforms import ExpTransform
from .utils import clamp_probs, rand_like_shape

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """log_softmax((logits + Gumbel noise) / temperature): the log of a RelaxedOneHotCategorical sample."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = _temperature(temperature, self._categorical._param)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = tuple(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand_like_shape(shape, self.logits))
        gumbels = -ops.log(-ops.log(u))
        scores = (self.logits + gumbels) / self.temperature
        return scores - ops.logsumexp(scores, dims=[-1], keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        log_scale = math.lgamma(k) + (k - 1) * ops.log(self.temperature)
        score = self.logits - value * self.temperature
        score = ops.sum(score - ops.logsumexp(score, dims=[-1], keepdim=True), dims=[-1], keepdim=False)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedDistribution):
    """exp of an ExpRelaxedCategorical: points of the simplex that approach one-hot draws as the
    temperature goes to 0; rsample is differentiable in probs/logits."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
