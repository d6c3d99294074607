"""Categorical(probs | logits) over {0, ..., K-1} (torch.distributions.Categorical)."""
from .. import _C, _creation
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, expand_to, finfo, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Class k with probability probs[..., k] (normalized along the last dim), or softmax(logits)[..., k]."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        if not isinstance(given, _C.Tensor):
            raise TypeError(f"Categorical expects a Tensor of {'probs' if probs is not None else 'logits'}, "
                            f"got {type(given).__name__}")
        if given.dim() < 1:
            raise ValueError(f"`{'probs' if probs is not None else 'logits'}` parameter must be at least "
                             "one-dimensional.")
        if probs is not None:
            self.probs = probs / ops.sum(probs, dims=[-1], keepdim=True)
        else:
            self.logits = ops.log_softmax(logits, dim=-1)  # logits - logsumexp(logits)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = expand_to(self.probs, param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = expand_to(self.logits, param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return _nan_full(self.probs, self._batch_shape)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return _nan_full(self.probs, self._batch_shape)

    def sample(self, sample_shape=()):
        """Inverse-CDF sampling on the parameters' device: the class is the number of cumulative
        probabilities below a uniform draw."""
        sample_shape = tuple(sample_shape)
        probs = self.probs.detach()
        cdf = ops.cumsum(probs, dim=-1)
        shape = sample_shape + self._batch_shape
        u = _creation.rand(*shape, 1, dtype=probs.dtype, device=probs.device) * cdf.select(-1, self._num_events - 1).unsqueeze(-1)
        below = (cdf < u).to(_C.dtype.float32)
        k = ops.sum(below, dims=[-1], keepdim=False)
        return ops.clamp(k, max=float(self._num_events - 1)).to(_C.dtype.int64)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(_C.dtype.int64).unsqueeze(-1)
        shape = broadcast_shape(value.shape, self.logits.shape)
        log_pmf = expand_to(self.logits, shape)
        index = expand_to(value, shape[:-1] + (1,))
        return ops.gather(log_pmf, index, dim=-1).squeeze(-1)

    def entropy(self):
        # -inf logits (zero probabilities) would give 0 * -inf; the dtype's most negative finite number does not.
        logits = ops.clamp(self.logits, min=float(finfo(self.logits.dtype).min))
        return -ops.sum(logits * self.probs, dims=[-1], keepdim=False)

    def enumerate_support(self, expand=True):
        n = self._num_events
        values = _creation.arange(n, dtype=_C.dtype.int64, device=self._param.device)
        values = values.reshape(n, *((1,) * len(self._batch_shape)))
        return values.expand(n, *self._batch_shape) if expand else values


def _nan_full(like, shape):
    return _C.call("fill", [], {"shape": list(shape), "value": float("nan"), "dtype": like.dtype}, like.device)
