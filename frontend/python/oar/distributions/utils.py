"""Helpers shared by the distributions (torch.distributions.utils), written with oar ops only."""
import math
import numbers

import numpy as np

from .. import _C, _creation
from .._C import Tensor
from .._ops import ops


class lazy_property:
    """A property computed on first use and then kept in the instance (probs/logits are made on demand)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def finfo(dtype):
    """NumPy's finfo for an oar floating dtype (eps, tiny, min, max)."""
    return np.finfo({"oar.float64": np.float64, "oar.float16": np.float16}.get(str(dtype), np.float32))


def broadcast_shape(*shapes):
    """The shape that the given shapes broadcast to (NumPy/PyTorch rules)."""
    out = []
    for sizes in shapes:
        sizes = tuple(sizes)
        if len(sizes) > len(out):
            out = [1] * (len(sizes) - len(out)) + out
        for i, s in enumerate(sizes, len(out) - len(sizes)):
            if s != 1 and out[i] not in (1, s):
                raise _C.ShapeError(f"shapes {[tuple(s) for s in shapes]} cannot be broadcast together")
            out[i] = s if out[i] == 1 else out[i]
    return tuple(out)


def expand_to(t, shape):
    shape = tuple(shape)
    return t if tuple(t.shape) == shape else t.expand(*shape)


def broadcast_all(*values):
    """Tensors and Python numbers as tensors of one broadcast shape; numbers take the first tensor's dtype
    and device (or float32 on the default device)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError(f"Input arguments must all be instances of numbers.Number or oar.Tensor, "
                             f"got {type(v).__name__}")
    dtype = like.dtype if like is not None and like.dtype.is_floating_point else _C.dtype.float32
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, Tensor) else _C.tensor(float(v), dtype, device) for v in values]
    shape = broadcast_shape(*(t.shape for t in tensors))
    return tuple(expand_to(t, shape) for t in tensors)


def sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return ops.sum(value, dims=list(range(-dim, 0)), keepdim=False)


def all_true(mask):
    """Python bool: every element of a bool tensor is true (one scalar read back)."""
    if mask.numel() == 0:
        return True
    return float(ops.min(mask.to(_C.dtype.float32)).item()) == 1.0


def all_along(mask, dim=-1):
    """Bool tensor: `mask` is true everywhere along `dim` (min of its 0/1 values)."""
    return ops.min(mask.to(_C.dtype.float32), dims=[dim], keepdim=False) == 1.0


def clamp_probs(probs):
    eps = float(finfo(probs.dtype).eps)
    return ops.clamp(probs, min=eps, max=1.0 - eps)


def logits_to_probs(logits, is_binary=False):
    return ops.sigmoid(logits) if is_binary else ops.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return ops.log(ps) - ops.log1p(-ps)
    return ops.log(ps)


def softplus(x):
    """log(1 + exp(x)) = logaddexp(x, 0): no overflow for large x, and the derivative sigmoid(x) everywhere
    (relu(x) + log1p(exp(-|x|)) has derivative 0 at x = 0, from the kinks of relu and abs)."""
    return ops.logaddexp(x, zeros_like(x))


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (torch.xlogy); y may be a Python number. The derivative in x is log(y),
    also at x == 0 (only 0 * log 0 is set to 0, with derivative 0, as in torch)."""
    if not isinstance(y, Tensor):
        y = float(y)
        if y > 0:
            return x * math.log(y)
        prod = x * (float("-inf") if y == 0 else float("nan"))
        return ops.where(x == 0, zeros_like(prod), prod)
    both_zero = (x == 0) & (y == 0)
    return x * ops.log(ops.where(both_zero, full_like(y, 1.0), y))


def zeros_like(t):
    return _C.call("fill", [], {"shape": list(t.shape), "value": 0.0, "dtype": t.dtype}, t.device)


def full_like(t, value):
    return _C.call("fill", [], {"shape": list(t.shape), "value": float(value), "dtype": t.dtype}, t.device)


def scalar_like(t, value):
    """A 0-dim tensor of t's dtype and device (broadcasts in where/maximum)."""
    return _C.tensor(float(value), t.dtype, t.device)


def eye_like(t, n):
    """An n x n identity of t's dtype and device."""
    i = _C.call("arange", [], {"start": 0.0, "end": float(n), "step": 1.0, "dtype": t.dtype}, t.device)
    return (i.reshape(n, 1) == i.reshape(1, n)).to(t.dtype)


def diagonal(m):
    """The diagonal of the last two (square) dims."""
    return ops.sum(m * eye_like(m, m.shape[-1]), dims=[-1], keepdim=False)


def tril_mask(t, n):
    i = _C.call("arange", [], {"start": 0.0, "end": float(n), "step": 1.0, "dtype": t.dtype}, t.device)
    return i.reshape(n, 1) >= i.reshape(1, n)


EULER_GAMMA = 0.57721566490153286061


def rand_like_shape(shape, like, low=None, high=None):
    """Uniform [0, 1) draws of `shape` on like's device and dtype, optionally clamped into [low, high]."""
    u = _creation.rand(*tuple(shape), dtype=like.dtype, device=like.device)
    if low is not None or high is not None:
        lo = float("-inf") if low is None else float(low)
        hi = float("inf") if high is None else float(high)
        u = ops.clamp(u, min=lo, max=hi)
    return u


def randn_like_shape(shape, like):
    """Standard normal draws of `shape` on like's device and dtype."""
    return _creation.randn(*tuple(shape), dtype=like.dtype, device=like.device)


def batch_shape_of(given, param):
    """() when every given parameter is a Python number (torch's scalar distributions), else param's shape."""
    if all(isinstance(g, numbers.Number) for g in given):
        return ()
    return tuple(param.shape)


def expanded_copy(dist, cls, batch_shape, names, _instance=None, event_shape=None):
    """expand() for distributions whose parameters all have batch_shape: the named tensors expanded."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = tuple(batch_shape)
    for name in names:
        if name in dist.__dict__:
            setattr(new, name, expand_to(dist.__dict__[name], batch_shape))
    from .distribution import Distribution
    Distribution.__init__(new, batch_shape, dist.event_shape if event_shape is None else event_shape,
                          validate_args=False)
    new._validate_args = dist._validate_args
    return new


def _tril_index(n, diag, device):
    """Row and column of the entries on or below diagonal `diag` of an n x n matrix, row-major (torch's
    `arange < arange.view(-1, 1) + diag + 1` mask order)."""
    from .. import tril_indices
    rows, cols = tril_indices(n, n, diag)
    return rows.to(device), cols.to(device)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of mat [.., n, n] on or below diagonal `diag`, row by row, as a vector [.., k]."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_index(n, diag, mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: an n x n matrix, zero above diagonal `diag`."""
    # n solves k = n (n + 1) / 2 + diag n + |diag| (diag + 1) / 2 entries on or below diagonal `diag`
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = _tril_index(n, diag, vec.device)
    mat[..., rows, cols] = vec
    return mat
