"""OneHotCategorical(probs | logits): Categorical with one-hot vectors as values
(torch.distributions.OneHotCategorical, OneHotCategoricalStraightThrough)."""
from .. import _C, autograd
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import eye_like

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(index, k, like):
    classes = _C.call("arange", [], {"start": 0.0, "end": float(k), "step": 1.0, "dtype": like.dtype}, like.device)
    return (index.to(like.dtype).unsqueeze(-1) == classes).to(like.dtype)


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = tuple(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(-1), probs.shape[-1], probs)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        with autograd.no_grad():
            probs = self._categorical.probs
            index = self._categorical.sample(sample_shape)
            return _one_hot(index, self._categorical._num_events, probs.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        index = value.argmax(-1)
        return self._categorical.log_prob(index)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = eye_like(self._param, n)
        values = values.reshape(n, *((1,) * len(self.batch_shape)), n)
        return values.expand(n, *self.batch_shape, n) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """rsample gives the one-hot sample with the straight-through gradient of the probabilities
    (Bengio et al. 2013)."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
