"""The success probability shared by Bernoulli, Binomial, Geometric, NegativeBinomial, ContinuousBernoulli and
LogitRelaxedBernoulli: exactly one of probs / logits is given and kept (also as _param, the parameter whose
shape is param_shape); the other is made from it on first use (a lazy_property, so parameter validation
skips it)."""
from .utils import broadcast_all, expanded_copy, lazy_property, logits_to_probs, probs_to_logits


class _BinaryProbsLogits:
    """Mixin, the first base of those distributions."""

    def _set_probs_or_logits(self, probs, logits, *others):
        """Keeps the given one of probs / logits, broadcast with `others` (total_count); returns
        (given, param, [broadcast others])."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        *others, param = broadcast_all(*others, given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        return given, param, others

    def _expand_probs_or_logits(self, cls, batch_shape, _instance, names=()):
        """expand(): the named tensors (total_count) and the kept probs / logits expanded to batch_shape."""
        new = expanded_copy(self, cls, batch_shape, list(names) + ["probs", "logits"], _instance)
        new._param = new.__dict__["logits"] if "logits" in new.__dict__ else new.__dict__["probs"]
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)
