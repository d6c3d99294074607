"""ContinuousBernoulli(probs | logits) on [0, 1] (torch.distributions.ContinuousBernoulli; Loaiza-Ganem &
Cunningham 2019): density C(p) p^x (1 - p)^(1 - x) with C(p) = 2 atanh(1 - 2p) / (1 - 2p). Near p = 1/2
the closed forms lose precision, so inside (lims[0], lims[1]] Taylor expansions around 1/2 are used."""
import math

from .. import autograd
from .._ops import ops
from . import constraints
from ._probs_logits import _BinaryProbsLogits
from .exp_family import ExponentialFamily
from .utils import (batch_shape_of, clamp_probs, full_like, lazy_property, logits_to_probs, rand_like_shape,
                    softplus, zeros_like)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_BinaryProbsLogits, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        given, param, _ = self._set_probs_or_logits(probs, logits)
        self._lims = lims
        super().__init__(batch_shape_of([given], param), validate_args=validate_args)
        if probs is not None:
            self.probs = clamp_probs(self.probs)  # validated as given, then kept off 0 and 1
        self._param = self.probs if probs is not None else self.logits

    def expand(self, batch_shape, _instance=None):
        new = self._expand_probs_or_logits(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):  # kept off 0 and 1 (logits come from the mixin)
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with the values near 1/2 replaced by lims[0] (the Taylor branch is used there)."""
        return ops.where(self._outside_unstable_region(), self.probs, full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        """log C(p)."""
        p = self._cut_probs()
        below = p <= 0.5
        # log |1 - 2p|, from whichever side is accurate
        log_abs_1m2p = ops.where(below, ops.log1p(-2.0 * ops.where(below, p, zeros_like(p))),
                                 ops.log(2.0 * ops.where(below, full_like(p, 1.0), p) - 1.0))
        log_norm = ops.log(ops.abs(ops.log1p(-p) - ops.log(p))) - log_abs_1m2p
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (ops.log1p(-p) - ops.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        var = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (ops.log1p(-p) - ops.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), var, taylor)

    def sample(self, sample_shape=()):
        with autograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand_like_shape(shape, self.probs))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return value * self.logits - softplus(self.logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = ops.where(self._outside_unstable_region(), cdfs, value + 0 * cdfs)
        unbounded = ops.where(value <= 0.0, zeros_like(unbounded), unbounded)
        return ops.where(value >= 1.0, full_like(unbounded, 1.0), unbounded)

    def icdf(self, value):
        p = self._cut_probs()
        inv = (ops.log1p(-p + value * (2.0 * p - 1.0)) - ops.log1p(-p)) / (ops.log(p) - ops.log1p(-p))
        return ops.where(self._outside_unstable_region(), inv, value + 0 * inv)

    def entropy(self):
        log_p0, log_p1 = ops.log1p(-self.probs), ops.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logits), Taylor-expanded near 0."""
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= lo) | (x > hi)
        cut = ops.where(outside, x, full_like(x, lo))
        log_norm = ops.log(ops.abs(ops.expm1(cut))) - ops.log(ops.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ops.where(outside, log_norm, taylor)
