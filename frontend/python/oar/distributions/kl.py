"""kl_divergence(p, q) = E_p[log p(x) - log q(x)] with a registry of closed forms (torch.distributions.kl)."""
import functools

from .._ops import ops
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .distribution import Distribution
from .gamma import Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
from .uniform import Uniform
from .utils import diagonal, full_like, softplus, sum_rightmost

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn(p, q)


def register_kl(type_p, type_q):
    """Decorator registering fn(p, q) as the KL divergence of a type_p from a type_q (subclasses included;
    the most specific registered pair wins)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _dispatch_kl.cache_clear()
        return fn
    return decorator


@functools.lru_cache(maxsize=None)
def _dispatch_kl(type_p, type_q):
    """The registered function for the pair nearest in both MROs (ties broken towards type_p's side)."""
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    matches = [(mro_p.index(p) + mro_q.index(q), mro_p.index(p), fn) for (p, q), fn in _KL_REGISTRY.items()
               if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    return min(matches, key=lambda m: m[:2])[2]


def kl_divergence(p, q):
    """KL(p || q) over the batch shape; NotImplementedError for a pair without a closed form here."""
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fn(p, q)


def _inf_where(mask, t):
    return ops.where(mask, full_like(t, float("inf")), t)


def _zero_where(mask, t):
    return ops.where(mask, full_like(t, 0.0), t)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - ops.log(var_ratio))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where(q.probs == 0, t)
    t = _zero_where(p.probs == 0, t)
    return ops.sum(t, dims=[-1], keepdim=False)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ops.log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    sum_p, sum_q = a1 + b1, a2 + b2
    t1 = ops.lgamma(a2) + ops.lgamma(b2) + ops.lgamma(sum_p)
    t2 = ops.lgamma(a1) + ops.lgamma(b1) + ops.lgamma(sum_q)
    t3 = (a1 - a2) * ops.digamma(a1)
    t4 = (b1 - b2) * ops.digamma(b1)
    t5 = (sum_q - sum_p) * ops.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ops.log(p.rate / q.rate)
    t2 = ops.lgamma(q.concentration) - ops.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         f"computed: {p.event_shape} vs {q.event_shape}")
    n = p.event_shape[0]
    half_term1 = q._half_log_det() - p._half_log_det()
    # tr(Sigma_q^-1 Sigma_p) = ||Lq^-1 Lp||_F^2
    m = _solve_lower(q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril)
    term2 = ops.sum(m * m, dims=[-2, -1], keepdim=False)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different reinterpreted_batch_ndims")
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


