"""Orthogonal polynomials of integer degree n (a tensor or a number, truncated to an integer as torch does):
Chebyshev T, U, V, W and their shifted forms, physicists' and probabilists' Hermite, Laguerre and Legendre.

Values come from each family's three-term recurrence, run to the largest degree present and selected per
element; inside (-1, 1) the Chebyshev families use their trigonometric forms for high degrees (T_n(cos t) =
cos(nt), U_n = sin((n+1)t)/sin t, V_n = cos((n+1/2)t)/cos(t/2), W_n = sin((n+1/2)t)/sin(t/2)), as torch does
above degree 6 (T) or 8 (U, V, W). A negative degree gives 0. torch does not differentiate these functions.
"""
import math

from .._ops import ops
from ._common import const, floating_pair, no_grad_function, where


def _degree_and_x(input, n, fn):
    x, nf = floating_pair(input, n, fn)
    nf = ops.trunc(nf)
    x, nf = _broadcast(x, nf)
    return x, nf


def _broadcast(x, n):
    from .._tensor_layout import broadcast_tensors
    return broadcast_tensors(x, n)


def _max_degree(n):
    if n.numel() == 0:
        return 0
    m = float(ops.max(where(n == n, n, 0.0), dims=[], keepdim=False).item())
    if not math.isfinite(m):
        raise ValueError("polynomial degree n must be finite")
    return max(0, int(m))


def _recurrence(x, n, p0, p1, step):
    """p_k for each element's k = n (n >= 0), from p0, p1 and p_{k+1} = step(k, p_{k-1}, p_k)."""
    top = _max_degree(n)
    out = where(n == 0, p0, p1) if top >= 1 else p0 + x * 0.0
    prev, cur = p0 + x * 0.0, p1
    for k in range(1, top):
        prev, cur = cur, step(k, prev, cur)
        out = where(n == float(k + 1), cur, out)
    return out


def _finish(v, n):
    return where(n < 0, 0.0, v)


def _chebyshev(x, n, kind):
    """T, U, V or W of degree n at x (x already shifted for the shifted forms)."""
    two_x = x + x
    p1 = {"t": x, "u": two_x, "v": two_x - 1.0, "w": two_x + 1.0}[kind]
    rec = _recurrence(x, n, 1.0, p1, lambda k, p, q: two_x * q - p)
    inside = ops.abs(x) < 1.0
    t = ops.acos(where(inside, x, 0.0))
    if kind == "t":
        trig = ops.cos(n * t)
    elif kind == "u":
        st = ops.sin(t)
        trig = where(st != 0, ops.sin((n + 1.0) * t) / where(st != 0, st, 1.0), (n + 1.0) * ops.cos((n + 1.0) * t) / x)
    elif kind == "v":
        c = ops.cos(t * 0.5)
        trig = ops.cos((n + 0.5) * t) / c
    else:
        s = ops.sin(t * 0.5)
        trig = ops.sin((n + 0.5) * t) / s
    threshold = 6.0 if kind == "t" else 8.0
    v = where(inside & (n > threshold), trig, rec)
    # exact values at x = +-1
    odd = ops.fmod(n, const(2.0, n)) != 0
    at_one = {"t": 1.0, "u": n + 1.0, "v": 1.0, "w": 2.0 * n + 1.0}[kind]
    at_minus_one = {"t": where(odd, -1.0, 1.0), "u": where(odd, -(n + 1.0), n + 1.0),
                    "v": where(odd, -(2.0 * n + 1.0), 2.0 * n + 1.0), "w": where(odd, -1.0, 1.0)}[kind]
    v = where(x == 1.0, at_one + x * 0.0, v)
    v = where(x == -1.0, at_minus_one + x * 0.0, v)
    return _finish(v, n)


def _chebyshev_function(kind, shifted):
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"

    def fn(input, n):
        x, nf = _degree_and_x(input, n, name)
        return _chebyshev(x + x - 1.0 if shifted else x, nf, kind)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, n): the {'shifted ' if shifted else ''}Chebyshev polynomial of the " \
                 f"{'first second third fourth'.split()['tuvw'.index(kind)]} kind, degree n, at input."
    return no_grad_function(fn)


chebyshev_polynomial_t = _chebyshev_function("t", False)
chebyshev_polynomial_u = _chebyshev_function("u", False)
chebyshev_polynomial_v = _chebyshev_function("v", False)
chebyshev_polynomial_w = _chebyshev_function("w", False)
shifted_chebyshev_polynomial_t = _chebyshev_function("t", True)
shifted_chebyshev_polynomial_u = _chebyshev_function("u", True)
shifted_chebyshev_polynomial_v = _chebyshev_function("v", True)
shifted_chebyshev_polynomial_w = _chebyshev_function("w", True)


@no_grad_function
def hermite_polynomial_h(input, n):
    """Physicists' Hermite polynomial H_n: H_{k+1} = 2x H_k - 2k H_{k-1}."""
    x, nf = _degree_and_x(input, n, "hermite_polynomial_h")
    return _finish(_recurrence(x, nf, 1.0, x + x, lambda k, p, q: (x + x) * q - p * (2.0 * k)), nf)


@no_grad_function
def hermite_polynomial_he(input, n):
    """Probabilists' Hermite polynomial He_n: He_{k+1} = x He_k - k He_{k-1}."""
    x, nf = _degree_and_x(input, n, "hermite_polynomial_he")
    return _finish(_recurrence(x, nf, 1.0, x, lambda k, p, q: x * q - p * float(k)), nf)


@no_grad_function
def laguerre_polynomial_l(input, n):
    """Laguerre polynomial L_n: (k+1) L_{k+1} = (2k+1-x) L_k - k L_{k-1}."""
    x, nf = _degree_and_x(input, n, "laguerre_polynomial_l")
    v = _recurrence(x, nf, 1.0, 1.0 - x, lambda k, p, q: ((2.0 * k + 1.0 - x) * q - p * float(k)) / (k + 1.0))
    return _finish(where(x == 0, 1.0, v), nf)


@no_grad_function
def legendre_polynomial_p(input, n):
    """Legendre polynomial P_n: (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}."""
    x, nf = _degree_and_x(input, n, "legendre_polynomial_p")
    v = _recurrence(x, nf, 1.0, x, lambda k, p, q: ((2.0 * k + 1.0) * x * q - p * float(k)) / (k + 1.0))
    odd = ops.fmod(nf, const(2.0, nf)) != 0
    v = where(x == 1.0, 1.0, where(x == -1.0, where(odd, -1.0, 1.0), v))
    return _finish(v, nf)
