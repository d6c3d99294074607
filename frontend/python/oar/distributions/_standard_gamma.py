"""Gamma(alpha, 1) draws on the parameters' device, with implicit reparameterization gradients.

Sampling: Marsaglia & Tsang (2000), the rejection step vectorised: each round proposes a block of candidates
per element and keeps the first accepted one; elements still unaccepted get another round (a few rounds at
most: acceptance is above 95% per candidate). alpha < 1 uses Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha).

Gradient (Figurnov et al. 2018, "Implicit reparameterization gradients"): for x ~ Gamma(alpha, 1) with CDF
P(alpha, x), dx/dalpha = -(dP/dalpha) / pdf(x). With the series P = sum_n x^(alpha+n) e^-x / Gamma(alpha+n+1),
    dx/dalpha = -sum_n x^(n+1) Gamma(alpha) / Gamma(alpha+n+1) * (log x - digamma(alpha+n+1)),
summed in float64 over enough terms for the largest x (the terms fall off once alpha + n exceeds x).
"""
import math

from .. import _C, _creation, autograd
from .._ops import ops
from .utils import all_true, finfo, zeros_like

_ROUND = 4  # candidates proposed per element and round
_MAX_ROUNDS = 64


def _sample(alpha):
    """Gamma(alpha, 1) values of alpha's shape (alpha detached, floating)."""
    shape, dtype, device = tuple(alpha.shape), alpha.dtype, alpha.device
    boost = alpha < 1
    a = ops.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / ops.sqrt(9.0 * d)
    result = zeros_like(alpha)
    done = result != result  # all false
    for _ in range(_MAX_ROUNDS):
        z = _creation.randn(_ROUND, *shape, dtype=dtype, device=device)
        u = _creation.rand(_ROUND, *shape, dtype=dtype, device=device)
        v = (1 + c * z) ** 3
        positive = v > 0
        log_v = ops.log(ops.where(positive, v, v * 0 + 1))
        accept = positive & (ops.log(u) < 0.5 * z * z + d - d * v + d * log_v)
        count = ops.cumsum(accept.to(dtype), dim=0)
        first = accept & (count == 1)
        candidate = ops.sum(ops.where(first, d * v, zeros_like(v)), dims=[0], keepdim=False)
        got = count.select(0, _ROUND - 1) > 0
        result = ops.where(got & ~done, candidate, result)
        done = done | got
        if all_true(done):
            break
    result = ops.where(done, result, result * float("nan"))  # only a NaN alpha is never accepted
    u = _creation.rand(*shape, dtype=dtype, device=device)
    # U^(1/alpha) in log space; for tiny alpha it underflows, and the clamp below keeps the value positive.
    result = ops.where(boost, result * ops.exp(ops.log(u) / alpha), result)
    return ops.clamp(result, min=float(finfo(dtype).tiny))


def _dx_dalpha(x, alpha):
    """The implicit gradient dx/dalpha of Gamma(alpha, 1) draws x (no graph recorded)."""
    f64 = _C.dtype.float64
    x64, a64 = x.to(f64), alpha.to(f64)
    x_max = float(ops.max(x64).item()) if x64.numel() else 0.0
    terms = int(math.ceil(1.5 * x_max + 12 * math.sqrt(x_max) + 30))
    n = _creation.arange(terms, dtype=f64, device=x.device).reshape(terms, *((1,) * x.dim()))
    log_x = ops.log(x64)
    log_w = (n + 1) * log_x + ops.lgamma(a64) - ops.lgamma(a64 + n + 1)
    grad = -ops.sum(ops.exp(log_w) * (log_x - ops.digamma(a64 + n + 1)), dims=[0], keepdim=False)
    return grad.to(x.dtype)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape; differentiable w.r.t. alpha through the implicit gradient."""
    differentiable = alpha.requires_grad and autograd.is_grad_enabled()
    with autograd.no_grad():
        x = _sample(alpha.detach())
        if not differentiable:
            return x
        slope = _dx_dalpha(x, alpha.detach())
    # value x, gradient slope * d(alpha): the surrogate adds zero in value.
    return x + (alpha - alpha.detach()) * slope
