"""kl_divergence(p, q) = E_p[log p(x) - log q(x)] with a registry of closed forms (torch.distributions.kl)."""
import functools
import math

from .. import autograd

from .._ops import ops
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .wishart import Wishart, _mvdigamma
from .utils import EULER_GAMMA, all_true, full_like, softplus, sum_rightmost

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


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    """The closed form of the Bregman divergence that torch 1.13 reaches through ExponentialFamily (which
    sums the df term over the batch there, so torch's value is right for one distribution, not a batch):
    n_q/2 log(det S_q / det S_p) + n_p/2 (tr(S_q^-1 S_p) - d) + log G_d(n_q/2) - log G_d(n_p/2)
    + (n_p - n_q)/2 psi_d(n_p/2)."""
    from ..special import multigammaln
    d = p.event_shape[-1]
    if q.event_shape[-1] != d:
        raise ValueError("KL-divergence between two Wisharts with different event shapes cannot be computed")
    n_p, n_q = p.df, q.df
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    M = _solve_lower(Lq, Lp)  # tr(S_q^-1 S_p) = ||Lq^-1 Lp||_F^2
    trace = ops.sum(M * M, dims=[-2, -1], keepdim=False)
    return (n_q * (q._half_log_det() - p._half_log_det()) + n_p / 2 * (trace - d)
            + multigammaln(n_q / 2, d) - multigammaln(n_p / 2, d) + (n_p - n_q) / 2 * _mvdigamma(n_p / 2, d))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """Within one exponential family, KL is the Bregman divergence of the log normalizer F:
    F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError(f"The cross KL-divergence between different exponential families "
                                  f"({type(p).__name__} and {type(q).__name__}) cannot be computed using Bregman "
                                  "divergences")
    p_nparams = [t.detach().requires_grad_(True) for t in p._natural_params]
    q_nparams = q._natural_params
    with autograd.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


def _as_mvn(p):
    """A LowRankMultivariateNormal as the MultivariateNormal of the same covariance (for the KL forms)."""
    if isinstance(p, LowRankMultivariateNormal):
        return MultivariateNormal(p.loc, scale_tril=p.scale_tril, validate_args=False)
    return p


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         f"cannot be computed: {p.event_shape} vs {q.event_shape}")
    return _kl_mvn_mvn(_as_mvn(p), _as_mvn(q))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if not all_true(p.total_count >= q.total_count):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + ops.log1p(-p.probs) - ops.log1p(-q.probs))
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ops.log((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2))
    return t1 - ops.log(4 * p.scale * q.scale)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ops.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ops.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = ops.sum(a, dims=[-1], keepdim=False), ops.sum(b, dims=[-1], keepdim=False)
    t1 = ops.lgamma(a0) - ops.lgamma(b0)
    t2 = ops.sum(ops.lgamma(a) - ops.lgamma(b), dims=[-1], keepdim=False)
    t4 = ops.digamma(a) - ops.digamma(a0).unsqueeze(-1)
    return t1 - t2 + ops.sum((a - b) * t4, dims=[-1], keepdim=False)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - ops.log(ratio) - 1


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ops.log(ct1) - ct2 + ct3
    t2 = ct1 * EULER_GAMMA
    t3 = ops.exp(ct2 + ops.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + EULER_GAMMA)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ops.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = ops.abs(p.loc - q.loc)
    return -ops.log(scale_ratio) + loc_abs_diff / q.scale + scale_ratio * ops.exp(-loc_abs_diff / p.scale) - 1


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * ops.log(scale_ratio) - ops.log(alpha_ratio) + alpha_ratio - 1
    return _inf_where(p.scale < q.scale, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (ops.log(p.rate) - ops.log(q.rate)) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


# ---- different families ----
# (torch also registers pairs whose KL is infinite because q's support is bounded where p's is not, e.g.
# Normal || Gamma; they are left out here, so those raise NotImplementedError.)
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * ops.log(q.rate) - q.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ops.log(ratio)
    return t1 + ratio + ops.lgamma(q.concentration) + q.concentration * EULER_GAMMA - (1 + EULER_GAMMA)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - ops.log(q.rate) + q.rate * (p.concentration / p.rate)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * ops.log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    return (-ops.log(2 * p.scale) - 1 + 0.5 * ops.log(2 * math.pi * var_normal)
            + (2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)) / (2 * var_normal))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    z = loc_diff / p.scale
    mean_abs = math.sqrt(2 / math.pi) * p.scale * ops.exp(-0.5 * z.pow(2)) + loc_diff * ops.erf(math.sqrt(0.5) * z)
    return -ops.log(p.scale / q.scale) + mean_abs / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = ops.log(math.sqrt(math.pi * 2) * q.scale / width)
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
