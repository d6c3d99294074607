"""Error-function family: erf, erfc, erfinv (oar's catalog ops), erfcx, the standard normal CDF ndtr, its
logarithm log_ndtr and its inverse ndtri.

erfcx(x) = exp(x^2) erfc(x) is exp(x^2) * erfc(x) below x = 8 (erfc keeps its relative accuracy there and
neither factor overflows in float32) and the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!!/(2x^2)^k
(16 terms, below 1e-16 from x = 8 on) above. log_ndtr(x) is log1p(-ndtr(-x)) for x >= -1 and
log(erfcx(-x/sqrt 2)/2) - x^2/2 below (no underflow however negative x is). ndtri(p) starts from
sqrt(2) erfinv(2p - 1), or from the tail's asymptotic form -sqrt(-2 log p - log(-2 log p) - log(2 pi)) for
tiny p, and takes Newton steps on log_ndtr(z) = log(p) (on min(p, 1-p), which is exact, by symmetry).
"""
import math

from .._ops import ops
from ._common import const, floating, horner, unary_function, where

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_ERFCX_ASYMPTOTIC = 8.0
_ERFCX_TERMS = 16
# (-1)^k (2k-1)!! / 2^k, as a polynomial in 1/x^2, highest power first
_ERFCX_COEFFS = [1.0]
for _k in range(1, _ERFCX_TERMS):
    _ERFCX_COEFFS.append(-_ERFCX_COEFFS[-1] * (2 * _k - 1) / 2.0)
_ERFCX_COEFFS = _ERFCX_COEFFS[::-1]


def erf(input):
    return ops.erf(floating(input, "erf"))


def erfc(input):
    return ops.erfc(floating(input, "erfc"))


def erfinv(input):
    return ops.erfinv(floating(input, "erfinv"))


def _erfcx(x):
    near = ops.minimum(x, const(_ERFCX_ASYMPTOTIC, x))
    direct = ops.exp(near * near) * ops.erfc(near)
    far = ops.maximum(x, const(_ERFCX_ASYMPTOTIC, x))
    inv = 1.0 / far
    asym = horner(inv * inv, _ERFCX_COEFFS) * inv * (1.0 / math.sqrt(math.pi))
    return where(x < _ERFCX_ASYMPTOTIC, direct, asym)


erfcx = unary_function("erfcx", _erfcx, lambda x, y: 2.0 * x * y - 2.0 / math.sqrt(math.pi))


def ndtr(input):
    """The standard normal CDF, (1 + erf(x/sqrt 2))/2, computed as erfc(-x/sqrt 2)/2 (accurate in the left tail)."""
    return ops.erfc(floating(input, "ndtr") * (-1.0 / _SQRT2)) * 0.5


def _log_ndtr(x):
    right = ops.log1p(ops.erfc(ops.maximum(x, const(-1.0, x)) * (1.0 / _SQRT2)) * -0.5)
    left_x = ops.minimum(x, const(-1.0, x))
    left = ops.log(_erfcx(left_x * (-1.0 / _SQRT2)) * 0.5) - left_x * left_x * 0.5
    return where(x >= -1.0, right, left)


# d/dx log ndtr(x) = phi(x)/ndtr(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi), finite in both tails
log_ndtr = unary_function("log_ndtr", _log_ndtr,
                          lambda x, y: ops.exp(x * x * -0.5 - y) * (1.0 / _SQRT_2PI))

_NDTRI_NEWTON = 3


def _ndtri(p):
    q = where(p > 0.5, 1.0 - p, p)       # exact for p in [0.5, 1]
    inside = (q > 0) & (q <= 0.5)
    qs = where(inside, q, 0.25)
    tiny = 1e-10 if p.dtype.itemsize == 8 else 1e-5
    z0 = ops.erfinv(qs * 2.0 - 1.0) * _SQRT2
    t = ops.log(qs) * -2.0                # -2 log q, > 0
    zt = -ops.sqrt(t - ops.log(t) - math.log(2.0 * math.pi))
    z = where(qs < tiny, zt, z0)
    log_q = ops.log(qs)
    for _ in range(_NDTRI_NEWTON):
        ln = _log_ndtr(z)
        slope = ops.exp(z * z * -0.5 - ln) * (1.0 / _SQRT_2PI)
        z = z - (ln - log_q) / slope
    z = where(p > 0.5, -z, z)
    z = where(p == 0.5, 0.0, z)
    z = where(p == 0, -math.inf, where(p == 1, math.inf, z))
    return where((p < 0) | (p > 1) | (p != p), math.nan, z)


ndtri = unary_function("ndtri", _ndtri, lambda p, z: ops.exp(z * z * 0.5) * _SQRT_2PI)
