"""Elementwise and reduction functions torch.special shares with the top level: exp2, expm1, expit, log1p,
logit, sinc, round, xlogy, the entropy term entr, xlog1py, softmax, log_softmax and logsumexp. They are
oar's own functions (catalog ops where there is one), taking torch.special's signatures, with integer inputs
computed in the default float dtype."""
import math

from .. import _C
from .._C import Tensor
from .._ops import ops
from ._common import floating, floating_pair, where


def exp2(input):
    return ops.exp2(floating(input, "exp2"))


def expm1(input):
    return ops.expm1(floating(input, "expm1"))


def expit(input):
    """The logistic sigmoid 1/(1 + exp(-x))."""
    return ops.sigmoid(floating(input, "expit"))


def log1p(input):
    return ops.log1p(floating(input, "log1p"))


def logit(input, eps=None):
    """log(p / (1 - p)), input clamped to [eps, 1 - eps] first when eps is given."""
    from .._tensor_math import logit as _logit
    return _logit(floating(input, "logit"), eps)


def sinc(input):
    """sin(pi x)/(pi x), 1 at 0."""
    from .._tensor_math import sinc as _sinc
    return _sinc(floating(input, "sinc"))


def round(input, *, decimals=0):
    from .._functions import round as _round
    return _round(input, decimals=decimals)


def entr(input):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN)."""
    x = floating(input, "entr")
    positive = x > 0
    safe = where(positive, x, 1.0)         # keeps log(0) out of the gradient of the other branches
    v = where(positive, -x * ops.log(safe), x * 0.0)
    v = where(x < 0, -math.inf, v)
    return where(x != x, x, v)


def xlogy(input, other):
    """input * log(other), 0 where input == 0 (unless other is NaN)."""
    from .._tensor_math import xlogy as _xlogy
    x, y = floating_pair(input, other, "xlogy")
    return _xlogy(x, y)


def xlog1py(input, other):
    """input * log1p(other), 0 where input == 0 (unless other is NaN)."""
    x, y = floating_pair(input, other, "xlog1py")
    zero = x == 0
    safe_y = where(zero, 0.0, y)
    out = where(zero, 0.0, x * ops.log1p(safe_y))
    return where(y != y, y, out)


def _cast(input, dtype):
    return input if dtype is None or input.dtype == dtype else input.to(dtype=dtype)


def softmax(input, dim, *, dtype=None):
    from .._functions import softmax as _softmax
    return _softmax(_cast(input, dtype), dim)


def log_softmax(input, dim, *, dtype=None):
    from .._functions import log_softmax as _log_softmax
    return _log_softmax(_cast(input, dtype), dim)


def logsumexp(input, dim, keepdim=False):
    from .._tensor_reduce import logsumexp as _logsumexp
    return _logsumexp(input, dim, keepdim)
