"""kl_divergence for every pair torch 1.13 registers: float64 batches (one side's parameters broadcast
against the other's) compared with torch at 1e-10 relative, inf / nan in the same places; a Monte-Carlo check
of some cross-family closed forms against the sample mean of log p - log q; torch's dispatch (most specific
pair, the ambiguity warning); and the boundary cases where oar deliberately gives the finite limit."""
import warnings

import numpy as np
import pytest

import oar
import oar.distributions as D
from oar.distributions import kl as oar_kl
from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]
RTOL, ATOL = 1e-10, 1e-12


def N(t):
    return t.detach().cpu().numpy()


@pytest.fixture(scope="module")
def torch():
    return import_torch()


# ---- parameter batches: family name -> fn(rng, shape) -> fn(M, t) building the distribution in module M ----
def _u(rng, lo, hi, shape):
    return rng.uniform(lo, hi, size=shape)


def _spd_tril(rng, shape, n=3):
    L = np.tril(rng.uniform(-0.5, 0.5, size=shape + (n, n)))
    idx = np.arange(n)
    L[..., idx, idx] = rng.uniform(0.5, 1.5, size=shape + (n,))
    return L


def _family(name, rng, shape, side="p"):
    u = lambda lo, hi: _u(rng, lo, hi, shape)  # noqa: E731
    if name == "Bernoulli":
        a = u(0.05, 0.95)
        return lambda M, t: M.Bernoulli(probs=t(a))
    if name == "Poisson":
        a = u(0.5, 5.0)
        return lambda M, t: M.Poisson(t(a))
    if name == "Binomial":
        # p's total_count >= q's (torch raises otherwise); p sometimes larger, where the KL is inf
        n, a = np.where(u(0, 1) < 0.5, 10.0, 12.0 if side == "p" else 10.0), u(0.05, 0.95)
        return lambda M, t: M.Binomial(t(n), probs=t(a))
    if name == "Beta":
        a, b = u(0.5, 4.0), u(0.5, 4.0)
        return lambda M, t: M.Beta(t(a), t(b))
    if name == "ContinuousBernoulli":
        a = u(0.05, 0.95)
        return lambda M, t: M.ContinuousBernoulli(probs=t(a))
    if name == "Exponential":
        a = u(0.3, 3.0)
        return lambda M, t: M.Exponential(t(a))
    if name == "Gamma":
        a, b = u(0.5, 4.0), u(0.3, 3.0)
        return lambda M, t: M.Gamma(t(a), t(b))
    if name in ("Normal", "Laplace", "Gumbel", "Cauchy"):
        a, b = u(-2.0, 2.0), u(0.4, 2.0)
        return lambda M, t: getattr(M, name)(t(a), t(b))
    if name == "HalfNormal":
        a = u(0.4, 2.0)
        return lambda M, t: M.HalfNormal(t(a))
    if name == "Pareto":
        # alpha on both sides of 1 and 2, where the moments (and so the KL to Exponential/Gamma/Normal) are inf
        a, b = u(0.05, 0.8), u(0.5, 4.0)
        return lambda M, t: M.Pareto(t(a), t(b))
    if name == "Uniform":
        # low on both sides of 0 and high on both sides of 1: inside and outside the other's support
        low = np.where(u(0, 1) < 0.5, u(-0.5, 0.0), u(0.0, 1.0))
        high = low + u(0.2, 1.6 if side == "p" else 2.5)
        return lambda M, t: M.Uniform(t(low), t(high))
    if name == "Geometric":
        a = u(0.1, 0.9)
        return lambda M, t: M.Geometric(probs=t(a))
    if name in ("Categorical", "OneHotCategorical"):
        w = _u(rng, 0.1, 1.0, shape + (4,))
        w /= w.sum(-1, keepdims=True)
        return lambda M, t: getattr(M, name)(probs=t(w))
    if name == "Dirichlet":
        a = _u(rng, 0.5, 3.0, shape + (3,))
        return lambda M, t: M.Dirichlet(t(a))
    if name == "MultivariateNormal":
        loc, L = _u(rng, -1.0, 1.0, shape + (3,)), _spd_tril(rng, shape)
        return lambda M, t: M.MultivariateNormal(t(loc), scale_tril=t(L))
    if name == "LowRankMultivariateNormal":
        loc, W, d = _u(rng, -1.0, 1.0, shape + (3,)), _u(rng, -1.0, 1.0, shape + (3, 2)), _u(rng, 0.3, 1.5, shape + (3,))
        return lambda M, t: M.LowRankMultivariateNormal(t(loc), t(W), t(d))
    if name == "Independent":
        a, b = _u(rng, -2.0, 2.0, shape + (3,)), _u(rng, 0.4, 2.0, shape + (3,))
        return lambda M, t: M.Independent(M.Normal(t(a), t(b)), 1)
    if name == "TransformedDistribution":  # a LogNormal written out
        a, b = u(-1.0, 1.0), u(0.4, 2.0)
        return lambda M, t: M.TransformedDistribution(M.Normal(t(a), t(b)), [M.transforms.ExpTransform()])
    raise KeyError(name)


def _torch_pairs():
    torch = import_torch()
    import torch.distributions.kl as tkl
    return sorted((p.__name__, q.__name__) for p, q in tkl._KL_REGISTRY)


def _pair_ids():
    # the registry as torch 1.13 has it (listed here so that the parametrisation doesn't need torch)
    return [
        ("Bernoulli", "Bernoulli"), ("Bernoulli", "Poisson"), ("Beta", "Beta"), ("Beta", "ContinuousBernoulli"),
        ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Pareto"), ("Beta", "Uniform"),
        ("Binomial", "Binomial"), ("Categorical", "Categorical"), ("Cauchy", "Cauchy"),
        ("ContinuousBernoulli", "ContinuousBernoulli"), ("ContinuousBernoulli", "Exponential"),
        ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Pareto"), ("ContinuousBernoulli", "Uniform"),
        ("Dirichlet", "Dirichlet"), ("Exponential", "Beta"), ("Exponential", "ContinuousBernoulli"),
        ("Exponential", "Exponential"), ("Exponential", "Gamma"), ("Exponential", "Gumbel"),
        ("Exponential", "Normal"), ("Exponential", "Pareto"), ("Exponential", "Uniform"),
        ("ExponentialFamily", "ExponentialFamily"), ("Gamma", "Beta"), ("Gamma", "ContinuousBernoulli"),
        ("Gamma", "Exponential"), ("Gamma", "Gamma"), ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Pareto"),
        ("Gamma", "Uniform"), ("Geometric", "Geometric"), ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"),
        ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Gumbel"), ("Gumbel", "Normal"),
        ("Gumbel", "Pareto"), ("Gumbel", "Uniform"), ("HalfNormal", "HalfNormal"), ("Independent", "Independent"),
        ("Laplace", "Beta"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Exponential"), ("Laplace", "Gamma"),
        ("Laplace", "Laplace"), ("Laplace", "Normal"), ("Laplace", "Pareto"), ("Laplace", "Uniform"),
        ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
        ("LowRankMultivariateNormal", "MultivariateNormal"), ("MultivariateNormal", "LowRankMultivariateNormal"),
        ("MultivariateNormal", "MultivariateNormal"), ("Normal", "Beta"), ("Normal", "ContinuousBernoulli"),
        ("Normal", "Exponential"), ("Normal", "Gamma"), ("Normal", "Gumbel"), ("Normal", "Laplace"),
        ("Normal", "Normal"), ("Normal", "Pareto"), ("Normal", "Uniform"), ("OneHotCategorical", "OneHotCategorical"),
        ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Exponential"), ("Pareto", "Gamma"),
        ("Pareto", "Normal"), ("Pareto", "Pareto"), ("Pareto", "Uniform"), ("Poisson", "Bernoulli"),
        ("Poisson", "Binomial"), ("Poisson", "Poisson"), ("TransformedDistribution", "TransformedDistribution"),
        ("Uniform", "Beta"), ("Uniform", "ContinuousBernoulli"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
        ("Uniform", "Gumbel"), ("Uniform", "Normal"), ("Uniform", "Pareto"), ("Uniform", "Uniform"),
    ]


PAIRS = _pair_ids()


def test_registry_covers_torch(torch):
    assert _torch_pairs() == PAIRS
    ours = {(p.__name__, q.__name__) for p, q in oar_kl._KL_REGISTRY}
    assert not set(PAIRS) - ours


def _compare(ours, ref, name):
    assert ours.shape == ref.shape, (name, ours.shape, ref.shape)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref), err_msg=name)
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(ref), err_msg=name)
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(ref), err_msg=name)
    finite = np.isfinite(ref)
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("pair", PAIRS, ids=["||".join(p) for p in PAIRS])
@pytest.mark.parametrize("device", DEVICES)
def test_kl_matches_torch(device, pair, torch):
    """Both broadcasts: p's batch (2, 6) against q's (6,), and p's (6,) against q's (2, 6), then equal
    shapes. torch's in-place inf masks (result[mask] = inf) can't take a mask of fewer dims than the result,
    so a broadcast torch raises for is skipped (oar's masks broadcast)."""
    p_name, q_name = pair
    tt = lambda a: to_torch(np.asarray(a, np.float64))  # noqa: E731
    to = lambda a: oar.tensor(np.asarray(a, np.float64), device=device)  # noqa: E731
    ran = 0
    for seed, (p_shape, q_shape) in enumerate([((2, 6), (6,)), ((6,), (2, 6)), ((2, 6), (2, 6))]):
        rng = np.random.default_rng(1000 * PAIRS.index(pair) + seed)
        if pair == ("ExponentialFamily", "ExponentialFamily"):
            # reached by families without a pair of their own; called directly, on Gamma and Normal batches
            for fam in ("Gamma", "Normal"):
                mp, mq = _family(fam, rng, p_shape), _family(fam, rng, q_shape)
                fn_t = torch.distributions.kl._KL_REGISTRY[torch.distributions.ExponentialFamily,
                                                            torch.distributions.ExponentialFamily]
                fn_o = oar_kl._KL_REGISTRY[D.ExponentialFamily, D.ExponentialFamily]
                ref = from_torch(fn_t(mp(torch.distributions, tt), mq(torch.distributions, tt)))
                _compare(N(fn_o(mp(D, to), mq(D, to))), ref, f"{fam} via ExponentialFamily")
            ran += 1
            continue
        mp, mq = _family(p_name, rng, p_shape), _family(q_name, rng, q_shape, "q")
        try:
            ref = from_torch(torch.distributions.kl_divergence(mp(torch.distributions, tt), mq(torch.distributions, tt)))
        except (IndexError, RuntimeError):
            assert p_shape != q_shape, pair
            continue
        _compare(N(D.kl_divergence(mp(D, to), mq(D, to))), ref, "||".join(pair) + f" {p_shape} {q_shape}")
        ran += 1
    assert ran, pair


def test_torch_raises_where_oar_does(torch):
    """Cross-family pairs torch has no form for still raise, through ExponentialFamily's type check too."""
    for p, q in [(D.Bernoulli(oar.tensor([0.3])), D.Beta(oar.tensor([1.0]), oar.tensor([2.0]))),
                 (D.Cauchy(oar.tensor([0.0]), oar.tensor([1.0])), D.Normal(oar.tensor([0.0]), oar.tensor([1.0]))),
                 (D.HalfNormal(oar.tensor([1.0])), D.Normal(oar.tensor([0.0]), oar.tensor([1.0])))]:
        with pytest.raises(NotImplementedError):
            D.kl_divergence(p, q)


# ---- Monte Carlo: KL(p || q) = E_p[log p(x) - log q(x)] ----
def _t(a):
    return oar.tensor(np.asarray(a, np.float64))


MC_PAIRS = [
    ("Normal||Gumbel", lambda: (D.Normal(_t([0.5, -1.0]), _t([1.0, 0.5])), D.Gumbel(_t([0.0, 0.3]), _t([2.0, 1.0])))),
    ("Gumbel||Normal", lambda: (D.Gumbel(_t([0.5, -1.0]), _t([1.0, 0.5])), D.Normal(_t([0.0, 0.3]), _t([2.0, 1.0])))),
    ("Gamma||Gumbel", lambda: (D.Gamma(_t([2.0, 0.7]), _t([1.5, 1.0])), D.Gumbel(_t([0.5, 1.0]), _t([1.0, 2.0])))),
    ("Gamma||Normal", lambda: (D.Gamma(_t([2.0, 0.7]), _t([1.5, 1.0])), D.Normal(_t([0.5, 1.0]), _t([1.0, 2.0])))),
    ("Beta||Gamma", lambda: (D.Beta(_t([2.0, 0.7]), _t([1.5, 3.0])), D.Gamma(_t([1.5, 2.0]), _t([1.0, 2.0])))),
    ("Beta||ContinuousBernoulli", lambda: (D.Beta(_t([2.0, 0.7]), _t([1.5, 3.0])),
                                           D.ContinuousBernoulli(_t([0.3, 0.8])))),
    ("Pareto||Normal", lambda: (D.Pareto(_t([0.5, 1.0]), _t([6.0, 8.0])), D.Normal(_t([0.5, 1.0]), _t([1.0, 2.0])))),
    ("Pareto||Gamma", lambda: (D.Pareto(_t([0.5, 1.0]), _t([6.0, 8.0])), D.Gamma(_t([1.5, 2.0]), _t([1.0, 2.0])))),
    ("Uniform||Pareto", lambda: (D.Uniform(_t([1.0, 2.0]), _t([3.0, 2.5])), D.Pareto(_t([0.5, 2.0]), _t([2.0, 3.0])))),
    ("Uniform||Gumbel", lambda: (D.Uniform(_t([-1.0, 2.0]), _t([3.0, 2.5])), D.Gumbel(_t([0.5, 2.0]), _t([2.0, 3.0])))),
    # p's support touching q's bounds: finite, though torch 1.13 gives nan (0 log 0) or inf (>= for >) there
    ("Uniform(0,.)||Beta", lambda: (D.Uniform(_t([0.0, 0.2]), _t([0.6, 1.0])), D.Beta(_t([2.0, 0.7]), _t([1.5, 3.0])))),
    ("Uniform(0,.)||Gamma", lambda: (D.Uniform(_t([0.0, 0.0]), _t([0.6, 2.0])), D.Gamma(_t([2.0, 0.7]), _t([1.5, 3.0])))),
    ("Uniform(0,1)||ContinuousBernoulli", lambda: (D.Uniform(_t([0.0, 0.0]), _t([1.0, 0.5])),
                                                   D.ContinuousBernoulli(_t([0.3, 0.8])))),
]


@pytest.mark.parametrize("name,make", MC_PAIRS, ids=[m[0] for m in MC_PAIRS])
def test_kl_is_mean_log_ratio(name, make):
    p, q = make()
    n = 40000
    oar.manual_seed(11)
    x = p.sample((n,))
    ratio = N(p.log_prob(x) - q.log_prob(x))
    kl = N(D.kl_divergence(p, q))
    assert np.isfinite(kl).all(), name
    se = ratio.std(0) / np.sqrt(n)
    assert (np.abs(kl - ratio.mean(0)) <= 5 * se + 1e-12).all(), (name, kl, ratio.mean(0), se)


def test_boundary_cases_are_finite_limits():
    """Where torch 1.13 gives nan (x log x at 0) or inf (a support bound compared with >= instead of >):
    the closed forms at the limit. Uniform(0, 1) || Beta(a, b): E[log x] = E[log(1-x)] = -1, so the KL is
    log B(a, b) + (a - 1) + (b - 1); CB(lambda) || Uniform(0, 1) is -H(CB)."""
    import math
    a, b = 2.5, 0.7
    kl = N(D.kl_divergence(D.Uniform(_t([0.0]), _t([1.0])), D.Beta(_t([a]), _t([b]))))
    expected = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b) + (a - 1) + (b - 1)
    np.testing.assert_allclose(kl, [expected], rtol=1e-12)
    cb = D.ContinuousBernoulli(_t([0.3]))
    np.testing.assert_allclose(N(D.kl_divergence(cb, D.Uniform(_t([0.0]), _t([1.0])))), -N(cb.entropy()),
                               rtol=1e-12)


# ---- dispatch ----
def test_dispatch_follows_torch(torch):
    """Subclasses reach their bases' pairs (Chi2 is a Gamma); an ambiguous pair warns and takes the p-first
    match, as torch does."""
    tt = lambda a: to_torch(np.asarray(a, np.float64))  # noqa: E731
    ours = D.kl_divergence(D.Chi2(_t([3.0, 5.0])), D.Normal(_t([1.0, 2.0]), _t([2.0, 3.0])))
    ref = torch.distributions.kl_divergence(torch.distributions.Chi2(tt([3.0, 5.0])),
                                            torch.distributions.Normal(tt([1.0, 2.0]), tt([2.0, 3.0])))
    np.testing.assert_allclose(N(ours), from_torch(ref), rtol=RTOL)

    class P(D.Normal):
        pass

    class Q(D.Normal):
        pass

    left = D.register_kl(P, D.Normal)(lambda p, q: "left")
    right = D.register_kl(D.Normal, Q)(lambda p, q: "right")
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert D.kl_divergence(P(0.0, 1.0), Q(0.0, 1.0)) == "left"
        assert any("Ambiguous kl_divergence(P, Q)" in str(x.message) for x in w)
    finally:
        for key in [(P, D.Normal), (D.Normal, Q)]:
            oar_kl._KL_REGISTRY.pop(key)
        oar_kl._dispatch_kl.cache_clear()
    assert left is not right
