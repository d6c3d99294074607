"""PyTorch reductions (var_mean, logsumexp, median, mode, norm, all/any, nansum, ...) and scans (cumsum,
cummax, logcumsumexp, diff, ...) written with catalog ops, so they run on every device and keep gradients."""
import math

from . import _C
from ._functions import _ValuesIndices
from ._ops import ops
from ._tensor_math_base import _D, _as_float, _no_bool, _floating_only, _norm_dim, _norm_dims, _scalar


def _reduce_args(dim, unbiased, correction, fn):
    if isinstance(dim, bool):  # torch.var(x, True): the unbiased flag given positionally
        return None, dim, correction
    if correction is not None and unbiased is not True and unbiased is not None:
        raise TypeError(f"{fn}(): pass either unbiased or correction, not both")
    return dim, unbiased, correction


def _var_mean(name, input, dim, unbiased, keepdim, correction):
    dim, unbiased, correction = _reduce_args(dim, unbiased, correction, name)
    _floating_only(input, name)
    c = (1 if unbiased is not False else 0) if correction is None else correction
    return tuple(getattr(ops, name)(input, dims=_norm_dims(dim, input.ndim), keepdim=bool(keepdim),
                                    correction=int(c)))


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(var, mean) over dim, var with Bessel's correction (correction=1, or unbiased) by default."""
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return _var_mean("std_mean", input, dim, unbiased, keepdim, correction)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed after subtracting the max (no overflow)."""
    return ops.logsumexp(input, dims=_norm_dims(dim, input.ndim), keepdim=bool(keepdim))


def _check_nonempty(x, d, fn):
    if x.ndim and x.shape[d] == 0:
        raise _C.IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")


def _median(input, dim, keepdim, fn):
    _no_bool(input, fn)
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return _scalar(math.nan, input)
        return getattr(ops, fn)(flat, dim=0)[0]
    d = _norm_dim(dim, input.ndim)
    _check_nonempty(input, d, fn)
    return _ValuesIndices(getattr(ops, fn)(input, dim=d, keepdim=bool(keepdim)))


def median(input, dim=None, keepdim=False):
    """The lower median; with dim, (values, indices). NaN propagates."""
    return _median(input, dim, keepdim, "median")


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN only where every entry is NaN)."""
    return _median(input, dim, keepdim, "nanmedian")


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest among equally frequent ones) and its last position.

    Counts by comparing every pair along dim: memory grows with size(dim)**2."""
    _no_bool(input, "mode")
    d = _norm_dim(dim, input.ndim)
    _check_nonempty(input, d, "mode")
    return _ValuesIndices(ops.mode(input, dim=d, keepdim=bool(keepdim)))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest entry along dim (k from 1) and its position."""
    d = _norm_dim(dim, input.ndim)
    return _ValuesIndices(ops.kthvalue(input, k=int(k), dim=d, keepdim=keepdim))


def count_nonzero(input, dim=None):
    return ops.count_nonzero(input, dims=_norm_dims(dim, input.ndim))


def all(input, dim=None, keepdim=False):
    return ops.all(input, dims=_norm_dims(dim, input.ndim) if dim is not None else [], keepdim=bool(keepdim))


def any(input, dim=None, keepdim=False):
    return ops.any(input, dims=_norm_dims(dim, input.ndim) if dim is not None else [], keepdim=bool(keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector norms over dim (all entries by default): p = 'fro' or 2, inf, -inf, 0, or any p > 0.
    Gradients are 0 (not NaN) where the norm is 0, as PyTorch's."""
    x = input if dtype is None else input.to(dtype=dtype)
    if not x.is_floating_point():
        raise _C.DTypeError(f"norm(): input dtype should be floating point, got {x.dtype}")
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":  # the nuclear norm of a matrix (dim: its two dims; default: a 2-D input's)
        if dim is None and x.ndim != 2:
            raise RuntimeError(f"norm(): p='nuc' needs a 2-D input or a dim of two dims, got a {x.ndim}-D input")
        from . import linalg
        return linalg.matrix_norm(x, "nuc", dim=(-2, -1) if dim is None else tuple(dim), keepdim=bool(keepdim))
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use 'fro', 'nuc' or a number)")
    dims = _norm_dims(dim, x.ndim) if dim is not None else []
    return ops.vector_norm(x, dims=dims, keepdim=bool(keepdim), ord=float(p))


class _MinMax(tuple):
    """(min, max), as torch.aminmax returns."""
    @property
    def min(self):
        return self[0]

    @property
    def max(self):
        return self[1]


def aminmax(input, *, dim=None, keepdim=False):
    dims = [_norm_dim(dim, input.ndim)] if dim is not None else []
    return _MinMax(ops.aminmax(input, dims=dims, keepdim=bool(keepdim)))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype=dtype)
    return ops.nansum(x, dims=_norm_dims(dim, x.ndim), keepdim=bool(keepdim))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype=dtype)
    _floating_only(x, "nanmean")
    return ops.nanmean(x, dims=_norm_dims(dim, x.ndim), keepdim=bool(keepdim))


# ---- scans ----
def _scan_input(input, dim, dtype):
    _norm_dim(dim, input.ndim)
    if dtype is not None:
        return input.to(dtype=dtype)
    if not input.is_floating_point():  # integers and bool accumulate in int64, as PyTorch
        return input.to(dtype=_D.int64)
    return input


def cumsum(input, dim, *, dtype=None):
    return ops.cumsum(_scan_input(input, dim, dtype), dim=dim)


def cumprod(input, dim, *, dtype=None):
    return ops.cumprod(_scan_input(input, dim, dtype), dim=dim)


def _cum_extreme(op, input, dim):
    _norm_dim(dim, input.ndim)
    x = input.to(dtype=_D.uint8) if input.dtype == _D.bool else input
    values, indices = getattr(ops, op)(x, dim=dim)
    return _ValuesIndices((values.to(dtype=_D.bool) if input.dtype == _D.bool else values, indices))


def cummax(input, dim):
    """Running max along dim and the index where it was (last) reached."""
    return _cum_extreme("cummax", input, dim)


def cummin(input, dim):
    return _cum_extreme("cummin", input, dim)


def logcumsumexp(input, dim):
    _norm_dim(dim, input.ndim)
    return ops.logcumsumexp(_as_float(input), dim=dim)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Differences of neighbours along dim, n times (xor for bool), with prepend/append joined first."""
    if input.ndim == 0:
        raise _C.ShapeError("diff(): expects input to be at least one-dimensional")
    d = _norm_dim(dim, input.ndim)
    if n < 0:
        raise ValueError(f"diff(): order n must be non-negative but got {n}")

    def joined(t):  # a number or 0-d tensor is one slice along dim, as PyTorch's
        if t is None:
            return None
        t = t if isinstance(t, _C.Tensor) else _scalar(t, input)
        if t.ndim == 0:
            shape = list(input.shape)
            shape[d] = 1
            t = t.expand(shape)
        return t.to(dtype=input.dtype) if t.dtype != input.dtype else t
    return ops.diff(input, joined(prepend), joined(append), n=int(n), dim=d)


__all__ = ["var_mean", "std_mean", "logsumexp", "median", "nanmedian", "mode", "kthvalue", "count_nonzero", "all",
           "any", "norm", "aminmax", "nansum", "nanmean", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
           "diff"]
