"""PyTorch reductions (var_mean, logsumexp, median, mode, norm, all/any, nansum, ...) and scans (cumsum,
cummax, logcumsumexp, diff, ...) written with catalog ops, so they run on every device and keep gradients."""
import math

from . import _C
from ._functions import _ValuesIndices, _dims, var, where
from ._ops import ops
from ._tensor_math_base import (_D, _as_float, _no_bool, _floating_only, _norm_dim, _norm_dims, _scalar, _slice)


def _reduce_args(dim, unbiased, correction, fn):
    if isinstance(dim, bool):  # torch.var(x, True): the unbiased flag given positionally
        return None, dim, correction
    if correction is not None and unbiased is not True and unbiased is not None:
        raise TypeError(f"{fn}(): pass either unbiased or correction, not both")
    return dim, unbiased, correction


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(var, mean) over dim, var with Bessel's correction (correction=1, or unbiased) by default."""
    dim, unbiased, correction = _reduce_args(dim, unbiased, correction, "var_mean")
    _floating_only(input, "var_mean")
    _norm_dims(dim, input.ndim)
    v = var(input, dim, unbiased if unbiased is not None else True, keepdim, correction)
    return v, ops.mean(input, dims=_dims(dim), keepdim=keepdim)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return ops.sqrt(v), m


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
    return ops.sum(input != 0, dims=_norm_dims(dim, input.ndim), keepdim=False)


def _all_any(input, dim, keepdim, want_all):
    dims = _norm_dims(dim, input.ndim) if dim is not None else []
    hits = ops.sum(input == 0 if want_all else input != 0, dims=dims, keepdim=keepdim)
    out = hits == 0 if want_all else hits > 0
    return out.to(dtype=_D.uint8) if input.dtype == _D.uint8 else out  # as PyTorch: uint8 in, uint8 out


def all(input, dim=None, keepdim=False):
    return _all_any(input, dim, keepdim, True)


def any(input, dim=None, keepdim=False):
    return _all_any(input, dim, keepdim, False)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector norms over dim (all entries by default): p = 'fro' or 2, inf, -inf, 0, or any p > 0.

    Gradients are 0 (not NaN) where the norm is 0, as PyTorch's."""
    x = input if dtype is None else input.to(dtype=dtype)
    if not x.is_floating_point():
        raise _C.DTypeError(f"norm(): input dtype should be floating point, got {x.dtype}")
    dims = _norm_dims(dim, x.ndim) if dim is not None else []
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use 'fro' or a number; 'nuc' needs matrix norms)")
    a = ops.abs(x)
    if p == math.inf:
        return ops.max(a, dims=dims, keepdim=keepdim)
    if p == -math.inf:
        return ops.min(a, dims=dims, keepdim=keepdim)
    if p == 0:
        return ops.sum((x != 0).to(dtype=x.dtype), dims=dims, keepdim=keepdim)
    if p == 1:
        return ops.sum(a, dims=dims, keepdim=keepdim)
    total = ops.sum(x * x if p == 2 else a ** float(p), dims=dims, keepdim=keepdim)
    zero = total == 0
    safe = where(zero, 1.0, total)
    root = ops.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return where(zero, 0.0, root)


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
    if input.numel() == 0 and not dims:
        raise _C.ValueError("aminmax(): cannot compute aminmax over an empty tensor without a dim")
    return _MinMax((ops.min(input, dims=dims, keepdim=keepdim), ops.max(input, dims=dims, keepdim=keepdim)))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype=dtype)
    dims = _norm_dims(dim, x.ndim)
    if x.is_floating_point():
        x = where(x != x, 0.0, x)
    return ops.sum(x, dims=dims, keepdim=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype=dtype)
    _floating_only(x, "nanmean")
    dims = _norm_dims(dim, x.ndim)
    count = ops.sum((x == x).to(dtype=x.dtype), dims=dims, keepdim=keepdim)
    return nansum(x, dims, keepdim) / count


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
    d = _norm_dim(dim, input.ndim)
    if input.ndim == 0:
        raise _C.ShapeError("diff(): expects input to be at least one-dimensional")
    if n < 0:
        raise ValueError(f"diff(): order n must be non-negative but got {n}")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = ops.concat(parts, dim=d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = _slice(x, d, 1, size), _slice(x, d, 0, size - 1)
        x = ops.logical_xor(hi, lo) if x.dtype == _D.bool else hi - lo
    return x



__all__ = ["var_mean", "std_mean", "logsumexp", "median", "nanmedian", "mode", "kthvalue", "count_nonzero", "all",
           "any", "norm", "aminmax", "nansum", "nanmean", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
           "diff"]
