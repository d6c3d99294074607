"""kl_divergence(p, q) = E_p[log p(x) - log q(x)] with a registry of closed forms (torch.distributions.kl)."""
import functools
import math
import warnings

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


class _Match:
    """A registered (type_p, type_q) ordered as torch orders them: lexicographically by subclassing,
    p's type first (a partial order, so min() over the matches follows the registry's order on ties)."""
    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True

    def __lt__(self, other):
        return self <= other and self != other


@functools.lru_cache(maxsize=None)
def _dispatch_kl(type_p, type_q):
    """The most specific registered pair, searched p-first; when the q-first search picks another
    function the pair is ambiguous: warn (as torch does) and keep the p-first one."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fn, right_fn = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fn is not right_fn:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning)
    return left_fn


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
# Most are -H(p) - E_p[log q(x)] with p's moments; where p puts mass outside q's support the KL is
# infinite (for pairs where that holds for every parameter value, an inf of p's parameter's shape, as
# torch returns).
def _infinite_like(t):
    return full_like(t, float("inf"))


def _x_log_x(t):
    # the x log x of the integral of log x, taking its limit 0 at x = 0 (torch gives nan there)
    return ops.where(t == 0, full_like(t, 0.0), t * ops.log(t))


def _mean_log_uniform(p):
    # E[log x] for x ~ Uniform(low, high): (h log h - l log l) / (h - l) - 1
    width = p.high - p.low
    return (_x_log_x(p.high) - _x_log_x(p.low) - width) / width


def _pareto_neg_entropy(p):
    return ops.log(p.alpha / p.scale) - p.alpha.reciprocal() - 1


def _gamma_neg_entropy(p):
    a = p.concentration
    return (a - 1) * ops.digamma(a) - ops.lgamma(a) - a + ops.log(p.rate)


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


@register_kl(Beta, Pareto)
@register_kl(ContinuousBernoulli, Pareto)
def _kl_unit_interval_pareto(p, q):
    # Pareto's support starts at scale > 0, so [0, scale) has p-mass and no q-mass
    return _infinite_like(p.mean)


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_real_line_infinity(p, q):
    # p has mass on the whole line, q only on a half-line or an interval
    return _infinite_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    # Poisson's counts are unbounded, Bernoulli's / Binomial's are not
    return _infinite_like(p.rate)


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _kl_unit_interval_continuous_bernoulli(p, q):
    # log q(x) = x logit + log(1 - probs) + log C: linear in x, so only E_p[x] is needed
    result = -p.entropy() - p.mean * q.logits - ops.log1p(-q.probs) - q._cont_bern_log_norm()
    if isinstance(p, Uniform):  # torch 1.13 also says inf when an end of p touches 0 or 1
        result = _inf_where((p.high > 1) | (p.low < 0), result)
    return result


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
def _kl_unit_interval_exponential(p, q):
    return -p.entropy() - ops.log(q.rate) + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    # E[log x] = psi(a) - psi(a + b) under Beta(a, b)
    a, b, k = p.concentration1, p.concentration0, q.concentration
    mean_log = ops.digamma(a) - ops.digamma(a + b)
    return (-p.entropy() + ops.lgamma(k) - k * ops.log(q.rate) - (k - 1) * mean_log
            + q.rate * a / (a + b))


def _neg_entropy_normal_cross(p_neg_entropy, p_mean, p_second_moment, q):
    # -H(p) + 1/2 log(2 pi s^2) + E_p[(x - m)^2] / (2 s^2), with E_p[(x - m)^2] = E x^2 - 2 m E x + m^2
    var_q = q.scale.pow(2)
    t = 0.5 * ops.log(2 * math.pi * var_q)
    return p_neg_entropy + t + (0.5 * p_second_moment - q.loc * p_mean + 0.5 * q.loc.pow(2)) / var_q


@register_kl(Beta, Normal)
@register_kl(ContinuousBernoulli, Normal)
def _kl_unit_interval_normal(p, q):
    mean = p.mean
    return _neg_entropy_normal_cross(-p.entropy(), mean, p.variance + mean.pow(2), q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a, r = p.concentration, p.rate
    return _neg_entropy_normal_cross(_gamma_neg_entropy(p), a / r, (a.pow(2) + a) / r.pow(2), q)


@register_kl(Beta, Uniform)
@register_kl(ContinuousBernoulli, Uniform)
def _kl_unit_interval_uniform(p, q):
    # q's density is 1/(high - low) on [low, high], which must hold all of [0, 1]
    result = -p.entropy() + ops.log(q.high - q.low)
    return _inf_where((q.low > 0) | (q.high < 1), result)


def _gumbel_cross(p_neg_entropy, p_mean, p_laplace, q):
    """-H(p) - E_p[log q] for q = Gumbel(m, s): -log q(x) = log s + z + e^-z with z = (x - m)/s, so the KL
    needs E_p[x] and p's Laplace transform at 1/s (p_laplace = E_p[e^(-x/s)])."""
    return p_neg_entropy + ops.log(q.scale) + (p_mean - q.loc) / q.scale + ops.exp(q.loc / q.scale) * p_laplace


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rs = p.rate * q.scale
    return _gumbel_cross(ops.log(p.rate) - 1, p.rate.reciprocal(), rs / (rs + 1), q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a, r = p.concentration, p.rate
    return _gumbel_cross(_gamma_neg_entropy(p), a / r, (1 + (r * q.scale).reciprocal()).pow(-a), q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # E[e^(-x/s)] = exp(-mu/s + sigma^2 / (2 s^2)) under Normal(mu, sigma)
    laplace = ops.exp(-p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2))
    neg_entropy = -0.5 * (1 + math.log(2 * math.pi)) - ops.log(p.scale)
    return _gumbel_cross(neg_entropy, p.loc, laplace, q)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    # E[e^(-x/s)] = s (e^(-low/s) - e^(-high/s)) / (high - low)
    width = p.high - p.low
    laplace = q.scale * (ops.exp(-p.low / q.scale) - ops.exp(-p.high / q.scale)) / width
    return _gumbel_cross(-ops.log(width), (p.high + p.low) / 2, laplace, q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    # Gumbel(m, s): mean m + s gamma, variance (pi s)^2 / 6, entropy log s + gamma + 1
    mean = p.loc + p.scale * EULER_GAMMA
    neg_entropy = -ops.log(p.scale) - (EULER_GAMMA + 1)
    return _neg_entropy_normal_cross(neg_entropy, mean, (math.pi * p.scale).pow(2) / 6 + mean.pow(2), q)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    # E[x] = alpha scale / (alpha - 1) is infinite for alpha <= 1
    result = _pareto_neg_entropy(p) - ops.log(q.rate) + q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    # E[log x] = log scale + 1/alpha under Pareto(scale, alpha)
    k = q.concentration
    mean_log = ops.log(p.scale) + p.alpha.reciprocal()
    result = (_pareto_neg_entropy(p) + ops.lgamma(k) - k * ops.log(q.rate) - (k - 1) * mean_log
              + q.rate * p.alpha * p.scale / (p.alpha - 1))
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    # E[x^2] = alpha scale^2 / (alpha - 2) is infinite for alpha <= 2
    a, xm = p.alpha, p.scale
    result = _neg_entropy_normal_cross(_pareto_neg_entropy(p), a * xm / (a - 1), a * xm.pow(2) / (a - 2), q)
    return _inf_where(a <= 2, result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    # E[log(1 - x)] under Uniform(low, high) is E[log y] under Uniform(1 - high, 1 - low)
    a, b = q.concentration1, q.concentration0
    width = p.high - p.low
    mean_log1m = (_x_log_x(1 - p.low) - _x_log_x(1 - p.high) - width) / width
    log_beta_fn = ops.lgamma(a) + ops.lgamma(b) - ops.lgamma(a + b)
    result = -ops.log(width) - (a - 1) * _mean_log_uniform(p) - (b - 1) * mean_log1m + log_beta_fn
    return _inf_where((p.high > 1) | (p.low < 0), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ops.log((p.high - p.low) * q.rate)
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    k = q.concentration
    result = (-ops.log(p.high - p.low) + ops.lgamma(k) - k * ops.log(q.rate) - (k - 1) * _mean_log_uniform(p)
              + q.rate * (p.high + p.low) / 2)
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # -log q(x) = -log alpha - alpha log scale + (alpha + 1) log x on x >= scale
    result = ((q.alpha + 1) * _mean_log_uniform(p) - ops.log(q.alpha) - q.alpha * ops.log(q.scale)
              - ops.log(p.high - p.low))
    return _inf_where(p.low < q.scale, result)
