"""Poisson and binomial draws on the parameters' device, from oar's random stream (no gradient).

Small means use inversion: the pmf over k = 0..K-1 (K a few standard deviations above the largest small
mean), cumulated, and the count of cumulative probabilities below a uniform draw. Large means use Hormann's
transformed rejection with squeeze (PTRS for Poisson, BTRS for the binomial; W. Hormann, "The transformed
rejection method for generating Poisson random variables", 1993, and "The generation of binomial random
variates", 1993), vectorised like the Gamma sampler: each round proposes a block of candidates per element
and keeps the first accepted one (acceptance is high, so a few rounds suffice)."""
import math

from .. import _C, _creation
from .._ops import ops
from .utils import all_true, full_like, zeros_like

_ROUND = 4
_MAX_ROUNDS = 64
_SMALL = 10.0  # means below this are drawn by inversion


def _arange(n, like):
    return _C.call("arange", [], {"start": 0.0, "end": float(n), "step": 1.0, "dtype": like.dtype}, like.device)


def _max_of(t, mask):
    """Largest value of t where mask holds (0 when nowhere); one scalar read back."""
    if t.numel() == 0:
        return 0.0
    return float(ops.max(ops.where(mask, t, zeros_like(t))).item())


def _inversion(log_pmf_fn, k_terms, param, shape):
    """Inverse-cdf draws of `shape`: log_pmf_fn(k) for k of shape (K, 1, ..., 1) gives (K, *param.shape)
    log probabilities (the table is made once per parameter, not per draw)."""
    k = _arange(k_terms, param).reshape(k_terms, *((1,) * param.dim()))
    cdf = ops.cumsum(ops.exp(log_pmf_fn(k)), dim=0)
    u = _creation.rand(1, *shape, dtype=param.dtype, device=param.device)
    below = (cdf < u).to(param.dtype)
    return ops.clamp(ops.sum(below, dims=[0], keepdim=False), max=float(k_terms - 1))


def _rejection(propose, param, shape, done):
    """First accepted candidate per element of `shape`, rounds of _ROUND proposals; `done` (of `shape`)
    marks elements to skip."""
    like = _C.call("fill", [], {"shape": list(shape), "value": 0.0, "dtype": param.dtype}, param.device)
    result = like
    if all_true(done):
        return result
    for _ in range(_MAX_ROUNDS):
        u = _creation.rand(_ROUND, *shape, dtype=like.dtype, device=like.device) - 0.5
        v = _creation.rand(_ROUND, *shape, dtype=like.dtype, device=like.device)
        candidate, accept = propose(u, v)
        count = ops.cumsum(accept.to(like.dtype), dim=0)
        first = accept & (count == 1)
        value = ops.sum(ops.where(first, candidate, zeros_like(candidate)), dims=[0], keepdim=False)
        got = count.select(0, _ROUND - 1) > 0
        result = ops.where(got & ~done, value, result)
        done = done | got
        if all_true(done):
            break
    return ops.where(done, result, result * float("nan"))


def _fill(shape, like, value=0.0):
    return _C.call("fill", [], {"shape": list(shape), "value": float(value), "dtype": like.dtype}, like.device)


def _lead(t, shape):
    """t with leading size-1 dims up to len(shape) (so tables of it broadcast against draws of shape)."""
    return t.reshape(*((1,) * (len(shape) - t.dim()) + tuple(t.shape))) if t.dim() < len(shape) else t


def poisson(rate, shape):
    """Poisson(rate) draws of `shape` (rate broadcasts to it), as rate's dtype."""
    shape = tuple(shape)
    rate = _lead(rate.detach(), shape)
    if math.prod(shape) == 0:
        return _fill(shape, rate)
    small = rate < _SMALL
    # inversion for the small rates
    m = _max_of(rate, small)
    k_terms = int(math.ceil(m + 12 * math.sqrt(m) + 16))
    lam = ops.where(small, rate, zeros_like(rate))
    safe_lam = ops.clamp(lam, min=float(1e-30))
    out = _inversion(lambda k: k * ops.log(safe_lam) - lam - ops.lgamma(k + 1), k_terms, rate, shape)
    if all_true(small):
        return out
    # PTRS for the large ones (parameters computed with a harmless stand-in where the rate is small)
    lam = ops.where(small, full_like(rate, 100.0), rate)
    slam, log_lam = ops.sqrt(lam), ops.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(u, v):
        us = 0.5 - ops.abs(u)
        k = ops.floor((2 * a / us + b) * u + lam + 0.43)
        quick = (us >= 0.07) & (v <= v_r)
        ok = k >= 0
        ks = ops.clamp(k, min=0.0)
        bound = ops.log(v) + ops.log(inv_alpha) - ops.log(a / (us * us) + b)
        slow = ok & ~((us < 0.013) & (v > us)) & (bound <= -lam + ks * log_lam - ops.lgamma(ks + 1))
        return ks, (quick & ok) | slow

    big = _rejection(propose, rate, shape, small.expand(*shape) if tuple(small.shape) != shape else small)
    return ops.where(small, out, big)


def binomial(total_count, probs, shape):
    """Binomial(total_count, probs) draws of `shape` (the parameters broadcast to it), as probs' dtype."""
    shape = tuple(shape)
    n, p = _lead(total_count.detach(), shape), _lead(probs.detach(), shape)
    if math.prod(shape) == 0:
        return _fill(shape, p)
    flip = p > 0.5
    q = ops.where(flip, 1 - p, p)
    mean = n * q
    small = mean < _SMALL
    # inversion for small means: k runs up to a few standard deviations above the largest small mean
    m = _max_of(mean, small)
    n_max = _max_of(n, small)
    k_terms = int(min(n_max + 1, math.ceil(m + 12 * math.sqrt(m) + 16)))
    k_terms = max(k_terms, 1)
    n_s = ops.where(small, n, zeros_like(n))
    q_s = ops.where(small, q, zeros_like(q))
    q_safe = ops.clamp(q_s, min=1e-30)

    def log_pmf(k):
        nk = n_s - k
        lp = (ops.lgamma(n_s + 1) - ops.lgamma(k + 1) - ops.lgamma(ops.clamp(nk, min=0.0) + 1)
              + k * ops.log(q_safe) + nk * ops.log1p(-q_safe))
        lp = ops.where(nk < 0, full_like(lp, float("-inf")), lp)
        # q == 0: all the mass at k = 0
        return ops.where(q_s == 0, ops.where(k == 0, zeros_like(lp), full_like(lp, float("-inf"))), lp)

    out = _inversion(log_pmf, k_terms, q_s, shape)
    if not all_true(small):
        # BTRS where n q >= 10 (stand-in parameters elsewhere)
        nb = ops.where(small, full_like(n, 1000.0), n)
        qb = ops.where(small, full_like(q, 0.25), q)
        spq = ops.sqrt(nb * qb * (1 - qb))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * qb
        c = nb * qb + 0.5
        v_r = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = ops.log(qb / (1 - qb))
        mode = ops.floor((nb + 1) * qb)
        h = ops.lgamma(mode + 1) + ops.lgamma(nb - mode + 1)

        def propose(u, v):
            us = 0.5 - ops.abs(u)
            k = ops.floor((2 * a / us + b) * u + c)
            inside = (k >= 0) & (k <= nb)
            ks = ops.clamp(k, min=0.0)
            ks = ops.where(ks > nb, nb + 0 * ks, ks)
            quick = (us >= 0.07) & (v <= v_r)
            lv = ops.log(v * alpha / (a / (us * us) + b))
            bound = h - ops.lgamma(ks + 1) - ops.lgamma(nb - ks + 1) + (ks - mode) * lpq
            return ks, inside & (quick | (lv <= bound))

        big = _rejection(propose, q, shape, small.expand(*shape) if tuple(small.shape) != shape else small)
        out = ops.where(small, out, big)
    out = ops.clamp(out, min=0.0)
    out = ops.where(out > n, n + 0 * out, out)
    return ops.where(flip, n - out, out)
