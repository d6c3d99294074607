"""VonMises, Wishart, CatTransform / StackTransform and constraints.cat / stack against PyTorch 1.13 (float64,
1e-10 relative), closed forms in NumPy, sample moments with tolerances from the sample count, rsample
gradients by finite differences and by unbiasedness, and the errors torch raises for bad arguments."""
import math
import warnings

import numpy as np
import pytest

import oar
import oar.distributions as D
from oar.distributions import constraints, transforms as Tr
from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]
RTOL = 1e-10


def T(x, device="cpu:0", dtype=np.float64, requires_grad=False):
    t = oar.tensor(np.asarray(x, dtype=dtype), device=device)
    return t.requires_grad_(True) if requires_grad else t


def N(t):
    return t.detach().cpu().numpy()


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def tt(a):
    return to_torch(np.asarray(a, np.float64))


def _array(t):
    if isinstance(t, oar.Tensor):
        return N(t)
    return from_torch(t) if hasattr(t, "detach") else np.asarray(t)  # a torch tensor, or array-like


def close(got, expected, rtol=RTOL, atol=1e-12, msg=""):
    got, expected = _array(got), _array(expected)
    assert got.shape == expected.shape, (msg, got.shape, expected.shape)
    got = got.astype(np.float64) if got.dtype == np.bool_ else got
    expected = expected.astype(np.float64) if expected.dtype == np.bool_ else expected
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)


# ------------------------------------------------------------------------------------------------- VonMises

VM_LOC = np.array([0.5, -2.0, 3.0, 7.0])
VM_CONC = np.array([0.05, 1.0, 3.7, 40.0])  # both sides of the 3.75 switch of the Bessel polynomials
VM_VALUES = np.array([[0.0, 1.0, -3.0, 10.0], [-20.0, 3.14, 0.2, 7.1]])


@pytest.mark.parametrize("device", DEVICES)
def test_vonmises_matches_torch(device, torch):
    ours = D.VonMises(T(VM_LOC, device), T(VM_CONC, device))
    ref = torch.distributions.VonMises(tt(VM_LOC), tt(VM_CONC))
    assert ours.batch_shape == tuple(ref.batch_shape) and ours.event_shape == ()
    assert ours.has_rsample is False and ours.support is constraints.real
    assert set(ours.arg_constraints) == set(ref.arg_constraints) == {"loc", "concentration"}
    close(ours.log_prob(T(VM_VALUES, device)), ref.log_prob(tt(VM_VALUES)), msg="log_prob")
    for attr in ("mean", "mode", "variance", "stddev"):
        close(getattr(ours, attr), getattr(ref, attr), msg=attr)
    with pytest.raises(NotImplementedError):
        ours.entropy()
    with pytest.raises(NotImplementedError):
        ref.entropy()
    # scalar (Python number) parameters: float32 of batch shape (), as in torch
    s, r = D.VonMises(1.0, 2.0), torch.distributions.VonMises(1.0, 2.0)
    assert s.batch_shape == () and s.loc.dtype == oar.float32
    close(s.log_prob(oar.tensor(0.3)), r.log_prob(torch.tensor(0.3)), rtol=1e-6)


def test_vonmises_log_prob_gradients_match_torch(torch):
    loc, conc = T(VM_LOC, requires_grad=True), T(VM_CONC, requires_grad=True)
    tloc = tt(VM_LOC).requires_grad_(True)
    tconc = tt(VM_CONC).requires_grad_(True)
    D.VonMises(loc, conc).log_prob(T(VM_VALUES)).sum().backward()
    torch.distributions.VonMises(tloc, tconc).log_prob(tt(VM_VALUES)).sum().backward()
    close(loc.grad, tloc.grad, msg="d/dloc")
    close(conc.grad, tconc.grad, msg="d/dconcentration")


def test_vonmises_bessel_polynomials_near_exact():
    """torch's (and so our) log I0 / I1 polynomials are within A&S's bounds of the exact functions
    (oar.special.i0e / i1e, tested against torch to 1e-6 in float64; np.i0 for I0): 1.6e-7 relative below
    3.75, above it 1.9e-7 absolute on sqrt(x) e^-x I(x) ~ 0.399, i.e. 4.8e-7 relative."""
    from oar.distributions.von_mises import _log_modified_bessel_fn
    k = np.array([0.01, 0.5, 1.0, 3.0, 3.74, 3.76, 10.0, 100.0])
    log_i0 = N(_log_modified_bessel_fn(T(k), 0))
    np.testing.assert_allclose(np.exp(log_i0), np.i0(k), rtol=5e-7)
    exact_log_i1 = np.log(N(oar.special.i1e(T(k)))) + k
    np.testing.assert_allclose(N(_log_modified_bessel_fn(T(k), 1)), exact_log_i1, atol=5e-7)
    np.testing.assert_allclose(N(D.VonMises(T(np.zeros(8)), T(k)).variance),
                               1 - N(oar.special.i1e(T(k))) / N(oar.special.i0e(T(k))), atol=2e-6)


def _vonmises_cdf(x, kappa):
    """The CDF on [-pi, pi] of VonMises(0, kappa) by the trapezoid rule on a fine grid."""
    grid = np.linspace(-np.pi, np.pi, 200001)
    dens = np.exp(kappa * (np.cos(grid) - 1))
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid))])
    return np.interp(x, grid, cdf / cdf[-1])


@pytest.mark.parametrize("device", DEVICES)
def test_vonmises_samples(device):
    """Circular mean direction and mean resultant length I1/I0 within 5 standard errors of n draws, and
    the whole distribution by a Kolmogorov-Smirnov distance below 1.95 / sqrt(n) (p ~ 0.001)."""
    n = 20000
    oar.manual_seed(3)
    d = D.VonMises(T(VM_LOC, device), T(VM_CONC, device))
    x = d.sample((n,))
    assert tuple(x.shape) == (n, 4) and not x.requires_grad and x.dtype == oar.float64
    xs = N(x)
    assert np.all(xs >= -np.pi) and np.all(xs < np.pi)  # folded into [-pi, pi)
    c, s = np.cos(xs - VM_LOC), np.sin(xs - VM_LOC)
    i1_i0 = N(oar.special.i1e(T(VM_CONC))) / N(oar.special.i0e(T(VM_CONC)))  # mean resultant length
    assert np.all(np.abs(c.mean(0) - i1_i0) <= 5 * c.std(0) / np.sqrt(n) + 1e-12), (c.mean(0), i1_i0)
    assert np.all(np.abs(s.mean(0)) <= 5 * s.std(0) / np.sqrt(n) + 1e-12), s.mean(0)
    circular_mean = np.arctan2(s.mean(0), c.mean(0))  # direction relative to loc
    se = s.std(0) / np.sqrt(n) / i1_i0  # delta method: angle error ~ sin-mean error / resultant length
    assert np.all(np.abs(circular_mean) <= 5 * se), (circular_mean, se)
    for j, kappa in enumerate(VM_CONC):
        centred = np.sort((xs[:, j] - VM_LOC[j] + np.pi) % (2 * np.pi) - np.pi)
        ecdf_hi = np.arange(1, n + 1) / n
        model = _vonmises_cdf(centred, kappa)
        ks = max(np.max(ecdf_hi - model), np.max(model - (ecdf_hi - 1 / n)))
        assert ks < 1.95 / np.sqrt(n), (kappa, ks)
    # sample_shape () and an expanded distribution
    assert tuple(d.sample().shape) == (4,)
    assert tuple(d.expand((3, 4)).sample((2,)).shape) == (2, 3, 4)


def test_vonmises_small_float32_and_repeatable():
    oar.manual_seed(5)
    a = D.VonMises(oar.tensor([0.0, 1.0]), oar.tensor([0.5, 200.0])).sample((100,))
    oar.manual_seed(5)
    b = D.VonMises(oar.tensor([0.0, 1.0]), oar.tensor([0.5, 200.0])).sample((100,))
    assert a.dtype == oar.float32 and np.array_equal(N(a), N(b))
    assert np.all(np.isfinite(N(a)))
    # NaN parameters without validation give NaN draws, not an endless rejection loop
    x = D.VonMises(T([0.0, 0.0]), T([float("nan"), 1.0]), validate_args=False).sample((3,))
    assert np.all(np.isnan(N(x)[:, 0])) and np.all(np.isfinite(N(x)[:, 1]))


def test_vonmises_expand(torch):
    d = D.VonMises(T([0.5, 1.0]), T([2.0, 3.0]), validate_args=True)
    e = d.expand((3, 2))
    assert type(e) is D.VonMises and e.batch_shape == (3, 2) and e._validate_args is True
    assert tuple(e.loc.shape) == (3, 2) and tuple(e._proposal_r.shape) == (3, 2)
    ref = torch.distributions.VonMises(tt([0.5, 1.0]), tt([2.0, 3.0])).expand((3, 2))
    v = np.linspace(-3, 3, 6).reshape(3, 2)
    close(e.log_prob(T(v)), ref.log_prob(tt(v)))
    close(e.variance, ref.variance)

    class MyVonMises(D.VonMises):
        pass
    assert type(MyVonMises(T([0.0]), T([1.0])).expand((2, 1))) is MyVonMises


def test_vonmises_errors(torch):
    for M, t in ((D, T), (torch.distributions, tt)):
        with pytest.raises(ValueError, match="concentration"):
            M.VonMises(t([0.0, 1.0]), t([1.0, 0.0]), validate_args=True)
        with pytest.raises(ValueError, match="loc"):
            M.VonMises(t([float("nan")]), t([1.0]), validate_args=True)
        d = M.VonMises(t([0.0, 1.0]), t([1.0, 2.0]), validate_args=True)
        with pytest.raises(ValueError, match="support"):
            d.log_prob(t([float("nan"), 0.0]))
        with pytest.raises(ValueError, match="broadcastable"):
            d.log_prob(t([0.0, 1.0, 2.0]))
        with pytest.raises(ValueError, match="must be a Tensor"):
            d.log_prob([0.0, 1.0])
    with pytest.raises(ValueError, match="Input arguments must all be instances"):
        D.VonMises("a", T([1.0]))


# --------------------------------------------------------------------------------------------------- Wishart

SIGMA = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])
SIGMA_B = np.stack([SIGMA, np.diag([0.5, 1.0, 2.0])])  # batch of two
DF_B = np.array([4.5, 7.0])


def _wishart_cases(M, t):
    """The same constructions for oar and torch: each parameterisation, batched df and matrices,
    a Python-number df, a df that broadcasts against one matrix."""
    L = np.linalg.cholesky(SIGMA)
    return {
        "cov": M.Wishart(t(5.0), covariance_matrix=t(SIGMA)),
        "prec": M.Wishart(t(5.0), precision_matrix=t(np.linalg.inv(SIGMA))),
        "tril": M.Wishart(t(5.0), scale_tril=t(L)),
        "number_df": M.Wishart(3.5, covariance_matrix=t(SIGMA)),
        "batched": M.Wishart(t(DF_B), covariance_matrix=t(SIGMA_B)),
        "df_broadcast": M.Wishart(t(DF_B), scale_tril=t(L)),
        "low_df": M.Wishart(t(np.array([2.5, 3.9])), precision_matrix=t(SIGMA_B)),
    }


def _wishart_values(batch_shape):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2,) + tuple(batch_shape) + (3, 5))
    return A @ np.swapaxes(A, -1, -2) + 0.1 * np.eye(3)


@pytest.mark.parametrize("device", DEVICES)
def test_wishart_matches_torch(device, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the low-df warning, checked below
        ours = _wishart_cases(D, lambda a: T(a, device))
        refs = _wishart_cases(torch.distributions, tt)
    for name, d in ours.items():
        ref = refs[name]
        assert d.batch_shape == tuple(ref.batch_shape) and d.event_shape == tuple(ref.event_shape) == (3, 3), name
        assert d.has_rsample and d.support is constraints.positive_definite
        x = _wishart_values(d.batch_shape)
        close(d.log_prob(T(x, device)), ref.log_prob(tt(x)), msg=f"{name}.log_prob")
        for attr in ("entropy", "mean", "mode", "variance", "stddev", "covariance_matrix", "precision_matrix",
                     "scale_tril", "df"):
            value = getattr(d, attr)
            expected = getattr(ref, attr)
            if attr == "entropy":
                value, expected = value(), expected()
            close(value, expected, atol=1e-11, msg=f"{name}.{attr}")
    assert np.all(np.isnan(N(ours["low_df"].mode)))  # df <= p + 1: no mode, NaN as in torch


def test_wishart_log_prob_and_entropy_gradients_match_torch(torch):
    L = np.linalg.cholesky(SIGMA_B)
    df, tril = T(DF_B, requires_grad=True), T(L, requires_grad=True)
    tdf, ttril = tt(DF_B).requires_grad_(True), tt(L).requires_grad_(True)
    x = _wishart_values((2,))
    (D.Wishart(df, scale_tril=tril).log_prob(T(x)).sum() + D.Wishart(df, scale_tril=tril).entropy().sum()).backward()
    ref = torch.distributions.Wishart(tdf, scale_tril=ttril)
    (ref.log_prob(tt(x)).sum() + ref.entropy().sum()).backward()
    # the df gradient goes through trigamma (entropy's mvdigamma), where torch 1.13 is off by up to ~2e-10
    # (trigamma(3) = pi^2/6 - 5/4: torch 0.39493406693, exact and oar 0.39493406685)
    close(df.grad, tdf.grad, rtol=1e-9, msg="d/ddf")
    # lower triangles: only they are read. torch's cholesky_solve backward also hands the unread upper
    # triangle a (meaningless) gradient; oar's triangular solves give it zeros
    close(np.tril(N(tril.grad)), np.tril(from_torch(ttril.grad)), msg="d/dscale_tril")
    assert np.all(np.triu(N(tril.grad), 1) == 0)


def test_wishart_closed_forms():
    """log_prob against the textbook density in NumPy (an independent formula from torch's)."""
    from math import lgamma
    nu, p = 5.5, 3
    x = _wishart_values(())[0]
    logdet = lambda m: np.linalg.slogdet(m)[1]  # noqa: E731
    log_mvgamma = p * (p - 1) / 4 * math.log(math.pi) + sum(lgamma(nu / 2 - j / 2) for j in range(p))
    expected = ((nu - p - 1) / 2 * logdet(x) - np.trace(np.linalg.solve(SIGMA, x)) / 2
                - nu * p / 2 * math.log(2) - nu / 2 * logdet(SIGMA) - log_mvgamma)
    d = D.Wishart(T(nu), covariance_matrix=T(SIGMA))
    np.testing.assert_allclose(N(d.log_prob(T(x))), expected, rtol=1e-12)
    np.testing.assert_allclose(N(d.mean), nu * SIGMA, rtol=1e-13)
    np.testing.assert_allclose(N(d.variance), nu * (SIGMA ** 2 + np.outer(np.diag(SIGMA), np.diag(SIGMA))),
                               rtol=1e-13)


@pytest.mark.parametrize("device", DEVICES)
def test_wishart_sample_moments(device):
    """n draws: every entry's mean within 5 standard errors of df * Sigma (the standard error from the
    variance formula), every entry's sample variance within 5 standard errors of df (S_ij^2 + S_ii S_jj)
    (the standard error of a sample variance from the sample's fourth central moment)."""
    n = 20000
    oar.manual_seed(11)
    d = D.Wishart(T(DF_B, device), covariance_matrix=T(SIGMA_B, device))
    x = d.rsample((n,))
    assert tuple(x.shape) == (n, 2, 3, 3) and x.dtype == oar.float64
    xs = N(x)
    np.testing.assert_allclose(xs, np.swapaxes(xs, -1, -2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(xs) > 0)
    mean, var = N(d.mean), N(d.variance)
    assert np.all(np.abs(xs.mean(0) - mean) <= 5 * np.sqrt(var / n)), (xs.mean(0), mean)
    centred = xs - xs.mean(0)
    m4 = (centred ** 4).mean(0)
    se_var = np.sqrt((m4 - xs.var(0) ** 2) / n)
    assert np.all(np.abs(xs.var(0) - var) <= 5 * se_var), (xs.var(0), var)
    assert tuple(d.sample().shape) == (2, 3, 3) and not d.sample().requires_grad
    assert tuple(d.expand((4, 2)).rsample((3,)).shape) == (3, 4, 2, 3, 3)


def test_wishart_rsample_scale_gradient_finite_differences():
    """With the seed fixed the Bartlett noise is the same for every scale_tril, so X(L) = L A A^T L^T is
    a smooth function of L: its gradient against central differences, 1e-6 relative in float64."""
    rng = np.random.default_rng(1)
    L0 = np.linalg.cholesky(SIGMA_B)
    W = rng.normal(size=(4, 2, 3, 3))

    def f(L, grad=False):
        t = T(L, requires_grad=grad)
        oar.manual_seed(7)
        x = D.Wishart(T(DF_B), scale_tril=t).rsample((4,))
        return t, (x * T(W)).sum()

    t, y = f(L0, grad=True)
    y.backward()
    got = N(t.grad)
    h = 1e-6
    fd = np.zeros_like(L0)
    for idx in zip(*np.nonzero(np.tril(np.ones((3, 3)))[None].repeat(2, 0))):
        e = np.zeros_like(L0)
        e[idx] = h
        fd[idx] = (float(f(L0 + e)[1]) - float(f(L0 - e)[1])) / (2 * h)
    np.testing.assert_allclose(np.tril(got), fd, rtol=1e-6, atol=1e-7)


def test_wishart_rsample_covariance_gradient_finite_differences():
    """The covariance_matrix parameterisation (gradients through the Cholesky factor): Sigma = B B^T + I of
    a free matrix B, central differences in B, same seed for every evaluation."""
    rng = np.random.default_rng(2)
    B0 = rng.normal(size=(3, 3))
    W = rng.normal(size=(3, 3, 3))

    def f(B, grad=False):
        b = T(B, requires_grad=grad)
        cov = b @ b.transpose(-2, -1) + T(np.eye(3))
        oar.manual_seed(9)
        x = D.Wishart(T(6.0), covariance_matrix=cov).rsample((3,))
        return b, (x * T(W)).sum()

    b, y = f(B0, grad=True)
    y.backward()
    h = 1e-6
    fd = np.zeros_like(B0)
    for i in range(3):
        for j in range(3):
            e = np.zeros_like(B0)
            e[i, j] = h
            fd[i, j] = (float(f(B0 + e)[1]) - float(f(B0 - e)[1])) / (2 * h)
    np.testing.assert_allclose(N(b.grad), fd, rtol=1e-6, atol=1e-7)


def test_wishart_rsample_df_gradient_unbiased():
    """d/ddf E[sum(X)] = sum(Sigma): over a batch of n independent Wisharts (one draw each, so the gradient
    of the total is each draw's own gradient), the mean per-draw gradient is within 5 standard errors
    (the per-draw spread / sqrt(n)) of it. The df gradient is Chi2's implicit reparameterisation."""
    n = 20000
    oar.manual_seed(13)
    df = T(np.full(n, 4.5), requires_grad=True)
    x = D.Wishart(df, covariance_matrix=T(SIGMA)).rsample()
    assert tuple(x.shape) == (n, 3, 3)
    g, = oar.autograd.grad(x.sum(), df)
    g = N(g)
    assert abs(g.mean() - SIGMA.sum()) <= 5 * g.std() / np.sqrt(n), (g.mean(), SIGMA.sum(), g.std())


def test_wishart_expand_and_arg_constraints(torch):
    d = D.Wishart(T(5.0), covariance_matrix=T(SIGMA), validate_args=True)
    e = d.expand((2, 4))
    assert type(e) is D.Wishart and e.batch_shape == (2, 4) and e.event_shape == (3, 3)
    assert e._validate_args is True and tuple(e.covariance_matrix.shape) == (2, 4, 3, 3)
    ref = torch.distributions.Wishart(tt(5.0), covariance_matrix=tt(SIGMA)).expand((2, 4))
    x = _wishart_values((2, 4))
    close(e.log_prob(T(x)), ref.log_prob(tt(x)))
    close(e.entropy(), ref.entropy())
    assert tuple(e._dist_chi2.batch_shape) == (2, 4, 3)
    # df's constraint depends on the dimension: greater_than(p - 1) on the instance, as torch reports it
    assert repr(d.arg_constraints["df"]) == repr(ref.arg_constraints["df"]) == "GreaterThan(lower_bound=2)"
    assert repr(e.arg_constraints["df"]) == "GreaterThan(lower_bound=2)"
    assert repr(D.Wishart.arg_constraints["df"]) == "GreaterThan(lower_bound=0)"
    assert list(d.arg_constraints) == list(ref.arg_constraints)
    assert repr(D.Wishart(T(3.0), scale_tril=T(np.eye(2))).arg_constraints["df"]) == "GreaterThan(lower_bound=1)"


def test_wishart_errors(torch):
    for M, t in ((D, T), (torch.distributions, tt)):
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            M.Wishart(t(4.0))
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            M.Wishart(t(4.0), covariance_matrix=t(SIGMA), scale_tril=t(np.eye(3)))
        with pytest.raises(ValueError, match="at least two-dimensional"):
            M.Wishart(t(4.0), covariance_matrix=t([1.0, 2.0]))
        with pytest.raises(ValueError, match=r"expected to be greater than ndim - 1 = 2\."):
            M.Wishart(t([4.0, 2.0]), covariance_matrix=t(SIGMA))
        with pytest.raises(ValueError, match=r"Value of df=1\.5 expected to be greater than ndim - 1 = 2\."):
            M.Wishart(1.5, covariance_matrix=t(SIGMA))
        with pytest.warns(UserWarning, match="Low df values detected"):
            M.Wishart(t(2.5), covariance_matrix=t(SIGMA))
        with pytest.raises(ValueError, match="covariance_matrix.*PositiveDefinite"):
            M.Wishart(t(4.0), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]), validate_args=True)
        with pytest.raises(ValueError, match="precision_matrix.*PositiveDefinite"):
            M.Wishart(t(4.0), precision_matrix=t([[1.0, 0.5], [0.4, 1.0]]), validate_args=True)
        with pytest.raises(ValueError, match="scale_tril.*LowerCholesky"):
            M.Wishart(t(4.0), scale_tril=t([[1.0, 2.0], [0.0, 1.0]]), validate_args=True)
        with pytest.raises(ValueError, match="df.*GreaterThan"):
            M.Wishart(t(float("nan")), scale_tril=t(np.eye(2)), validate_args=True)
        d = M.Wishart(t(4.0), covariance_matrix=t(SIGMA), validate_args=True)
        with pytest.raises(ValueError, match="within the support"):
            d.log_prob(t(-np.eye(3)))
        with pytest.raises(ValueError, match="must match event_shape"):
            d.log_prob(t(np.eye(2)))
    # no validation: the matrices are taken as they are
    assert D.Wishart(T(4.0), scale_tril=T([[1.0, 2.0], [0.0, 1.0]]), validate_args=False).batch_shape == ()


def test_wishart_rsample_warns_only_for_singular_draws():
    """Draws that fail the support check are drawn again with a warning; regular draws give none (torch
    1.13 tests the flag inverted, so it warns "Singular sample detected." and redraws on every call)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        d = D.Wishart(T(4.0), covariance_matrix=T(SIGMA))
        oar.manual_seed(0)
        d.rsample((50,))
    assert not any("Singular" in str(r.message) for r in rec)
    # a batch with one singular matrix: flagged and replaced (here: never fixable, so it stays, warned)
    d = D.Wishart(T(4.0), covariance_matrix=T(SIGMA))
    calls = []
    real = d._bartlett_sampling

    def singular_first(sample_shape=()):
        x = real(sample_shape)
        if not calls:
            x = x * T(np.where(np.arange(4)[:, None, None] == 1, 0.0, 1.0))  # draw 1 all zeros
        calls.append(1)
        return x
    d._bartlett_sampling = singular_first
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((4,), max_try_correction=3)
    assert len(calls) == 2  # one redraw fixed it
    assert np.all(np.linalg.eigvalsh(N(x)) > 0)
    # the real thing: df = 2.05 for 3 x 3 in float32 makes ~40% of the draws fail the Cholesky check; each
    # is redrawn up to 10 times, so about 1000 * 0.4^11 = 0.04 of 1000 stay singular (at most 3 here)
    with pytest.warns(UserWarning, match="Low df"):
        d = D.Wishart(oar.tensor(2.05), covariance_matrix=oar.eye(3))
    oar.manual_seed(1)
    first = d._bartlett_sampling((1000,))
    assert int((~constraints.positive_definite.check(first)).sum()) > 100
    oar.manual_seed(1)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((1000,))
    assert int((~constraints.positive_definite.check(x)).sum()) <= 3


def test_positive_definite_check_is_per_matrix(torch):
    m = np.array([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]], [[1.0, 0.5], [0.4, 1.0]]])
    # (torch 1.13 returns only the symmetry check when any matrix in the batch is not symmetric, so it
    # calls the indefinite first one positive definite in this batch: compared on the symmetric two)
    close(constraints.positive_definite.check(T(m[:2])),
          torch.distributions.constraints.positive_definite.check(tt(m[:2])))
    close(constraints.positive_definite.check(T(m)), np.array([False, True, False]))


def test_wishart_kl_matches_torch(torch):
    """kl_divergence(Wishart, Wishart): torch reaches it through ExponentialFamily's Bregman divergence,
    correct for a single distribution; ours is the closed form, the same values, and batched."""
    p_args = [(4.0, SIGMA), (6.5, np.diag([0.5, 1.0, 2.0]))]
    q_args = [(5.0, 2 * SIGMA), (3.2, np.eye(3))]
    batched = []
    for (dp, sp), (dq, sq) in zip(p_args, q_args):
        ours = D.kl_divergence(D.Wishart(T(dp), covariance_matrix=T(sp)), D.Wishart(T(dq), covariance_matrix=T(sq)))
        ref = torch.distributions.kl_divergence(torch.distributions.Wishart(tt(dp), covariance_matrix=tt(sp)),
                                                torch.distributions.Wishart(tt(dq), covariance_matrix=tt(sq)))
        close(ours, ref, rtol=1e-9)
        batched.append(from_torch(ref))
    pb = D.Wishart(T([a[0] for a in p_args]), covariance_matrix=T([a[1] for a in p_args]))
    qb = D.Wishart(T([a[0] for a in q_args]), scale_tril=T(np.linalg.cholesky([a[1] for a in q_args])))
    close(D.kl_divergence(pb, qb), np.array(batched), rtol=1e-9)
    close(D.kl_divergence(pb, pb), np.zeros(2), atol=1e-12)


# ------------------------------------------------------------------------------- Cat / Stack transforms


def _cat_stack_cases(M):
    Tm = M.transforms
    t0 = Tm.CatTransform([Tm.ExpTransform(), Tm.identity_transform], dim=0, lengths=[2, 3])
    return [
        # (transform, x) ; x float64 arrays
        (Tm.CatTransform([Tm.ExpTransform(), Tm.SigmoidTransform(), Tm.AffineTransform(1.0, -2.0)],
                         dim=0, lengths=[2, 1, 3]), np.linspace(-2, 2, 6)),
        (Tm.CatTransform([t0, t0], dim=0, lengths=[5, 5]), np.linspace(-1, 1, 10)),
        (Tm.CatTransform([Tm.ExpTransform(), Tm.TanhTransform()], dim=-1, lengths=[1, 2]),
         np.linspace(-1, 1, 12).reshape(4, 3)),
        # an event_dim-1 part: dim 0 is a batch dim of the log-det (concatenated there) ...
        (Tm.CatTransform([Tm.ExpTransform(), Tm.AffineTransform(0.5, 3.0, event_dim=1)], dim=0, lengths=[2, 2]),
         np.linspace(-1, 1, 12).reshape(4, 3)),
        # ... and dim -1 an event dim (summed)
        (Tm.CatTransform([Tm.ExpTransform(), Tm.AffineTransform(0.5, 3.0, event_dim=1)], dim=-1, lengths=[2, 2]),
         np.linspace(-1, 1, 20).reshape(5, 4)),
        (Tm.CatTransform([Tm.ExpTransform(), Tm.SoftplusTransform()]), np.array([[0.3, 0.1], [-0.7, 2.0]])),
        (Tm.StackTransform([Tm.ExpTransform(), Tm.identity_transform, Tm.SigmoidTransform()], dim=0),
         np.linspace(-2, 2, 12).reshape(3, 4)),
        (Tm.StackTransform([Tm.ExpTransform(), Tm.AffineTransform(2.0, 0.5)], dim=1),
         np.linspace(-2, 2, 8).reshape(4, 2)),
        (Tm.StackTransform([Tm.TanhTransform(), Tm.ExpTransform()], dim=-2),
         np.linspace(-2, 2, 12).reshape(3, 2, 2)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_cat_stack_transforms_match_torch(device, torch):
    for k, ((ours, x), (ref, _)) in enumerate(zip(_cat_stack_cases(D), _cat_stack_cases(torch.distributions))):
        xo, xt = T(x, device), tt(x)
        yo, yt = ours(xo), ref(xt)
        close(yo, yt, msg=f"case {k} forward")
        close(ours.inv(yo), ref.inv(yt), rtol=1e-9, msg=f"case {k} inverse")
        close(ours.log_abs_det_jacobian(xo, yo), ref.log_abs_det_jacobian(xt, yt), msg=f"case {k} log_det")
        assert ours.bijective == ref.bijective
        assert ours.event_dim == ref.event_dim, k
        assert ours.domain.event_dim == ref.domain.event_dim and ours.codomain.event_dim == ref.codomain.event_dim
        for which, value_o, value_t in (("domain", xo, xt), ("codomain", yo, yt)):
            try:
                expected = getattr(ref, which).check(value_t)
            except RuntimeError:  # blocks checked to different shapes: torch.cat refuses, and so do we
                with pytest.raises(Exception):
                    getattr(ours, which).check(value_o)
                continue
            close(getattr(ours, which).check(value_o), expected, msg=f"case {k} {which}.check")
        assert tuple(ours.forward_shape(x.shape)) == x.shape


def test_cat_stack_gradients_match_torch(torch):
    for k, ((ours, x), (ref, _)) in enumerate(zip(_cat_stack_cases(D), _cat_stack_cases(torch.distributions))):
        xo, xt = T(x, requires_grad=True), tt(x).requires_grad_(True)
        yo, yt = ours(xo), ref(xt)
        (yo.sum() + ours.log_abs_det_jacobian(xo, yo).sum()).backward()
        (yt.sum() + ref.log_abs_det_jacobian(xt, yt).sum()).backward()
        close(xo.grad, xt.grad, msg=f"case {k}")


def test_cat_stack_transform_api(torch):
    exp, aff = Tr.ExpTransform(), Tr.AffineTransform(1.0, 2.0)
    cat = Tr.CatTransform([exp, aff], dim=0, lengths=[2, 3])
    assert cat.length == 5 and cat.lengths == [2, 3] and cat.dim == 0 and cat.transforms == [exp, aff]
    assert Tr.CatTransform([exp, aff]).lengths == [1, 1]
    cached = cat.with_cache(1)
    assert cached is not cat and cached.cache_size == 1 and all(t.cache_size == 1 for t in cached.transforms)
    assert cat.with_cache(0) is cat
    x = T(np.linspace(-1, 1, 5))
    y = cached(x)
    assert cached.inv(y) is x  # the cache hands back the very input
    st = Tr.StackTransform([exp, aff], dim=1, cache_size=1)
    assert st.cache_size == 1 and st.with_cache(1) is st and st.with_cache(0).cache_size == 0
    x2 = T(np.ones((3, 2)))
    assert st.inv(st(x2)) is x2
    assert "CatTransform" in D.__all__ and "StackTransform" in Tr.__all__ and D.CatTransform is Tr.CatTransform
    with pytest.raises(AssertionError):
        Tr.CatTransform([exp, 1.0])
    with pytest.raises(AssertionError):
        Tr.CatTransform([exp, aff], lengths=[1, 2, 3])
    with pytest.raises(AssertionError):
        cat(T(np.zeros(4)))  # 4 != sum(lengths)
    with pytest.raises(AssertionError):
        Tr.CatTransform([exp, aff], dim=1, lengths=[1, 1])(T(np.zeros(2)))  # dim out of range
    with pytest.raises(AssertionError):
        Tr.StackTransform([exp, aff])(T(np.zeros((3, 2))))  # 3 slices, 2 transforms
    with pytest.raises(NotImplementedError):
        cat.sign  # noqa: B018  torch has no sign for these either
    # in a TransformedDistribution: log_prob against torch
    base = D.Normal(T(np.zeros(5)), T(np.ones(5)))
    td = D.TransformedDistribution(D.Independent(base, 1), [cat])
    tref = torch.distributions.TransformedDistribution(
        torch.distributions.Independent(torch.distributions.Normal(tt(np.zeros(5)), tt(np.ones(5))), 1),
        [torch.distributions.transforms.CatTransform([torch.distributions.transforms.ExpTransform(),
                                                      torch.distributions.transforms.AffineTransform(1.0, 2.0)],
                                                     dim=0, lengths=[2, 3])])
    v = np.array([0.5, 2.0, -1.0, 0.0, 3.0])
    close(td.log_prob(T(v)), tref.log_prob(tt(v)))


def test_cat_stack_constraints(torch):
    C, TC = constraints, torch.distributions.constraints
    for M, t in ((C, T), (TC, tt)):
        c = M.cat([M.positive, M.real, M.unit_interval], dim=0, lengths=[2, 1, 2])
        assert c.event_dim == 0 and not c.is_discrete and c.lengths == [2, 1, 2]
        close(c.check(t([1.0, -1.0, -5.0, 0.5, 2.0])), np.array([True, False, True, True, False]))
        assert M.cat([M.positive, M.nonnegative_integer]).is_discrete
        assert M.cat([M.positive, M.nonnegative_integer]).lengths == [1, 1]
        assert M.cat([M.real, M.simplex], dim=-1, lengths=[1, 3]).event_dim == 1
        s = M.stack([M.positive, M.real], dim=1)
        assert s.event_dim == 0
        close(s.check(t([[1.0, -1.0], [-1.0, 1.0]])), np.array([[True, True], [False, True]]))
        assert M.stack([M.simplex, M.real_vector], dim=-1).event_dim == 1
        assert M.stack([M.simplex, M.real_vector], dim=-2).event_dim == 2  # the stacked dim joins the event
        assert M.stack([M.simplex, M.real_vector], dim=0).event_dim == 1
        with pytest.raises(AssertionError):
            M.cat([M.positive], dim=1).check(t(np.zeros(5)))  # dim out of range
        with pytest.raises(AssertionError):
            M.cat([M.positive, 3])
    assert "cat" in C.__all__ and "stack" in C.__all__


def test_biject_to_transform_to_cat_stack(torch):
    C, TC = constraints, torch.distributions.constraints
    TD = torch.distributions
    for make in (lambda M: M.cat([M.positive, M.real, M.interval(-1.0, 3.0)], dim=0, lengths=[2, 1, 2]),
                 lambda M: M.stack([M.positive, M.greater_than(1.0), M.unit_interval], dim=-1)):
        x = np.linspace(-2, 2, 5) if make(C).__class__.__name__ == "_Cat" else np.linspace(-2, 2, 12).reshape(4, 3)
        for ours_reg, ref_reg in ((D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)):
            ours, ref = ours_reg(make(C)), ref_reg(make(TC))
            assert type(ours).__name__ == type(ref).__name__
            y, yr = ours(T(x)), ref(tt(x))
            close(y, yr, msg=type(ours).__name__)
            close(ours.log_abs_det_jacobian(T(x), y), ref.log_abs_det_jacobian(tt(x), yr))
            assert bool(make(C).check(y).all())
            close(ours.inv(y), x, rtol=1e-9)
    # a cat of a simplex: only transform_to has a non-bijective softmax, biject_to stick-breaking
    assert isinstance(D.transform_to(C.stack([C.simplex, C.simplex], dim=0)).transforms[0], Tr.SoftmaxTransform)
    assert isinstance(D.biject_to(C.stack([C.simplex, C.simplex], dim=0)).transforms[0], Tr.StickBreakingTransform)
    with pytest.raises(NotImplementedError):
        D.biject_to(C.cat([C.positive, C.lower_cholesky]))  # no bijection onto lower_cholesky, as in torch
    with pytest.raises(NotImplementedError):
        TD.biject_to(TC.cat([TC.positive, TC.lower_cholesky]))
