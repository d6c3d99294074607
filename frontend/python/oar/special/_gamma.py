"""Gamma-function family: gammaln, digamma/psi, polygamma (oar's catalog ops), multigammaln, the regularized
incomplete gamma functions gammainc/gammaincc and the Hurwitz zeta function.

gammainc(a, x) = P(a, x) is the power series P = x^a e^-x / Gamma(a+1) sum_k x^k / ((a+1)...(a+k)) where
x < a + 1, and 1 - Q with Q from the continued fraction x^a e^-x / Gamma(a) / (x+1-a - 1(1-a)/(x+3-a - ...))
(modified Lentz) elsewhere; both loop until every element has converged (checked every few steps), so the
cost grows like sqrt(a) near x = a. zeta(s, q) is the Euler-Maclaurin sum: N direct terms (N = 9, more when
q is negative), the integral tail and 12 Bernoulli corrections, with Cephes' conventions for the edge cases.
"""
import fractions
import math

from .._tensor_layout import broadcast_tensors
from .._ops import ops
from ._common import const, floating, floating_pair, horner, where


def gammaln(input):
    return ops.lgamma(floating(input, "gammaln"))


def digamma(input):
    return ops.digamma(floating(input, "digamma"))


psi = digamma


def polygamma(n, input):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma(n, input): n must be a non-negative int, got {n!r}")
    return ops.polygamma(floating(input, "polygamma"), n=float(n))


def multigammaln(input, p):
    """log of the multivariate gamma function: p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2)."""
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"multigammaln(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = floating(input, "multigammaln")
    total = ops.lgamma(x)
    for j in range(1, p):
        total = total + ops.lgamma(x - 0.5 * j)
    return total + p * (p - 1) / 4.0 * math.log(math.pi)


# ---- incomplete gamma ----
_CHECK_EVERY = 8
_TINY = 1e-300


def _eps(x):
    return 1.1e-16 if x.dtype.itemsize == 8 else 6e-8


def _tiny(x):
    return _TINY if x.dtype.itemsize == 8 else 1e-30


def _max_iterations(a):
    amax = float(ops.max(ops.nan_to_num(ops.abs(a), nan=0.0, posinf=[0.0], neginf=[0.0]), dims=[],
                         keepdim=False).item()) if a.numel() else 0.0
    return int(64 + 16 * math.sqrt(amax))


_STIRLING = [1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188]


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a+1)). For a >= 10 in Stirling's form a (log1p(t) - t) - log(2 pi a)/2 - c(a),
    t = (x - a)/a, which avoids cancelling the large terms a log x, x and lgamma(a+1) (float32 keeps its
    digits near x = a ~ 1000)."""
    direct = a * ops.log(x) - x - ops.lgamma(a + 1.0)
    big = ops.maximum(a, const(10.0, a))
    t = (x - big) / big
    inv2 = 1.0 / (big * big)
    corr = horner(inv2, _STIRLING[::-1]) / big
    stirling = big * (ops.log1p(t) - t) - 0.5 * ops.log(big * (2.0 * math.pi)) - corr
    return where(a >= 10.0, stirling, direct)


def _series_p(a, x):
    """P(a, x) by its power series (meant for x < a + 1)."""
    term = x * 0.0 + 1.0
    total = term
    eps = _eps(x)
    limit = _max_iterations(a)
    k = 0
    while k < limit:
        for _ in range(_CHECK_EVERY):
            k += 1
            term = term * x / (a + float(k))
            total = total + term
        if not bool(ops.any(term > total * eps, dims=[], keepdim=False).item()):
            break
    return total * ops.exp(_log_prefactor(a, x))


_SMALL_A_TERMS = 30


def _small_a_q(a, x):
    """Q(a, x) for a < 1, x <= 2 without cancelling against P ~ 1: from gamma(a, x) = x^a sum (-x)^k/(k!(a+k)),
    Q = -expm1(a log x - lgamma(a+1)) - x^a/Gamma(a+1) a sum_{k>=1} (-x)^k/(k! (a+k))."""
    term = x * 0.0 + 1.0
    total = x * 0.0
    for k in range(1, _SMALL_A_TERMS):
        term = term * -x / float(k)
        total = total + term / (a + float(k))
    u = a * ops.log(x) - ops.lgamma(a + 1.0)
    return -ops.expm1(u) - ops.exp(u) * a * total


def _continued_fraction_q(a, x):
    """Q(a, x) by its continued fraction (meant for x >= a + 1)."""
    tiny = _tiny(x)
    eps = _eps(x)
    b = x + 1.0 - a
    c = x * 0.0 + 1.0 / tiny
    d = 1.0 / b
    h = d
    limit = _max_iterations(a)
    i = 0
    while i < limit:
        for _ in range(_CHECK_EVERY):
            i += 1
            an = (a - float(i)) * float(i)
            b = b + 2.0
            d = an * d + b
            d = where(ops.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = where(ops.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
        if not bool(ops.any(ops.abs(delta - 1.0) > eps, dims=[], keepdim=False).item()):
            break
    return h * a * ops.exp(_log_prefactor(a, x))


def _igamma(a, x, upper):
    """P(a, x) (or Q with upper) with Cephes' edge conventions (as torch 1.13)."""
    a, x = broadcast_tensors(a, x)
    finite = (a > 0) & (x > 0) & (a < math.inf) & (x < math.inf)
    series_side = finite & (x < a + 1.0)
    cf_side = finite & (x >= a + 1.0)
    small_a = series_side & (a < 1.0)
    p_series = _series_p(where(series_side, a, 1.0), where(series_side, x, 0.5))
    q_small = _small_a_q(where(small_a, a, 0.5), where(small_a, x, 0.5))
    q_cf = _continued_fraction_q(where(cf_side, a, 1.0), where(cf_side, x, 3.0))
    if upper:
        v = where(series_side, where(small_a, q_small, 1.0 - p_series), q_cf)
    else:
        v = where(series_side, p_series, 1.0 - q_cf)
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    v = where(finite, v, math.nan)
    v = where(x == math.inf, hi, v)
    v = where(a == math.inf, where(x == math.inf, math.nan, lo), v)
    v = where(x == 0, lo, v)
    v = where(a == 0, where(x > 0, hi, math.nan), v)
    return where((x < 0) | (a < 0), math.nan, v)


def _incomplete_gamma_function(name, upper):
    from ..autograd import Function
    aten = "igammac" if upper else "igamma"   # torch's message names the aten op

    class _Fn(Function):
        @staticmethod
        def forward(ctx, a, x):
            ctx.save_for_backward(a, x)
            return _igamma(a, x, upper)

        @staticmethod
        def backward(ctx, grad):
            a, x = ctx.saved_tensors
            if ctx.needs_input_grad[0]:
                raise NotImplementedError(f"the derivative for '{aten}: input' is not implemented.")
            # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
            dp = ops.exp((a - 1.0) * ops.log(x) - x - ops.lgamma(a))
            return None, grad * (-dp if upper else dp)
    _Fn.__name__ = _Fn.__qualname__ = name

    def fn(input, other):
        a, x = floating_pair(input, other, name)
        return _Fn.apply(a, x)
    fn.__name__ = fn.__qualname__ = name
    return fn


gammainc = _incomplete_gamma_function("gammainc", False)
gammaincc = _incomplete_gamma_function("gammaincc", True)


# ---- Hurwitz zeta ----
def _bernoulli(n):
    """B_0 .. B_n as Fractions (B_1 = -1/2), from sum_{k<=m} C(m+1, k) B_k = 0."""
    b = [fractions.Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_EM_TERMS = 12
_B = _bernoulli(2 * _EM_TERMS)
_EM_COEFFS = [float(_B[2 * j] / math.factorial(2 * j)) for j in range(1, _EM_TERMS + 1)]
_DIRECT = 9


def _zeta(s, q):
    s, q = broadcast_tensors(s, q)
    qmin = float(ops.min(where(q == q, q, 0.0), dims=[], keepdim=False).item()) if q.numel() else 0.0
    direct = _DIRECT + (max(0, int(math.ceil(-qmin))) if qmin < 0 and math.isfinite(qmin) else 0)
    good = (s > 1) & (s < math.inf) & (q > 0) & (q < math.inf) | ((s > 1) & (s < math.inf) & (q < 0))
    ss = where(good, s, 2.0)
    qs = where(good, q, 1.0)
    neg_s = -ss
    total = ops.pow(qs, neg_s)
    for k in range(1, direct):
        total = total + ops.pow(qs + float(k), neg_s)
    w = qs + float(direct)
    w_s = ops.pow(w, neg_s)
    total = total + w * w_s / (ss - 1.0) + 0.5 * w_s
    # Bernoulli corrections: B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1)
    factor = ss * w_s / w
    inv_w2 = 1.0 / (w * w)
    for j, coeff in enumerate(_EM_COEFFS, start=1):
        total = total + factor * coeff
        factor = factor * (ss + float(2 * j - 1)) * (ss + float(2 * j)) * inv_w2
    v = total
    # torch 1.13's (Cephes') conventions, by priority: s == 1 -> inf; s < 1 -> nan; q <= 0 an integer -> inf;
    # q < 0 with s not an integer -> nan; q or s nan, q == inf -> nan; s == inf -> 1 at q == 1, nan above,
    # inf below
    q_int = q == ops.floor(q)
    s_int = s == ops.floor(s)
    v = where(s == math.inf, where(q == 1, 1.0, where(q > 1, math.nan, math.inf)), v)
    v = where((q == math.inf) | (q != q) | (s != s), math.nan, v)
    v = where((q < 0) & ~q_int & ~s_int, math.nan, v)
    v = where((q <= 0) & q_int, math.inf, v)
    return where(s < 1, math.nan, where(s == 1, math.inf, v))


def _make_zeta():
    from ..autograd import Function

    class ZetaBackward(Function):
        @staticmethod
        def forward(ctx, s, q):
            ctx.save_for_backward(s, q)
            return _zeta(s, q)

        @staticmethod
        def backward(ctx, grad):
            s, q = ctx.saved_tensors
            if ctx.needs_input_grad[0]:
                raise NotImplementedError("the derivative for 'zeta' is not implemented.")
            return None, grad * -s * zeta(s + 1.0, q)

    def zeta(input, other):
        """The Hurwitz zeta function sum_k (k + q)^-s (torch.special.zeta(x, q))."""
        s, q = floating_pair(input, other, "zeta")
        return ZetaBackward.apply(s, q)
    return zeta


zeta = _make_zeta()
