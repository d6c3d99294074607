"""oar.distributions against closed forms in NumPy, PyTorch 1.13, sample moments and finite differences."""
import math

import numpy as np
import pytest

import oar
import oar.distributions as D
from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]


def T(x, device, dtype=np.float32):
    return oar.tensor(np.asarray(x, dtype=dtype), device=device)


def N(t):
    return t.detach().cpu().numpy()


def _has_linalg():
    try:
        from oar import linalg
        return hasattr(linalg, "cholesky") and hasattr(linalg, "solve_triangular")
    except ImportError:
        return False


needs_linalg = pytest.mark.skipif(not _has_linalg(), reason="oar.linalg not built yet")

LOC, SCALE = [0.5, -1.0, 2.0], [1.0, 0.5, 3.0]
A, B = [0.5, 2.0, 4.0], [1.5, 0.7, 3.0]
P = [0.1, 0.5, 0.85]
CAT = [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]


def _gammaln(x):
    return np.vectorize(math.lgamma)(np.asarray(x, np.float64))


def _digamma(x):
    # psi via recurrence up to x >= 6 and the asymptotic series (independent of oar's kernel)
    x = np.asarray(x, np.float64).copy()
    acc = np.zeros_like(x)
    while np.any(x < 6):
        small = x < 6
        acc[small] -= 1 / x[small]
        x[small] += 1
    f = 1 / (x * x)
    return acc + np.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


# ---- closed forms in NumPy ----
@pytest.mark.parametrize("device", DEVICES)
def test_normal_matches_numpy(device):
    loc, scale, x = np.array(LOC), np.array(SCALE), np.array([0.0, 1.0, -2.0])
    d = D.Normal(T(loc, device), T(scale, device))
    assert d.batch_shape == (3,) and d.event_shape == ()
    ref = -((x - loc) ** 2) / (2 * scale ** 2) - np.log(scale) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(N(d.log_prob(T(x, device))), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(N(d.entropy()), 0.5 + 0.5 * math.log(2 * math.pi) + np.log(scale), rtol=1e-5)
    np.testing.assert_allclose(N(d.mean), loc)
    np.testing.assert_allclose(N(d.variance), scale ** 2, rtol=1e-6)
    np.testing.assert_allclose(N(d.stddev), scale, rtol=1e-6)
    cdf = 0.5 * (1 + np.vectorize(math.erf)((x - loc) / (scale * math.sqrt(2))))
    np.testing.assert_allclose(N(d.cdf(T(x, device))), cdf, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(N(d.icdf(T(cdf, device))), x, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_beta_match_numpy(device):
    a, b, x = np.array(A), np.array(B), np.array([0.3, 1.2, 2.5])
    g = D.Gamma(T(a, device), T(b, device))
    ref = a * np.log(b) + (a - 1) * np.log(x) - b * x - _gammaln(a)
    np.testing.assert_allclose(N(g.log_prob(T(x, device))), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(N(g.entropy()), a - np.log(b) + _gammaln(a) + (1 - a) * _digamma(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(N(g.mean), a / b, rtol=1e-6)
    np.testing.assert_allclose(N(g.variance), a / b ** 2, rtol=1e-6)
    np.testing.assert_allclose(N(g.mode), np.maximum((a - 1) / b, 0), rtol=1e-6)
    u = np.array([0.2, 0.5, 0.9])
    be = D.Beta(T(a, device), T(b, device))
    lbeta = _gammaln(a) + _gammaln(b) - _gammaln(a + b)
    ref = (a - 1) * np.log(u) + (b - 1) * np.log(1 - u) - lbeta
    np.testing.assert_allclose(N(be.log_prob(T(u, device))), ref, rtol=1e-5, atol=1e-5)
    ent = lbeta - (a - 1) * _digamma(a) - (b - 1) * _digamma(b) + (a + b - 2) * _digamma(a + b)
    np.testing.assert_allclose(N(be.entropy()), ent, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(N(be.mean), a / (a + b), rtol=1e-6)
    np.testing.assert_allclose(N(be.variance), a * b / ((a + b) ** 2 * (a + b + 1)), rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_discrete_and_uniform_match_numpy(device):
    p, k = np.array(P), np.array([1.0, 0.0, 1.0])
    be = D.Bernoulli(probs=T(p, device))
    np.testing.assert_allclose(N(be.log_prob(T(k, device))), np.log(np.where(k == 1, p, 1 - p)), rtol=1e-5)
    np.testing.assert_allclose(N(be.entropy()), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-5)
    np.testing.assert_allclose(N(be.variance), p * (1 - p), rtol=1e-5)
    logits = np.log(p / (1 - p))
    np.testing.assert_allclose(N(D.Bernoulli(logits=T(logits, device)).probs), p, rtol=1e-5)
    c = np.array(CAT)
    cat = D.Categorical(probs=T(c * 2, device))  # unnormalized probs are normalized
    np.testing.assert_allclose(N(cat.probs), c, rtol=1e-6)
    idx = oar.tensor([2, 0], device=device)
    np.testing.assert_allclose(N(cat.log_prob(idx)), np.log([c[0, 2], c[1, 0]]), rtol=1e-5)
    np.testing.assert_allclose(N(cat.entropy()), -(c * np.log(c)).sum(-1), rtol=1e-5)
    assert N(cat.mode).tolist() == [2, 2]
    lo, hi = np.array([0.0, -1.0]), np.array([2.0, 3.0])
    u = D.Uniform(T(lo, device), T(hi, device))
    np.testing.assert_allclose(N(u.log_prob(T([1.0, 0.0], device))), -np.log(hi - lo), rtol=1e-6)
    np.testing.assert_allclose(N(u.entropy()), np.log(hi - lo), rtol=1e-6)
    np.testing.assert_allclose(N(u.variance), (hi - lo) ** 2 / 12, rtol=1e-6)


# ---- PyTorch 1.13 as the reference ----
def _pairs(torch, device):
    """(oar distribution, torch distribution, a value to score)."""
    td = torch.distributions
    a, b, p, c = np.array(A), np.array(B), np.array(P), np.array(CAT)
    return [
        (D.Normal(T(LOC, device), T(SCALE, device)), td.Normal(to_torch(np.float32(LOC)), to_torch(np.float32(SCALE))),
         np.float32([0.1, 0.2, 5.0])),
        (D.Gamma(T(a, device), T(b, device)), td.Gamma(to_torch(np.float32(a)), to_torch(np.float32(b))),
         np.float32([0.3, 1.2, 2.5])),
        (D.Beta(T(a, device), T(b, device)), td.Beta(to_torch(np.float32(a)), to_torch(np.float32(b))),
         np.float32([0.2, 0.5, 0.9])),
        (D.Bernoulli(logits=T(p, device)), td.Bernoulli(logits=to_torch(np.float32(p))), np.float32([1, 0, 1])),
        (D.Categorical(logits=T(c, device)), td.Categorical(logits=to_torch(np.float32(c))), np.int64([1, 2])),
        (D.Uniform(T([0.0, 1.0], device), T([1.0, 4.0], device)),
         td.Uniform(to_torch(np.float32([0.0, 1.0])), to_torch(np.float32([1.0, 4.0]))), np.float32([0.5, 2.0])),
        (D.Independent(D.Normal(T(c, device), T(c + 1, device)), 1),
         td.Independent(td.Normal(to_torch(np.float32(c)), to_torch(np.float32(c + 1))), 1), np.float32(c * 3)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_matches_torch(device):
    torch = import_torch()
    for ours, ref, value in _pairs(torch, device):
        name = type(ours).__name__
        assert ours.batch_shape == tuple(ref.batch_shape) and ours.event_shape == tuple(ref.event_shape), name
        got = N(ours.log_prob(oar.tensor(value, device=device)))
        np.testing.assert_allclose(got, from_torch(ref.log_prob(to_torch(value))), rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(N(ours.entropy()), from_torch(ref.entropy()), rtol=1e-4, atol=1e-5, err_msg=name)
        if name != "Categorical":  # torch gives NaN mean/variance for Categorical; so do we (checked below)
            np.testing.assert_allclose(N(ours.mean), from_torch(ref.mean), rtol=1e-5, err_msg=name)
            np.testing.assert_allclose(N(ours.variance), from_torch(ref.variance), rtol=1e-5, err_msg=name)
        if name != "Uniform":
            np.testing.assert_allclose(N(ours.mode), from_torch(ref.mode), rtol=1e-5, err_msg=name)
    assert np.isnan(N(D.Categorical(logits=T(CAT, device)).mean)).all()


@pytest.mark.parametrize("device", DEVICES)
def test_kl_matches_torch(device):
    torch = import_torch()
    td = torch.distributions
    tt = lambda x: to_torch(np.float32(x))  # noqa: E731
    a, b, p, c = np.array(A), np.array(B), np.array(P), np.array(CAT)
    cases = [
        (D.Normal(T(LOC, device), T(SCALE, device)), D.Normal(T(b, device), T(a, device)),
         td.Normal(tt(LOC), tt(SCALE)), td.Normal(tt(b), tt(a))),
        (D.Categorical(probs=T(c, device)), D.Categorical(probs=T(c[::-1].copy(), device)),
         td.Categorical(probs=tt(c)), td.Categorical(probs=tt(c[::-1].copy()))),
        (D.Bernoulli(probs=T(p, device)), D.Bernoulli(probs=T(p[::-1].copy(), device)),
         td.Bernoulli(probs=tt(p)), td.Bernoulli(probs=tt(p[::-1].copy()))),
        (D.Uniform(T([0.0, 0.0], device), T([1.0, 2.0], device)), D.Uniform(T([-1.0, 0.5], device), T([3.0, 3.0], device)),
         td.Uniform(tt([0.0, 0.0]), tt([1.0, 2.0])), td.Uniform(tt([-1.0, 0.5]), tt([3.0, 3.0]))),
        (D.Beta(T(a, device), T(b, device)), D.Beta(T(b, device), T(a, device)),
         td.Beta(tt(a), tt(b)), td.Beta(tt(b), tt(a))),
        (D.Gamma(T(a, device), T(b, device)), D.Gamma(T(b, device), T(a, device)),
         td.Gamma(tt(a), tt(b)), td.Gamma(tt(b), tt(a))),
        (D.Independent(D.Normal(T(c, device), T(c + 1, device)), 1), D.Independent(D.Normal(T(c * 0, device), T(c + 2, device)), 1),
         td.Independent(td.Normal(tt(c), tt(c + 1)), 1), td.Independent(td.Normal(tt(c * 0), tt(c + 2)), 1)),
    ]
    for p_o, q_o, p_t, q_t in cases:
        ref = from_torch(td.kl_divergence(p_t, q_t))
        np.testing.assert_allclose(N(D.kl_divergence(p_o, q_o)), ref, rtol=1e-4, atol=1e-5, err_msg=type(p_o).__name__)
    assert np.isinf(N(D.kl_divergence(cases[3][0], D.Uniform(T([0.5, 0.5], device), T([1.0, 1.0], device))))).all()
    # Normal puts mass on the negative half-line, where Gamma has none: inf, as torch returns
    assert np.isposinf(N(D.kl_divergence(D.Normal(T(LOC, device), T(SCALE, device)),
                                         D.Gamma(T(a, device), T(b, device))))).all()


# ---- sampling ----
@pytest.mark.parametrize("device", DEVICES)
def test_sample_moments(device):
    n = 20000
    cases = [D.Normal(T(LOC, device), T(SCALE, device)), D.Uniform(T([0.0, -2.0], device), T([1.0, 3.0], device)),
             D.Bernoulli(probs=T(P, device)), D.Gamma(T([0.3, 1.0, 5.0], device), T([1.0, 2.0, 0.5], device)),
             D.Beta(T(A, device), T(B, device))]
    oar.manual_seed(7)
    for d in cases:
        x = N(d.sample((n,)))
        assert x.shape == (n,) + d.batch_shape
        mean, var = N(d.mean), N(d.variance)
        # mean within 5 standard errors; variance within 10% (+ slack for heavy tails)
        assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / n)), type(d).__name__
        np.testing.assert_allclose(x.var(0), var, rtol=0.1, err_msg=type(d).__name__)
    assert (N(cases[3].sample((100,))) > 0).all()
    c = np.array(CAT)
    k = N(D.Categorical(probs=T(c, device)).sample((n,)))
    assert k.shape == (n, 2) and k.dtype == np.int64
    freq = np.stack([(k == j).mean(0) for j in range(3)], -1)
    np.testing.assert_allclose(freq, c, atol=0.02)


@pytest.mark.parametrize("device", DEVICES)
def test_manual_seed_repeats_samples(device):
    d = D.Gamma(T(A, device), T(B, device))
    oar.manual_seed(3)
    first = N(d.sample((5,)))
    oar.manual_seed(3)
    np.testing.assert_array_equal(N(d.sample((5,))), first)
    assert not np.array_equal(N(d.sample((5,))), first)


@pytest.mark.parametrize("device", DEVICES)
def test_rsample_gradients_match_finite_differences(device):
    """d sum(rsample)/d params with the seed fixed, against central differences of the same draws."""
    def draw(make, params):
        oar.manual_seed(11)
        return make(*params).rsample((50,)).sum()

    for make, values in [(D.Normal, ([0.3, -1.0], [0.8, 2.0])), (D.Uniform, ([0.0, -1.0], [1.0, 2.5]))]:
        params = [T(v, device, np.float64).requires_grad_(True) for v in values]
        grads = oar.autograd.grad(draw(make, params), params)
        for i, v in enumerate(values):
            for j in range(len(v)):
                h = 1e-4
                up = [np.array(w, np.float64) for w in values]
                down = [np.array(w, np.float64) for w in values]
                up[i][j] += h
                down[i][j] -= h
                fd = (draw(make, [T(w, device, np.float64) for w in up]).item()
                      - draw(make, [T(w, device, np.float64) for w in down]).item()) / (2 * h)
                assert abs(N(grads[i])[j] - fd) < 1e-4 * max(1, abs(fd)), (make.__name__, i, j)


def _gamma_cdf(a, x):
    """Regularized lower incomplete gamma by its series, in float64 (independent reference)."""
    n = np.arange(400)[:, None]
    log_terms = (a + n) * np.log(x) - x - _gammaln(a + n + 1)
    return np.exp(log_terms).sum(0)


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_rsample_implicit_gradient(device):
    """dx/dalpha = -(dCDF/dalpha) / pdf at the drawn x (finite differences of the CDF); rate enters as x / rate."""
    alpha = T([0.4, 1.0, 3.0, 12.0], device, np.float64).requires_grad_(True)
    rate = T([1.0, 2.0, 0.5, 1.0], device, np.float64).requires_grad_(True)
    oar.manual_seed(5)
    x = D.Gamma(alpha, rate).rsample()
    ga, gr = oar.autograd.grad(x.sum(), [alpha, rate])
    a, r, xv = N(alpha), N(rate), N(x)
    z, h = xv * r, 1e-6
    dcdf = (_gamma_cdf(a + h, z) - _gamma_cdf(a - h, z)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(z) - z - _gammaln(a))
    np.testing.assert_allclose(N(ga), -dcdf / pdf / r, rtol=1e-4)
    np.testing.assert_allclose(N(gr), -xv / r, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_beta_rsample_gradient_is_unbiased(device):
    """E[d x/d a] = d E[x]/d a: the average pathwise gradient matches the mean's derivative."""
    n = 20000
    a = T([0.5, 2.0], device).requires_grad_(True)
    b = T([1.5, 3.0], device).requires_grad_(True)
    oar.manual_seed(9)
    (ga,) = oar.autograd.grad(D.Gamma(a, b).rsample((n,)).sum() / n, [a])
    np.testing.assert_allclose(N(ga), 1 / N(b), rtol=0.05)
    ga, gb = oar.autograd.grad(D.Beta(a, b).rsample((n,)).sum() / n, [a, b])
    av, bv = N(a), N(b)
    np.testing.assert_allclose(N(ga), bv / (av + bv) ** 2, rtol=0.08)
    np.testing.assert_allclose(N(gb), -av / (av + bv) ** 2, rtol=0.08)


# ---- shapes, expand, Independent ----
@pytest.mark.parametrize("device", DEVICES)
def test_shapes_and_expand(device):
    d = D.Normal(T([0.0, 1.0], device), 1.0)
    assert d.sample().shape == (2,) and d.sample((4, 3)).shape == (4, 3, 2)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.sample((3,)).shape == (3, 5, 2)
    np.testing.assert_allclose(N(e.log_prob(T(np.zeros((5, 2)), device)))[4], N(d.log_prob(T([0.0, 0.0], device))))
    ind = D.Independent(D.Normal(T(np.zeros((3, 4)), device), 1.0), 1)
    assert ind.batch_shape == (3,) and ind.event_shape == (4,)
    assert ind.log_prob(T(np.zeros((3, 4)), device)).shape == (3,)
    assert D.Normal(0.0, 1.0).batch_shape == ()
    cat = D.Categorical(logits=T(CAT, device)).expand((4, 2))
    assert cat.sample((3,)).shape == (3, 4, 2) and cat.log_prob(oar.tensor([0, 1], device=device)).shape == (4, 2)


# ---- validation ----
@pytest.mark.parametrize("device", DEVICES)
def test_invalid_parameters_raise_naming_them(device):
    bad = [(lambda: D.Normal(T([0.0], device), T([-1.0], device)), "scale"),
           (lambda: D.Gamma(T([-1.0], device), T([1.0], device)), "concentration"),
           (lambda: D.Beta(T([1.0], device), T([0.0], device)), "concentration0"),
           (lambda: D.Bernoulli(probs=T([1.5], device)), "probs"),
           (lambda: D.Categorical(probs=T([[0.5, -0.1, 0.6]], device)), "probs"),
           (lambda: D.Uniform(T([1.0], device), T([0.0], device)), "low"),
           (lambda: D.Bernoulli(probs=T([0.5], device), logits=T([0.0], device)), "not both")]
    for make, word in bad:
        with pytest.raises(ValueError, match=word):
            make()
    D.Normal(T([0.0], device), T([-1.0], device), validate_args=False)  # validation off: accepted


@pytest.mark.parametrize("device", DEVICES)
def test_values_outside_support_raise(device):
    with pytest.raises(ValueError, match="support"):
        D.Beta(T([1.0], device), T([2.0], device)).log_prob(T([1.5], device))
    with pytest.raises(ValueError, match="support"):
        D.Bernoulli(probs=T([0.3], device)).log_prob(T([0.5], device))
    with pytest.raises(ValueError, match="support"):
        D.Categorical(probs=T([0.3, 0.7], device)).log_prob(oar.tensor([2], device=device))
    with pytest.raises(ValueError, match="broadcastable"):
        D.Normal(T([0.0, 1.0], device), 1.0).log_prob(T([0.0, 1.0, 2.0], device))
    with pytest.raises(ValueError, match="Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)


# ---- MultivariateNormal (needs oar.linalg) ----
_MU = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]])
_LT = np.array([[1.0, 0.0, 0.0], [0.5, 1.5, 0.0], [-0.3, 0.2, 0.7]])
_COV = _LT @ _LT.T


@needs_linalg
@pytest.mark.parametrize("device", DEVICES)
def test_mvn_matches_numpy_and_torch(device):
    x = np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]])
    diff = x - _MU
    maha = np.einsum("bi,ij,bj->b", diff, np.linalg.inv(_COV), diff)
    ref = -0.5 * (3 * math.log(2 * math.pi) + maha + np.log(np.linalg.det(_COV)))
    prec = np.linalg.inv(_COV)
    for kw in ({"covariance_matrix": _COV}, {"scale_tril": _LT}, {"precision_matrix": prec}):
        (name, m), = kw.items()
        d = D.MultivariateNormal(T(_MU, device, np.float64), **{name: T(m, device, np.float64)})
        assert d.batch_shape == (2,) and d.event_shape == (3,)
        np.testing.assert_allclose(N(d.log_prob(T(x, device, np.float64))), ref, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(N(d.entropy()), 0.5 * (3 * (1 + math.log(2 * math.pi)) + np.log(np.linalg.det(_COV))),
                                   rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(N(d.covariance_matrix)[1], _COV, rtol=1e-6, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(N(d.variance)[0], np.diag(_COV), rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(N(d.precision_matrix)[0], prec, rtol=1e-6, atol=1e-9, err_msg=name)
    torch = import_torch()
    q_cov = np.eye(3) * 2 + 0.1
    p_t = torch.distributions.MultivariateNormal(to_torch(_MU), covariance_matrix=to_torch(_COV))
    q_t = torch.distributions.MultivariateNormal(to_torch(_MU[::-1].copy()), covariance_matrix=to_torch(q_cov))
    p = D.MultivariateNormal(T(_MU, device, np.float64), covariance_matrix=T(_COV, device, np.float64))
    q = D.MultivariateNormal(T(_MU[::-1].copy(), device, np.float64), covariance_matrix=T(q_cov, device, np.float64))
    np.testing.assert_allclose(N(D.kl_divergence(p, q)), from_torch(torch.distributions.kl_divergence(p_t, q_t)),
                               rtol=1e-6)


@needs_linalg
@pytest.mark.parametrize("device", DEVICES)
def test_mvn_samples_and_gradients(device):
    loc = T(_MU[0], device, np.float64).requires_grad_(True)
    L = T(_LT, device, np.float64).requires_grad_(True)
    oar.manual_seed(13)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((20000,))
    xs = N(x)
    np.testing.assert_allclose(xs.mean(0), _MU[0], atol=0.05)
    np.testing.assert_allclose(np.cov(xs.T), _COV, atol=0.06)
    gl, gL = oar.autograd.grad(x.sum(), [loc, L])
    np.testing.assert_allclose(N(gl), np.full(3, 20000.0))
    eps = np.linalg.solve(_LT, (xs - _MU[0]).T).T  # the standard normals behind the draws
    np.testing.assert_allclose(N(gL), np.ones((3, 1)) * eps.sum(0)[None, :], rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="scale_tril"):
        D.MultivariateNormal(T(_MU[0], device, np.float64), scale_tril=T(-_LT, device, np.float64))
    with pytest.raises(ValueError, match="Exactly one"):
        D.MultivariateNormal(T(_MU[0], device), covariance_matrix=T(_COV, device), scale_tril=T(_LT, device))
