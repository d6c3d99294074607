"""oar.special against PyTorch 1.13's torch.special (where torch is installed) and against references that
need no torch: high-precision values computed once with mpmath (stored below), Python's math module, NumPy
(np.i0, numpy.polynomial) and closed forms.

Tolerances: 1e-6 relative in float64 and 1e-5 in float32, with a small absolute floor for values that pass
through zero. Two documented exceptions: torch 1.13's bessel_j0/j1/y0/y1 are themselves only accurate to about
9e-7 absolute just above x = 5 (their rational approximations; checked against mpmath, which oar matches to
1e-15), so they are compared with atol 1e-6 in float64; in float32 the oscillating functions at large |x|
(whose phase is rounded to float32), zeta at negative q and values in the denormal range get the absolute
tolerances stated where they are used.
"""
import math
import subprocess
import sys

import numpy as np
import pytest

import oar
import oar.special as S
from torch_ref import import_torch, to_torch, from_torch


F64, F32 = oar.float64, oar.float32
INF, NAN = math.inf, math.nan

GRID = [-INF, -700.0, -50.0, -20.5, -8.0, -5.1, -3.3, -2.0, -1.5, -1.0, -0.7, -0.3, -1e-5, -0.0, 0.0, 1e-5,
        0.3, 0.7, 1.0, 1.5, 1.99, 2.0, 2.01, 2.5, 3.3, 4.9, 5.0, 5.1, 7.5, 8.0, 10.0, 12.5, 19.9, 20.0, 20.1,
        25.0, 50.0, 100.0, 700.0, 1e4, INF, NAN]
PROB = [-0.5, 0.0, 1e-300, 1e-20, 1e-8, 1e-3, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.999, 1 - 1e-8, 1.0, 1.5, NAN]

UNARY = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx",
         "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit",
         "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
         "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "spherical_bessel_j0"]
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
# torch 1.13's own error for these (against mpmath) is about 1e-8 absolute near x = 5
LOOSE_ATOL = {"bessel_j0": 1e-6, "bessel_j1": 1e-6, "bessel_y0": 1e-6, "bessel_y1": 1e-6}
# float32: Bessel phases x - pi/4 and the Airy phase 2/3 |x|^(3/2) are rounded to float32 at large |x|, which
# moves oscillating values by up to ~1e-6 (Airy at x = -700: 1e-5) absolute in either library
LOOSE_ATOL32 = {"bessel_j0": 2e-6, "bessel_j1": 2e-6, "bessel_y0": 2e-6, "bessel_y1": 2e-6, "airy_ai": 3e-5}


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def _np(t):
    return np.array(t.detach().cpu().tolist(), dtype=np.float64)


def _close(got, want, dtype, atol=None, rtol=None, name=""):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if rtol is None:
        rtol = 1e-6 if dtype == F64 else 1e-5
    if atol is None:
        atol = 1e-12 if dtype == F64 else 1e-6
    tiny = 1e-300 if dtype == F64 else 1e-37          # denormals round differently
    np.testing.assert_allclose(got, want, rtol=rtol, atol=max(atol, tiny), equal_nan=True, err_msg=name)


def _tgrid(torch, values, dtype):
    return torch.tensor(values, dtype=torch.float64 if dtype == F64 else torch.float32)


def _grid_for(name):
    return PROB if name in ("ndtri", "logit") else GRID


def test_every_torch_special_function_is_there():
    expected = set(S.__all__)
    assert len(expected) == 56
    for name in expected:
        assert callable(getattr(S, name)), name
    assert S.psi is S.digamma


def test_the_list_is_torch_1_13s(torch):
    names = {n for n in dir(torch.special) if not n.startswith("_")} - {"torch", "Tensor", "common_args",
                                                                         "multi_dim_common"}
    assert names == set(S.__all__)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(torch, name, dtype):
    values = _grid_for(name)
    got = getattr(S, name)(oar.tensor(values, dtype=dtype))
    assert got.dtype == dtype
    want = from_torch(getattr(torch.special, name)(_tgrid(torch, values, dtype)))
    atol = LOOSE_ATOL.get(name) if dtype == F64 else LOOSE_ATOL32.get(name)
    _close(_np(got), want, dtype, atol=atol, name=name)


@pytest.mark.parametrize("name", ["i0", "erfcx", "bessel_j0", "ndtr", "gammaln", "sinc", "entr", "expit"])
def test_integer_inputs_compute_in_the_default_float_dtype(torch, name):
    got = getattr(S, name)(oar.tensor([0, 1, 2, 7], dtype=oar.int64))
    assert got.dtype == oar.get_default_dtype() == F32
    want = from_torch(getattr(torch.special, name)(torch.tensor([0, 1, 2, 7])))
    _close(_np(got), want, F32, name=name)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_torch(torch, name, dtype):
    a = [-1.0, 0.0, 1e-3, 0.5, 1.0, 2.5, 10.0, 30.5, 100.0, 1000.0, INF, NAN]
    x = [-1.0, 0.0, 1e-4, 0.1, 0.5, 1.0, 3.0, 9.0, 11.0, 30.0, 95.0, 105.0, 990.0, 1010.0, 1e4, INF, NAN]
    ga = oar.tensor(a, dtype=dtype).reshape([-1, 1])
    gx = oar.tensor(x, dtype=dtype).reshape([1, -1])
    got = getattr(S, name)(ga, gx)
    want = from_torch(getattr(torch.special, name)(_tgrid(torch, a, dtype).reshape(-1, 1),
                                                   _tgrid(torch, x, dtype).reshape(1, -1)))
    _close(_np(got), want, dtype, name=name)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
def test_zeta_matches_torch(torch, dtype):
    s = [-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 2.5, 7.0, 20.0, 60.0, INF, NAN]
    q = [-12.5, -2.0, -1.5, -0.5, 0.0, 1e-3, 0.5, 1.0, 2.5, 10.0, 1e3, INF, NAN]
    got = S.zeta(oar.tensor(s, dtype=dtype).reshape([-1, 1]), oar.tensor(q, dtype=dtype).reshape([1, -1]))
    want = from_torch(torch.special.zeta(_tgrid(torch, s, dtype).reshape(-1, 1), _tgrid(torch, q, dtype).reshape(1, -1)))
    # float32: for negative q the direct sum cancels terms as large as |q + k|^-s (128 at q + k = -1/2, s = 7),
    # so results there are good to 1e-5 absolute only (in torch too, rounding differently)
    _close(_np(got), want, dtype, atol=None if dtype == F64 else 1e-5, name="zeta")
    # a number on either side
    _close(_np(S.zeta(2.0, oar.tensor([1.0, 2.0], dtype=dtype))),
           from_torch(torch.special.zeta(2.0, _tgrid(torch, [1.0, 2.0], dtype))), dtype)
    _close(_np(S.zeta(oar.tensor([2.0, 3.0], dtype=dtype), 1.0)),
           from_torch(torch.special.zeta(_tgrid(torch, [2.0, 3.0], dtype), 1.0)), dtype)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(torch, name, dtype):
    xs = [-2.0, -1.0, -0.999, -0.5, -0.1, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5, 3.0]
    ns = [-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0, 12.0, 20.0]
    x = oar.tensor(xs, dtype=dtype).reshape([-1, 1])
    n = oar.tensor(ns, dtype=dtype).reshape([1, -1])
    got = getattr(S, name)(x, n)
    assert got.dtype == dtype and not got.requires_grad
    want = from_torch(getattr(torch.special, name)(_tgrid(torch, xs, dtype).reshape(-1, 1),
                                                   _tgrid(torch, ns, dtype).reshape(1, -1)))
    # recurrences of degree 20 and the trigonometric forms round differently; values reach 1e17
    _close(_np(got), want, dtype, rtol=1e-9 * 1e3 if dtype == F64 else 1e-4, atol=1e-9 if dtype == F64 else 1e-4,
           name=name)
    # a Python number as the degree or as x, an integer tensor degree
    _close(_np(getattr(S, name)(x, 3)), from_torch(getattr(torch.special, name)(_tgrid(torch, xs, dtype).reshape(-1, 1), 3)),
           dtype, name=name)
    _close(_np(getattr(S, name)(0.5, oar.tensor([0, 2, 4]))),
           from_torch(getattr(torch.special, name)(0.5, torch.tensor([0, 2, 4]))), F32, name=name)


@pytest.mark.parametrize("dtype", [F64, F32], ids=["float64", "float32"])
def test_binary_and_reductions_match_torch(torch, dtype):
    xv = [-2.0, -0.0, 0.0, 0.5, 3.0, INF, NAN]
    yv = [-1.0, -0.5, 0.0, 1e-300, 2.0, INF, NAN]
    x = oar.tensor(xv, dtype=dtype).reshape([-1, 1])
    y = oar.tensor(yv, dtype=dtype).reshape([1, -1])
    tx, ty = _tgrid(torch, xv, dtype).reshape(-1, 1), _tgrid(torch, yv, dtype).reshape(1, -1)
    for name in ("xlogy", "xlog1py"):
        _close(_np(getattr(S, name)(x, y)), from_torch(getattr(torch.special, name)(tx, ty)), dtype, name=name)
        _close(_np(getattr(S, name)(2.0, y)), from_torch(getattr(torch.special, name)(2.0, ty)), dtype, name=name)
        _close(_np(getattr(S, name)(x, 3.0)), from_torch(getattr(torch.special, name)(tx, 3.0)), dtype, name=name)
    m = [[0.5, -1.0, 3.0], [100.0, 2.0, -50.0]]
    tm, om = _tgrid(torch, m, dtype), oar.tensor(m, dtype=dtype)
    # float32 log_softmax: within one float32 ulp of the inputs (100 here: 7.6e-6)
    for dim in (0, 1, -1):
        _close(_np(S.softmax(om, dim)), from_torch(torch.special.softmax(tm, dim)), dtype)
        _close(_np(S.log_softmax(om, dim)), from_torch(torch.special.log_softmax(tm, dim)), dtype,
               atol=None if dtype == F64 else 8e-6)
        _close(_np(S.logsumexp(om, dim)), from_torch(torch.special.logsumexp(tm, dim)), dtype)
    _close(_np(S.logsumexp(om, [0, 1], keepdim=True)), from_torch(torch.special.logsumexp(tm, [0, 1], keepdim=True)), dtype)
    _close(_np(S.softmax(om, 1, dtype=F64)), from_torch(torch.special.softmax(tm, 1, dtype=torch.float64)), F64)
    assert S.log_softmax(om, 0, dtype=F64).dtype == F64
    g = oar.tensor([1.2, 3.5, 10.0], dtype=dtype)
    for p in (1, 2, 5):
        _close(_np(S.multigammaln(g, p)), from_torch(torch.special.multigammaln(_tgrid(torch, [1.2, 3.5, 10.0], dtype), p)),
               dtype)
    for n in (0, 1, 3):
        _close(_np(S.polygamma(n, g)), from_torch(torch.special.polygamma(n, _tgrid(torch, [1.2, 3.5, 10.0], dtype))), dtype)
    p = oar.tensor([0.1, 0.5, 0.99], dtype=dtype)
    _close(_np(S.logit(p, eps=0.2)), from_torch(torch.special.logit(_tgrid(torch, [0.1, 0.5, 0.99], dtype), eps=0.2)), dtype)
    r = [2.567, -1.5, 0.5, 2.5]
    _close(_np(S.round(oar.tensor(r, dtype=dtype), decimals=2)),
           from_torch(torch.special.round(_tgrid(torch, r, dtype), decimals=2)), dtype)


# ---- references that need no torch ----
MPMATH = {
    'i0': [(0.1, 1.0025015629340956), (1.5, 1.646723189772891), (7.0, 168.5939085102897), (30.0, 781672297823.9775)],
    'i1': [(0.1, 0.050062526047092694), (1.5, 0.9816664285779075), (7.0, 156.03909286995545), (30.0, 768532038938.957)],
    'i0e': [(0.1, 0.9071009257823011), (7.0, 0.15373774467288126), (30.0, 0.0731459464822373), (500.0, 0.017845706500153168)],
    'i1e': [(0.1, 0.045298446808809324), (7.0, 0.14228923470959867), (30.0, 0.07191633059864755), (500.0, 0.017827851852898056)],
    'modified_bessel_k0': [(0.1, 2.4270690247020164), (1.5, 0.21380556264752573), (7.0, 0.0004247957418692318), (30.0, 2.1324774964630563e-14)],
    'modified_bessel_k1': [(0.1, 9.853844780870606), (1.5, 0.2773878004568438), (7.0, 0.00045418248688489695), (30.0, 2.1677320018915495e-14)],
    'scaled_modified_bessel_k0': [(0.1, 2.6823261022628944), (1.5, 0.9582100532948965), (7.0, 0.4658450960930159), (800.0, 0.044304427486646016)],
    'scaled_modified_bessel_k1': [(0.1, 10.890182683049696), (1.5, 1.243165873552553), (7.0, 0.49807157509547656), (800.0, 0.04433210911141211)],
    'bessel_j0': [(0.1, 0.99750156206604), (1.5, 0.5118276717359181), (7.0, 0.3000792705195556), (30.0, -0.08636798358104021), (1000.0, 0.024786686152420176)],
    'bessel_j1': [(0.1, 0.049937526036242), (1.5, 0.5579365079100996), (7.0, -0.004682823482345833), (30.0, -0.11875106261662294), (1000.0, 0.004728311907089524)],
    'bessel_y0': [(0.1, -1.5342386513503667), (1.5, 0.38244892379775886), (7.0, -0.025949743967209265), (30.0, -0.11729573168666403), (1000.0, 0.0047159179776228135)],
    'bessel_y1': [(0.1, -6.4589510947020266), (1.5, -0.4123086269739113), (7.0, -0.30266723702418485), (30.0, 0.08442557066174723), (1000.0, -0.024784331292351778)],
    'airy_ai': [(-30.0, -0.08796818845684216), (-7.5, 0.3217757163806479), (-2.5, -0.11232506769296609), (-1.0, 0.5355608832923521), (0.0, 0.3550280538878172), (1.0, 0.13529241631288141), (2.5, 0.01572592338047049), (7.5, 1.9172560675134309e-07), (30.0, 3.2082175915504954e-49)],
    'erfcx': [(-3.0, 16205.988853999586), (0.5, 0.6156903441929259), (5.0, 0.11070463773306863), (30.0, 0.01879588886141675), (10000.0, 5.641895807268084e-05)],
    'log_ndtr': [(-40.0, -804.6084420137538), (-5.0, -15.064998393988725), (0.0, -0.6931471805599453), (3.0, -0.0013508099647481938), (10.0, -7.619853024160525e-24)],
    'ndtri': [(1e-300, -37.0470962993612), (1e-12, -7.034483825301132), (0.025, -1.9599639845400543), (0.5, 0.0), (0.975, 1.9599639845400538)],
}
GAMMAINC = [(0.5, 0.1, 0.345279153981423), (3.0, 2.0, 0.32332358381693654), (10.0, 15.0, 0.9301463393005902), (100.0, 90.0, 0.15822098918643016), (1000.0, 1010.0, 0.6276789447369947)]
ZETA = [(1.5, 1.0, 2.612375348685488), (3.0, 0.5, 8.41439832211716), (2.5, 10.0, 0.02272869919453454), (7.0, 2.0, 0.008349277381922827), (2.0, -1.5, 9.379246644989124), (30.0, 1.0, 1.0000000009313275)]

GAMMAINC_X = [0.1, 2.0, 15.0, 90.0, 1010.0]


@pytest.mark.parametrize("name", sorted(MPMATH))
def test_against_high_precision_values(name):
    xs, want = zip(*MPMATH[name])
    got = _np(getattr(S, name)(oar.tensor(list(xs), dtype=F64)))
    _close(got, want, F64, rtol=1e-13, atol=1e-15, name=name)
    # float32: at the points float32 represents and where the value fits; the oscillating functions' phase
    # (x - pi/4, 2/3 |x|^(3/2)) is rounded to float32, good to ~3e-6 absolute at x = 30
    got32 = _np(getattr(S, name)(oar.tensor(list(xs), dtype=F32)))
    keep = (np.abs(np.asarray(want)) < 3e38) & (np.asarray(xs, dtype=np.float32).astype(np.float64) == xs)
    atol = 3e-6 if name in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1") else 0.0
    _close(got32[keep], np.asarray(want)[keep], F32, rtol=2e-6, atol=atol, name=name)


def test_incomplete_gamma_and_zeta_against_high_precision_values():
    a, x, want = map(list, zip(*GAMMAINC))
    got = S.gammainc(oar.tensor(a, dtype=F64), oar.tensor(x, dtype=F64))
    _close(_np(got), want, F64, rtol=1e-12, name="gammainc")
    _close(_np(S.gammaincc(oar.tensor(a, dtype=F64), oar.tensor(x, dtype=F64))), 1 - np.array(want), F64, rtol=1e-11)
    s, q, want = map(list, zip(*ZETA))
    _close(_np(S.zeta(oar.tensor(s, dtype=F64), oar.tensor(q, dtype=F64))), want, F64, rtol=1e-13, name="zeta")


def test_closed_forms():
    x = oar.tensor([0.0, 0.1, 0.5, 1.0, 2.0, 7.0], dtype=F64)
    xs = _np(x)
    # gammainc(1, x) = 1 - e^-x, gammainc(1/2, x) = erf(sqrt(x))
    _close(_np(S.gammainc(oar.tensor(1.0, dtype=F64), x)), [-math.expm1(-v) for v in xs], F64, rtol=1e-14)
    _close(_np(S.gammainc(0.5, x)), [math.erf(math.sqrt(v)) for v in xs], F64, rtol=1e-13)
    _close(_np(S.gammaincc(0.5, x)), [math.erfc(math.sqrt(v)) for v in xs], F64, rtol=1e-12)
    # zeta(2) = pi^2/6, zeta(4) = pi^4/90, zeta(s, 1) - zeta(s, 2) = 1
    z = S.zeta(oar.tensor([2.0, 4.0], dtype=F64), 1.0)
    _close(_np(z), [math.pi ** 2 / 6, math.pi ** 4 / 90], F64, rtol=1e-15)
    s = oar.tensor([1.5, 3.0, 9.5], dtype=F64)
    _close(_np(S.zeta(s, 1.0) - S.zeta(s, 2.0)), [1.0, 1.0, 1.0], F64, rtol=1e-14)
    # J0 and J1 vanish at their zeros; Y0's first zero
    j0_zeros = [2.404825557695773, 5.520078110286311, 8.653727912911013]
    assert np.abs(_np(S.bessel_j0(oar.tensor(j0_zeros, dtype=F64)))).max() < 1e-15
    assert abs(_np(S.bessel_j1(oar.tensor([3.8317059702075125], dtype=F64)))[0]) < 1e-15
    assert abs(_np(S.bessel_y0(oar.tensor([0.8935769662791675], dtype=F64)))[0]) < 1e-15
    # sinc(0) = 1, spherical j0(0) = 1, Ai(0), i0(0) = 1, i1(0) = 0, erfcx(0) = 1, ndtr(0) = 1/2, ndtri(1/2) = 0
    zero = oar.tensor([0.0], dtype=F64)
    for name, v in [("sinc", 1.0), ("spherical_bessel_j0", 1.0), ("i0", 1.0), ("i1", 0.0), ("erfcx", 1.0),
                    ("ndtr", 0.5), ("airy_ai", 1 / (3 ** (2 / 3) * math.gamma(2 / 3))), ("entr", 0.0)]:
        assert _np(getattr(S, name)(zero))[0] == pytest.approx(v, rel=1e-15, abs=1e-300), name
    assert _np(S.ndtri(oar.tensor([0.5], dtype=F64)))[0] == 0.0
    # spherical j0 is sin(x)/x, entr is -x log x
    _close(_np(S.spherical_bessel_j0(x[1:])), [math.sin(v) / v for v in xs[1:]], F64, rtol=1e-15)
    _close(_np(S.entr(x[1:])), [-v * math.log(v) for v in xs[1:]], F64, rtol=1e-15)
    # I0 is NumPy's np.i0; K1(x) I0(x) + K0(x) I1(x) = 1/x (the Wronskian)
    y = oar.tensor([0.05, 0.9, 2.0, 3.7, 15.0, 22.0, 40.0], dtype=F64)
    ys = _np(y)
    _close(_np(S.i0(y)), np.i0(ys), F64, rtol=1e-13)
    w = S.modified_bessel_k1(y) * S.modified_bessel_i0(y) + S.modified_bessel_k0(y) * S.modified_bessel_i1(y)
    _close(_np(w), 1 / ys, F64, rtol=1e-13)
    # J1 Y0 - J0 Y1 = 2/(pi x)
    w = S.bessel_j1(y) * S.bessel_y0(y) - S.bessel_j0(y) * S.bessel_y1(y)
    _close(_np(w), 2 / (math.pi * ys), F64, rtol=1e-12)


def test_against_python_math():
    v = [-6.0, -2.5, -0.3, 0.0, 0.4, 1.0, 3.2, 12.0]
    t = oar.tensor(v, dtype=F64)
    _close(_np(S.erf(t)), [math.erf(a) for a in v], F64, rtol=1e-15)
    _close(_np(S.erfc(t)), [math.erfc(a) for a in v], F64, rtol=1e-14)
    _close(_np(S.erfcx(t)), [math.exp(a * a) * math.erfc(a) for a in v], F64, rtol=1e-13)
    _close(_np(S.ndtr(t)), [0.5 * math.erfc(-a / math.sqrt(2)) for a in v], F64, rtol=1e-15)
    _close(_np(S.log_ndtr(t)), [math.log(0.5 * math.erfc(-a / math.sqrt(2))) for a in v], F64, rtol=1e-13)
    pos = [a for a in v if a > 0]
    _close(_np(S.gammaln(oar.tensor(pos, dtype=F64))), [math.lgamma(a) for a in pos], F64, rtol=1e-14)
    _close(_np(S.multigammaln(oar.tensor(pos, dtype=F64) + 2, 3)),
           [3 * math.log(math.pi) / 2 + sum(math.lgamma(a + 2 - j / 2) for j in range(3)) for a in pos], F64, rtol=1e-14)
    _close(_np(S.expit(t)), [1 / (1 + math.exp(-a)) for a in v], F64, rtol=1e-15)
    _close(_np(S.exp2(t)), [2.0 ** a for a in v], F64, rtol=1e-15)
    _close(_np(S.xlog1py(t, oar.tensor(2.0, dtype=F64))), [a * math.log1p(2.0) for a in v], F64, rtol=1e-15)
    # ndtri inverts ndtr, from the far tails to the middle
    p = oar.tensor([1e-300, 1e-100, 1e-20, 1e-5, 0.2, 0.5, 0.8, 1 - 1e-10], dtype=F64)
    _close(_np(S.ndtr(S.ndtri(p))), _np(p), F64, rtol=1e-13)


@pytest.mark.parametrize("name,basis", [
    ("chebyshev_polynomial_t", "chebyshev"), ("hermite_polynomial_h", "hermite"),
    ("hermite_polynomial_he", "hermite_e"), ("laguerre_polynomial_l", "laguerre"),
    ("legendre_polynomial_p", "legendre")])
def test_polynomials_against_numpy(name, basis):
    mod = getattr(np.polynomial, basis)
    xs = np.array([-2.0, -0.7, 0.0, 0.3, 0.95, 1.0, 2.5])
    for n in range(0, 13):
        c = np.zeros(n + 1)
        c[n] = 1
        want = getattr(mod, {"chebyshev": "chebval", "hermite": "hermval", "hermite_e": "hermeval",
                             "laguerre": "lagval", "legendre": "legval"}[basis])(xs, c)
        got = _np(getattr(S, name)(oar.tensor(xs.tolist(), dtype=F64), n))
        _close(got, want, F64, rtol=1e-12, atol=1e-12, name=f"{name} n={n}")


def test_chebyshev_kinds_against_their_definitions():
    t = np.array([0.3, 1.1, 2.0, 2.9])
    x = oar.tensor(np.cos(t).tolist(), dtype=F64)
    for n in (0, 1, 4, 7, 10, 15):
        _close(_np(S.chebyshev_polynomial_u(x, n)), np.sin((n + 1) * t) / np.sin(t), F64, rtol=1e-10, atol=1e-12)
        _close(_np(S.chebyshev_polynomial_v(x, n)), np.cos((n + 0.5) * t) / np.cos(t / 2), F64, rtol=1e-10, atol=1e-12)
        _close(_np(S.chebyshev_polynomial_w(x, n)), np.sin((n + 0.5) * t) / np.sin(t / 2), F64, rtol=1e-10, atol=1e-12)
        # the shifted forms are the plain ones at 2x - 1
        xh = (x + 1.0) * 0.5
        for kind in "tuvw":
            _close(_np(getattr(S, f"shifted_chebyshev_polynomial_{kind}")(xh, n)),
                   _np(getattr(S, f"chebyshev_polynomial_{kind}")(x, n)), F64, rtol=1e-9, atol=1e-12)
    assert _np(S.chebyshev_polynomial_t(x, -1)).tolist() == [0.0] * 4


# ---- gradients ----
def _leaf(values):
    return oar.tensor(values, dtype=F64).requires_grad_()


DIFFERENTIABLE = {
    "i0": [-3.0, -0.5, 0.7, 2.5, 12.0, 30.0], "i1": [-3.0, -0.5, 0.7, 2.5, 12.0, 30.0],
    "i0e": [-3.0, -0.5, 0.7, 2.5, 12.0, 30.0], "i1e": [-3.0, -0.5, 0.7, 2.5, 12.0, 30.0],
    "erfcx": [-2.0, -0.3, 0.4, 3.0, 9.0, 30.0], "ndtri": [1e-6, 0.02, 0.3, 0.5, 0.8, 0.999],
    "log_ndtr": [-30.0, -4.0, -0.9, 0.0, 1.5, 6.0], "ndtr": [-3.0, -0.2, 0.5, 2.0],
    "entr": [0.1, 0.5, 1.0, 3.0], "sinc": [-2.3, -0.4, 0.3, 1.7], "logit": [0.1, 0.4, 0.9],
    "expit": [-3.0, 0.0, 2.0], "erf": [-1.0, 0.3, 2.0], "erfc": [-1.0, 0.3, 2.0], "erfinv": [-0.9, 0.1, 0.7],
    "exp2": [-1.0, 0.5, 3.0], "expm1": [-1.0, 0.5, 3.0], "log1p": [-0.5, 0.5, 3.0], "gammaln": [0.3, 2.5, 7.0],
    "digamma": [0.3, 2.5, 7.0],
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradcheck(name):
    x = _leaf(DIFFERENTIABLE[name])
    assert oar.autograd.gradcheck(getattr(S, name), (x,), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_gradcheck_binary_and_others():
    x, y = _leaf([0.25, 0.5, 2.0, -1.5]), _leaf([0.3, 1.5, 4.0, 0.7])
    assert oar.autograd.gradcheck(S.xlogy, (x, y), eps=1e-6, atol=1e-5)
    assert oar.autograd.gradcheck(S.xlog1py, (x, y), eps=1e-6, atol=1e-5)
    # at input == 0 the gradient in input is 0, as torch's (the function is 0 there whatever other is)
    z = _leaf([0.0])
    S.xlog1py(z, oar.tensor([2.0], dtype=F64)).sum().backward()
    assert _np(z.grad).tolist() == [0.0]
    a = oar.tensor([0.5, 2.0, 10.0, 3.0], dtype=F64)
    xs = _leaf([0.3, 1.5, 12.0, 0.7])
    assert oar.autograd.gradcheck(lambda v: S.gammainc(a, v), (xs,), eps=1e-6, atol=1e-5)
    assert oar.autograd.gradcheck(lambda v: S.gammaincc(a, v), (xs,), eps=1e-6, atol=1e-5)
    s = oar.tensor([2.0, 3.5, 1.5, 6.0], dtype=F64)
    assert oar.autograd.gradcheck(lambda v: S.zeta(s, v), (xs,), eps=1e-6, atol=1e-5)
    g = _leaf([2.3, 4.0])
    assert oar.autograd.gradcheck(lambda v: S.multigammaln(v, 3), (g,), eps=1e-6, atol=1e-5)
    assert oar.autograd.gradcheck(lambda v: S.polygamma(1, v), (g,), eps=1e-6, atol=1e-5)
    m = _leaf([[0.5, -1.0, 3.0], [1.0, 2.0, -0.5]])
    assert oar.autograd.gradcheck(lambda v: S.logsumexp(v, 1), (m,), eps=1e-6, atol=1e-5)
    assert oar.autograd.gradcheck(lambda v: S.softmax(v, 1), (m,), eps=1e-6, atol=1e-5)
    assert oar.autograd.gradcheck(lambda v: S.log_softmax(v, 0), (m,), eps=1e-6, atol=1e-5)


def test_gradients_match_torch(torch):
    vals = [-2.0, -0.4, 0.6, 3.0, 25.0]
    for name in ("i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr"):
        x = _leaf(vals)
        getattr(S, name)(x).sum().backward()
        tx = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
        getattr(torch.special, name)(tx).sum().backward()
        _close(_np(x.grad), from_torch(tx.grad), F64, name=name)
    p = [1e-8, 0.1, 0.5, 0.95]
    x = _leaf(p)
    S.ndtri(x).sum().backward()
    tx = torch.tensor(p, dtype=torch.float64, requires_grad=True)
    torch.special.ndtri(tx).sum().backward()
    _close(_np(x.grad), from_torch(tx.grad), F64, rtol=1e-6, name="ndtri")


def test_non_differentiable_inputs_are_refused_as_torch_does():
    a, x = _leaf([1.5]), _leaf([0.5])
    with pytest.raises(NotImplementedError, match="igamma"):
        S.gammainc(a, x).sum().backward()
    s = _leaf([2.0])
    with pytest.raises(NotImplementedError, match="zeta"):
        S.zeta(s, x).sum().backward()


@pytest.mark.parametrize("name", ["airy_ai", "bessel_j0", "bessel_y1", "modified_bessel_k0", "modified_bessel_i1",
                                  "scaled_modified_bessel_k1", "spherical_bessel_j0"])
def test_functions_torch_does_not_differentiate_return_results_without_grad(name):
    x = _leaf([0.5, 3.0])
    y = getattr(S, name)(x)
    assert not y.requires_grad
    assert not S.hermite_polynomial_h(x, 3).requires_grad


# ---- API ----
def test_out_argument():
    x = oar.tensor([0.5, 2.0], dtype=F64)
    out = oar.empty([2], dtype=F64)
    r = S.bessel_j0(x, out=out)
    assert r is out
    _close(_np(out), _np(S.bessel_j0(x)), F64)
    out = oar.empty([2], dtype=F64)
    assert S.i0e(x, out=out) is out and S.zeta(2.0, x, out=out) is out
    _close(_np(out), _np(S.zeta(2.0, x)), F64)


def test_input_must_be_a_tensor():
    with pytest.raises(TypeError):
        S.bessel_j0(2.0)
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        S.multigammaln(oar.tensor([3.0]), 0)


def test_top_level_and_tensor_counterparts(torch):
    x = oar.tensor([0.5, 3.0], dtype=F64)
    tx = torch.tensor([0.5, 3.0], dtype=torch.float64)
    _close(_np(oar.i0(x)), from_torch(torch.i0(tx)), F64)
    _close(_np(x.i0()), from_torch(tx.i0()), F64)
    _close(_np(oar.igamma(x, x + 1)), from_torch(torch.igamma(tx, tx + 1)), F64)
    _close(_np(x.igammac(x + 1)), from_torch(tx.igammac(tx + 1)), F64)
    _close(_np((x + 2).mvlgamma(2)), from_torch((tx + 2).mvlgamma(2)), F64)
    _close(_np(oar.mvlgamma(x + 2, 2)), from_torch(torch.mvlgamma(tx + 2, 2)), F64)
    y = x.clone()
    y.i0_()
    _close(_np(y), from_torch(torch.i0(tx)), F64)


def test_float32_stays_float32_and_shapes_broadcast():
    x = oar.tensor([[0.5], [2.5]], dtype=F32)
    assert S.bessel_y0(x).dtype == F32 and S.bessel_y0(x).shape == oar.Size([2, 1])
    assert S.gammainc(x, oar.tensor([1.0, 2.0, 3.0], dtype=F32)).shape == oar.Size([2, 3])
    assert S.zeta(oar.tensor(2.0, dtype=F32), x).dtype == F32
    assert S.airy_ai(oar.tensor(1.0, dtype=F32)).shape == oar.Size([])
    assert S.i0(oar.tensor([], dtype=F32)).shape == oar.Size([0])


def test_torch_special_under_compat():
    code = ("import oar.compat; oar.compat.enable(); import torch, torch.special, oar; "
            "from torch.special import zeta, bessel_j0; "
            "assert torch.special is oar.special and zeta is oar.special.zeta; "
            "print(float(torch.special.i0(torch.tensor(0.0))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1.0"
