"""Bessel, modified Bessel and Airy functions as composites of elementwise oar ops.

Every function is written from the textbook representations (Abramowitz & Stegun ch. 9-10, DLMF ch. 9-10),
split by argument range so that each piece converges to working precision with a fixed amount of work:

- small arguments (|x| <= 2): the power series (Horner in y = x^2/4, 14 terms), with the logarithmic terms
  of Y_n and K_n (DLMF 10.8.1, 10.31.1);
- I_n for 2 < |x| <= 20: the trapezoid rule on I_n(x) = (1/pi) int_0^pi e^{x cos t} cos(nt) dt, whose
  periodic integrand makes it converge geometrically (29 nodes); above 20 the asymptotic series
  e^x / sqrt(2 pi x) sum (-1)^k a_k(n) / x^k (24 terms);
- J_n, Y_n and K_n for x > 2: Hankel's integrals, from which his asymptotic expansions follow (Watson, §7.2),
      H1_nu(x) = sqrt(2/(pi x)) e^{i(x - nu pi/2 - pi/4)} / Gamma(nu + 1/2) int_0^inf e^{-u} u^{nu-1/2} (1 + iu/(2x))^{nu-1/2} du,
      K_nu(x)  = sqrt(pi/(2x)) e^{-x} / Gamma(nu + 1/2) int_0^inf e^{-u} u^{nu-1/2} (1 + u/(2x))^{nu-1/2} du,
  after u = s^2 (or s^6 for the Airy function's order 1/3) an integral of e^{-s^2} times a function analytic
  in a strip, on which the trapezoid rule converges like exp(-2 pi d / h): 34 nodes give full double
  precision for every x > 2 (J_n = Re H1_n, Y_n = Im H1_n);
- Ai: the Maclaurin series for |x| <= 2, Ai(x) = sqrt(x/3) K_{1/3}(zeta) / pi above and
  Ai(-x) = sqrt(x)/2 (J_{1/3}(zeta) - Y_{1/3}(zeta)/sqrt 3) below, zeta = 2/3 x^{3/2} (DLMF 9.6).

All work is done in the input's dtype on its device; quadratures add a trailing node axis (one broadcast op
per step). Pieces are selected with where() from clamped arguments, so no branch overflows.
"""
import math

from .._ops import ops
from ._common import (_D, const, floating, horner, no_grad_function, quadrature, unary_function, where)

_EULER = 0.57721566490153286061


def _big(x):
    """A finite upper clamp for x's dtype (the branch using it is not selected beyond it)."""
    return 1e300 if x.dtype == _D.float64 else 1e30
_TERMS = 14


def _series_coeffs(fn):
    """Coefficients fn(k) for k = TERMS-1 .. 0 (Horner order)."""
    return [fn(k) for k in reversed(range(_TERMS))]


def _harmonic(k):
    return sum(1.0 / j for j in range(1, k + 1))


_FACT = [math.factorial(k) for k in range(_TERMS + 2)]
# sum y^k / (k!)^2 and sum y^k / (k! (k+1)!): I0 and I1 / (x/2); alternate signs give J0, J1
_C0 = _series_coeffs(lambda k: 1.0 / _FACT[k] ** 2)
_C1 = _series_coeffs(lambda k: 1.0 / (_FACT[k] * _FACT[k + 1]))
_C0_ALT = _series_coeffs(lambda k: (-1.0) ** k / _FACT[k] ** 2)
_C1_ALT = _series_coeffs(lambda k: (-1.0) ** k / (_FACT[k] * _FACT[k + 1]))
# the logarithmic solutions' second series: sum H_k y^k / (k!)^2 and sum (psi(k+1) + psi(k+2)) y^k / (k! (k+1)!)
_H0 = _series_coeffs(lambda k: _harmonic(k) / _FACT[k] ** 2)
_H1 = _series_coeffs(lambda k: (_harmonic(k) + _harmonic(k + 1) - 2 * _EULER) / (_FACT[k] * _FACT[k + 1]))
_H0_ALT = _series_coeffs(lambda k: (-1.0) ** k * _harmonic(k) / _FACT[k] ** 2)
_H1_ALT = _series_coeffs(lambda k: (-1.0) ** k * (_harmonic(k) + _harmonic(k + 1) - 2 * _EULER)
                         / (_FACT[k] * _FACT[k + 1]))

_SMALL = 2.0     # series below, integrals above
_I_ASYMPTOTIC = 20.0


def _asymptotic_coeffs(n, terms=24):
    """a_k(n) = prod_{j<=k} (4n^2 - (2j-1)^2) / (k! 8^k), highest power first."""
    c = [1.0]
    for k in range(1, terms):
        c.append(c[-1] * (4 * n * n - (2 * k - 1) ** 2) / (8.0 * k))
    return c


_A0, _A1 = _asymptotic_coeffs(0), _asymptotic_coeffs(1)
_I_ASYM = [[(-1.0) ** k * c for k, c in enumerate(a)][::-1] for a in (_A0, _A1)]

# trapezoid nodes on [0, pi] for the periodic I_n integral (scaled by 1/pi)
_M = 28
_THETA = [j * math.pi / _M for j in range(_M + 1)]
_THETA_W = [(0.5 if j in (0, _M) else 1.0) / _M for j in range(_M + 1)]
# trapezoid nodes on the half line for the Hankel integrals in s (integrand even: weight h at 0, 2h after)
_HS = 0.2
_S = [j * _HS for j in range(34)]
_S_W = [_HS if j == 0 else 2 * _HS for j in range(34)]


def _scaled_i(a, n):
    """e^{-a} I_n(a) for a >= 0."""
    small = ops.minimum(a, const(_SMALL, a))
    y = small * small * 0.25
    series = horner(y, _C0 if n == 0 else _C1) * (1.0 if n == 0 else small * 0.5) * ops.exp(-small)
    mid = ops.clamp(a, min=_SMALL, max=_I_ASYMPTOTIC)
    trap = quadrature(mid, lambda x, t: ops.exp(x * (ops.cos(t) - 1.0)) * (ops.cos(t * float(n)) if n else 1.0),
                      _THETA, _THETA_W)
    big = ops.maximum(a, const(_I_ASYMPTOTIC, a))
    asym = horner(1.0 / big, _I_ASYM[n]) / ops.sqrt(big * (2 * math.pi))
    return where(a <= _SMALL, series, where(a <= _I_ASYMPTOTIC, trap, asym))


def _i_fwd(n, scaled):
    def fwd(x):
        a = ops.abs(x)
        v = _scaled_i(a, n)
        if not scaled:
            v = v * ops.exp(a)
        if n == 1:
            v = where(x < 0, -v, v)
        return where(x != x, x, v)
    return fwd


def _i1_over_x(x, y):
    """I1(x)/x, or its scaled form over x, with the limit 1/2 at 0."""
    return where(x == 0, 0.5, y / where(x == 0, 1.0, x))


i0 = unary_function("i0", _i_fwd(0, False), lambda x, y: i1(x))
i1 = unary_function("i1", _i_fwd(1, False), lambda x, y: i0(x) - _i1_over_x(x, y))
i0e = unary_function("i0e", _i_fwd(0, True), lambda x, y: i1e(x) - ops.sign(x) * y)
i1e = unary_function("i1e", _i_fwd(1, True),
                     lambda x, y: i0e(x) - ops.sign(x) * y - _i1_over_x(x, y))


@no_grad_function
def modified_bessel_i0(input):
    return _i_fwd(0, False)(floating(input, "modified_bessel_i0"))


@no_grad_function
def modified_bessel_i1(input):
    return _i_fwd(1, False)(floating(input, "modified_bessel_i1"))


# ---- K_n ----
def _hankel_weights(nu):
    return [w / math.gamma(nu + 0.5) for w in _S_W]


def _k_scaled(x, n):
    """e^x K_n(x) for x > 0."""
    small = ops.minimum(x, const(_SMALL, x))
    y = small * small * 0.25
    log_half = ops.log(small * 0.5)
    if n == 0:
        series = horner(y, _H0) - (log_half + _EULER) * horner(y, _C0)
    else:
        half = small * 0.5
        series = 1.0 / small + log_half * half * horner(y, _C1) - small * 0.25 * horner(y, _H1)
    series = series * ops.exp(small)
    big = ops.maximum(x, const(_SMALL, x))
    if n == 0:
        def f(z, s):
            return ops.exp(-s * s) * ops.rsqrt(1.0 + s * s / (2.0 * z))
    else:
        def f(z, s):
            return ops.exp(-s * s) * (s * s) * ops.sqrt(1.0 + s * s / (2.0 * z))
    integral = quadrature(big, f, _S, _hankel_weights(n)) * ops.sqrt(math.pi / (2.0 * big))
    return where(x <= _SMALL, series, integral)


def _k(input, n, scaled, name):
    x = floating(input, name)
    positive = where(x > 0, x, 1.0)
    v = _k_scaled(positive, n)
    if not scaled:
        v = v * ops.exp(-positive)
    v = where(x == 0, math.inf, v)
    v = where(x == math.inf, 0.0, v)
    return where(x < 0, math.nan, where(x != x, x, v))


@no_grad_function
def modified_bessel_k0(input):
    return _k(input, 0, False, "modified_bessel_k0")


@no_grad_function
def modified_bessel_k1(input):
    return _k(input, 1, False, "modified_bessel_k1")


@no_grad_function
def scaled_modified_bessel_k0(input):
    return _k(input, 0, True, "scaled_modified_bessel_k0")


@no_grad_function
def scaled_modified_bessel_k1(input):
    return _k(input, 1, True, "scaled_modified_bessel_k1")


# ---- J_n, Y_n ----
def _hankel(x, nu, weight_scale=1.0):
    """(P, Q) with H1_nu(x) = sqrt(2/(pi x)) e^{i chi} (P - iQ)/Gamma(nu+1/2), for x > 0 (u = s^2 form)."""
    e = nu - 0.5

    def modulus(z, s):
        a = s * s / (2.0 * z)
        base = ops.exp(-s * s) * ((s * s) if nu else 1.0)
        return base * ops.pow(1.0 + a * a, const(e / 2.0, a)), ops.atan(a) * (-e)
    w = [v * weight_scale for v in _hankel_weights(nu)]
    p = quadrature(x, lambda z, s: modulus(z, s)[0] * ops.cos(modulus(z, s)[1]), _S, w)
    q = quadrature(x, lambda z, s: modulus(z, s)[0] * ops.sin(modulus(z, s)[1]), _S, w)
    return p, q


def _cos_sin_shifted(x, shift):
    """cos(x - shift), sin(x - shift) from cos x and sin x (accurate for large x)."""
    c, s = ops.cos(x), ops.sin(x)
    cs, ss = math.cos(shift), math.sin(shift)
    return c * cs + s * ss, s * cs - c * ss


def _jy_large(x, n):
    """(J_n(x), Y_n(x)) for x > 2."""
    p, q = _hankel(x, n)
    c, s = _cos_sin_shifted(x, n * math.pi / 2 + math.pi / 4)
    amp = ops.sqrt(2.0 / (math.pi * x))
    return amp * (p * c + q * s), amp * (p * s - q * c)


def _j(input, n, name):
    x = floating(input, name)
    a = ops.abs(x)
    small = ops.minimum(a, const(_SMALL, a))
    y = small * small * 0.25
    series = horner(y, _C0_ALT) if n == 0 else horner(y, _C1_ALT) * small * 0.5
    big = ops.clamp(a, min=_SMALL, max=_big(x))
    large, _ = _jy_large(big, n)
    v = where(a <= _SMALL, series, large)
    v = where(a == math.inf, math.nan, v)           # torch 1.13's value at +-inf
    if n == 1:
        v = where(x < 0, -v, v)
    return where(x != x, x, v)


def _y(input, n, name):
    x = floating(input, name)
    pos = where(x > 0, x, 1.0)
    small = ops.minimum(pos, const(_SMALL, x))
    y = small * small * 0.25
    log_half = ops.log(small * 0.5)
    if n == 0:
        series = (2 / math.pi) * ((log_half + _EULER) * horner(y, _C0_ALT) - horner(y, _H0_ALT))
    else:
        half = small * 0.5
        series = (-2 / math.pi) / small + (2 / math.pi) * log_half * half * horner(y, _C1_ALT) \
            - small * (0.5 / math.pi) * horner(y, _H1_ALT)
    big = ops.clamp(pos, min=_SMALL, max=_big(x))
    _, large = _jy_large(big, n)
    v = where(pos <= _SMALL, series, large)
    v = where(x == math.inf, math.nan, where(x == 0, -math.inf, v))  # nan at inf as torch 1.13
    return where(x < 0, math.nan, where(x != x, x, v))


@no_grad_function
def bessel_j0(input):
    return _j(input, 0, "bessel_j0")


@no_grad_function
def bessel_j1(input):
    return _j(input, 1, "bessel_j1")


@no_grad_function
def bessel_y0(input):
    return _y(input, 0, "bessel_y0")


@no_grad_function
def bessel_y1(input):
    return _y(input, 1, "bessel_y1")


@no_grad_function
def spherical_bessel_j0(input):
    """sin(x)/x, 1 at 0 (and 0 at +-inf)."""
    x = floating(input, "spherical_bessel_j0")
    safe = where(x == 0, 1.0, where(ops.abs(x) == math.inf, 1.0, x))
    v = ops.sin(safe) / safe
    return where(x == 0, 1.0, where(ops.abs(x) == math.inf, 0.0, v))


# ---- Airy Ai ----
_AI0 = 1.0 / (3 ** (2 / 3) * math.gamma(2 / 3))     # Ai(0)
_AIP0 = 1.0 / (3 ** (1 / 3) * math.gamma(1 / 3))    # -Ai'(0)
_AIRY_TERMS = 16


def _airy_series_coeffs(offset):
    """Coefficients (highest first) of f (offset 0) and g / x (offset 1) as series in z = x^3."""
    c = [1.0]
    for k in range(1, _AIRY_TERMS):
        c.append(c[-1] / ((3 * k + offset - 1) * (3 * k + offset)))
    return c[::-1]


_AIRY_F, _AIRY_G = _airy_series_coeffs(0), _airy_series_coeffs(1)
# u = s^6: int_0^inf e^{-u} u^{-1/6} g(u) du = 6 int_0^inf e^{-s^6} s^4 g(s^6) ds; trapezoid, f(0) = 0
_HA = 0.05
_SA = [j * _HA for j in range(1, 39)]
_SA_W = [6 * _HA / math.gamma(5 / 6)] * len(_SA)


@no_grad_function
def airy_ai(input):
    x = floating(input, "airy_ai")
    small = ops.clamp(x, min=-_SMALL, max=_SMALL)
    z = small * small * small
    series = _AI0 * horner(z, _AIRY_F) - _AIP0 * small * horner(z, _AIRY_G)

    big = ops.clamp(ops.abs(x), min=_SMALL, max=_big(x))
    zeta = big * ops.sqrt(big) * (2.0 / 3.0)

    def k_integrand(zt, s):
        s6 = ops.pow(s, const(6.0, s))
        return ops.exp(-s6) * ops.pow(s, const(4.0, s)) * ops.pow(1.0 + s6 / (2.0 * zt), const(-1 / 6, s))
    k13 = quadrature(zeta, k_integrand, _SA, _SA_W) * ops.sqrt(math.pi / (2.0 * zeta)) * ops.exp(-zeta)
    right = ops.sqrt(big / 3.0) * k13 / math.pi

    def modulus(zt, s):
        s6 = ops.pow(s, const(6.0, s))
        a = s6 / (2.0 * zt)
        return (ops.exp(-s6) * ops.pow(s, const(4.0, s)) * ops.pow(1.0 + a * a, const(-1 / 12, s)),
                ops.atan(a) * (1 / 6))
    p = quadrature(zeta, lambda zt, s: modulus(zt, s)[0] * ops.cos(modulus(zt, s)[1]), _SA, _SA_W)
    q = quadrature(zeta, lambda zt, s: modulus(zt, s)[0] * ops.sin(modulus(zt, s)[1]), _SA, _SA_W)
    c, s = _cos_sin_shifted(zeta, 5 * math.pi / 12)
    amp = ops.sqrt(2.0 / (math.pi * zeta))
    j13 = amp * (p * c + q * s)
    y13 = amp * (p * s - q * c)
    left = ops.sqrt(big) * 0.5 * (j13 - y13 / math.sqrt(3.0))

    v = where(x > _SMALL, right, where(x < -_SMALL, left, series))
    v = where(ops.abs(x) == math.inf, math.nan, v)  # torch 1.13's value at +-inf
    return where(x != x, x, v)
