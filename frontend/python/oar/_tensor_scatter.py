"""Indexing and scatter functions of oar (PyTorch's names): take, take_along_dim, scatter, scatter_reduce,
index_copy/reduce/fill/put, masked_scatter, put.

Written with gather, index_select, scatter_add, sort and where, which run on every device and have gradient
rules: a plain scatter keeps the last write to a target (found by a stable sort of the index), a reduction
combines within runs of equal targets."""
import builtins

from . import _C
from ._C import Tensor
from ._ops import ops
from ._functions import _inplace_method
from ._shape_common import _D, _install_methods, _wrap_dim, _zeros


def take_along_dim(x, indices, dim=None):
    """gather with x and indices broadcast in every dim but `dim` (the flattened x when dim is None)."""
    return ops.take_along_dim(x, indices, dim=[] if dim is None else [_wrap_dim(dim, x.ndim)])


def take(x, index):
    """x flattened, read at `index` (negative indices count from the end); the result has index's shape."""
    return ops.take(x, index)


def _check_scatter(name, x, dim, index, src):
    d = _wrap_dim(dim, x.ndim)
    if index.is_floating_point() or index.dtype == _D.bool:
        raise _C.DTypeError(f"{name}(): Expected dtype int64 for index, got {index.dtype}")
    if index.ndim != x.ndim or (src is not None and src.ndim != x.ndim):
        raise _C.ShapeError(f"{name}: index {list(index.shape)} and src {list(src.shape) if src is not None else ''}"
                            f" must have the same number of dimensions as self {list(x.shape)}")
    for k in range(index.ndim):
        if (src is not None and index.shape[k] > src.shape[k]) or (k != d and index.shape[k] > x.shape[k]):
            raise _C.ShapeError(f"{name}: index {list(index.shape)} is larger than self {list(x.shape)} apart from "
                                f"dimension {d}, or larger than src {list(src.shape) if src is not None else ''}")
    return d


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_into(x, d, index, src, reduce, include_self):
    """x with src[..j..] combined into x[..index[..j..]..] along d (reduce None: overwritten): the catalog's
    scatter and scatter_reduce (runtime/src/catalog/composites_scatter.cpp)."""
    src = src.to(x.dtype)
    if reduce is None:
        return ops.scatter(x, index, src, dim=d)
    return ops.scatter_reduce(x, index, src, dim=d, reduce=reduce, include_self=bool(include_self))


def scatter(x, dim, index, src=None, value=None, *, reduce=None):
    """x with x[..index[i][j]..] = src[i][j] along dim (the last write wins for a repeated index);
    src may be a number (value=); reduce 'add' / 'multiply' combine instead."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 'src' or 'value'")
    if not isinstance(src, Tensor):
        src = _C.call("fill", [], {"shape": list(index.shape), "value": float(src), "dtype": x.dtype}, x.device)
    d = _check_scatter("scatter", x, dim, index, src)
    if reduce not in (None, "add", "multiply"):
        raise ValueError(f"reduce argument must be either add or multiply, got {reduce!r}")
    return _scatter_into(x, d, index, src, {None: None, "add": "sum", "multiply": "prod"}[reduce], True)


def scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCTIONS:
        raise ValueError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce!r}")
    d = _check_scatter("scatter_reduce", x, dim, index, src)
    return _scatter_into(x, d, index, src, reduce, include_self)


def _along_dim_index(x, d, index, source, name):
    """index (1-D, one entry per slice of source along d) expanded to source's shape, as scatter takes it."""
    if index.ndim > 1 or index.is_floating_point():
        raise _C.ShapeError(f"{name}(): Index should have dimension 1 or 0 and an integer dtype")
    index = index.reshape(-1)
    if source.ndim != builtins.max(x.ndim, 1) and not (x.ndim == 0 and source.ndim == 0):
        raise _C.ShapeError(f"{name}(): source {list(source.shape)} and self {list(x.shape)} must have the same "
                            f"number of dimensions")
    want = list(x.shape) if x.ndim else [1]
    want[d] = index.shape[0]
    src = source.reshape(want) if x.ndim == 0 and source.numel() == 1 else source
    if list(src.shape) != want:
        raise _C.ShapeError(f"{name}(): source {list(source.shape)} must be self's shape {list(x.shape)} with "
                            f"dim {d} of size {index.shape[0]}")
    view = [1] * len(want)
    view[d] = -1
    return index.reshape(view).expand(want), src


def _check_index_range(index, size, d, name):
    """IndexError, PyTorch's, for an index outside [0, size) (a negative one included: these ops don't wrap
    around). Reads the index on the host (one sync); a traced graph can't, and is not checked."""
    if _C.is_tracing() or index.numel() == 0:
        return
    flat = index.reshape(-1)
    bad = ops.logical_or(flat < 0, flat >= size)
    if bool(ops.sum(bad).item()):
        value = int(ops.masked_select(flat, bad).reshape(-1)[0].item())
        raise _C.IndexError(f"{name}(): index {value} is out of bounds for dimension {d} with size {size}")


def index_copy(x, dim, index, source):
    d = _wrap_dim(dim, x.ndim)
    _along_dim_index(x, d, index, source, "index_copy")  # PyTorch's messages
    _check_index_range(index, x.shape[d] if x.ndim else 1, d, "index_copy_")
    return ops.index_copy(x, index, source.to(dtype=x.dtype) if source.dtype != x.dtype else source, dim=d)


def index_reduce(x, dim, index, source, reduce, *, include_self=True):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"index_reduce(): reduce must be one of prod, mean, amax or amin, got {reduce!r}")
    d = _wrap_dim(dim, x.ndim)
    flat = x.reshape(1) if x.ndim == 0 else x
    idx, src = _along_dim_index(x, d, index, source, "index_reduce")
    return _scatter_into(flat, d, idx, src, reduce, include_self).reshape(x.shape)


def index_fill(x, dim, index, value):
    """x with every slice along dim named in index set to value (a number, or a 0-d tensor, which gets a
    gradient too)."""
    d = _wrap_dim(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if isinstance(value, Tensor) and value.ndim:
        raise _C.ShapeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                            f"{value.ndim} dimension(s)")
    if not isinstance(value, Tensor):
        return ops.index_fill(x, index, dim=d, value=float(value))
    chosen = ops.index_fill(_zeros([n], _D.bool, x.device), index, dim=0, value=1.0)
    view = [1] * x.ndim
    if x.ndim:
        view[d] = n
    return ops.where(chosen.reshape(view), value.to(dtype=x.dtype), x)


def index_put(x, indices, values, accumulate=False):
    """x with x[indices] = values (or += with accumulate, repeated positions summing)."""
    return x.clone().index_put_(tuple(indices), values, accumulate)


def masked_fill(x, mask, value):
    return x.masked_fill(mask, value)


def masked_scatter(x, mask, source):
    """x with the positions where mask (broadcast to x) is True filled, in order, from source's elements."""
    if mask.dtype != _D.bool:
        raise _C.DTypeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    return ops.masked_scatter(x, mask, source)


def put(x, index, source, accumulate=False):
    """x flattened with flat[index] = source (or +=), negative indices counting from the end."""
    return ops.put(x, index, source, accumulate=bool(accumulate))


__all__ = ["take_along_dim", "take", "scatter", "scatter_reduce", "index_copy", "index_reduce", "index_fill",
           "index_put", "masked_fill", "masked_scatter", "put"]

_install_methods(globals(), (
    "take_along_dim", "take", "scatter", "scatter_reduce", "index_copy", "index_reduce", "index_fill",
    "index_put", "masked_scatter", "put"),
    ("scatter", "scatter_reduce", "index_copy", "index_reduce", "index_fill", "masked_scatter", "put"),
    _inplace_method)
