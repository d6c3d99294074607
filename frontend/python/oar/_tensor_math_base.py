"""Helpers shared by the tensor-math modules (_tensor_math, _tensor_bitwise, _tensor_reduce, _tensor_select):
dim normalisation, broadcasting of shapes, 0-d constants on an operand's device, and dtype checks."""
import builtins
import numbers

from . import _C
from ._functions import _dims
from ._ops import ops

_D = _C.dtype
_INTS = (_D.int8, _D.uint8, _D.int32, _D.int64)
def _scalar(value, like, dtype=None):
    """A 0-d tensor of `value` with like's dtype (or dtype) and device."""
    return _C.tensor(value, dtype or like.dtype, like.device)


def _is_int(x):
    return x.dtype in _INTS


def _as_float(x):
    """Integers and bool are computed in the default float dtype, as PyTorch's floating ops do."""
    return x if x.is_floating_point() else x.to(dtype=_D.float32)



def _norm_dim(dim, ndim):
    """dim in [0, ndim) (a 0-d tensor takes 0 or -1), or PyTorch's IndexError."""
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise _C.IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def _norm_dims(dim, ndim):
    return sorted({_norm_dim(d, ndim) for d in _dims(dim)})


def _broadcast_shape(*shapes):
    """The shape NumPy's broadcasting rules give these shapes (ShapeError when they don't fit)."""
    out = []
    for sizes in zip(*[[1] * (builtins.max(map(len, shapes)) - len(s)) + list(s) for s in shapes]):
        big = builtins.max(sizes)
        if builtins.any(n not in (1, big) for n in sizes):
            raise _C.ShapeError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} can't be broadcast together")
        out.append(0 if 0 in sizes else big)
    return out


def _no_bool(x, fn):
    if x.dtype == _D.bool:
        raise _C.DTypeError(f"{fn}(): bool tensors are not supported; convert to an integer dtype")


def _floating_only(x, fn):
    if not x.is_floating_point():
        raise _C.DTypeError(f"{fn}(): expected a floating point tensor, got {x.dtype}")



def _false_like(x):
    return ops.fill(shape=list(x.shape), value=0.0, dtype=_D.bool, device=x.device)


def _slice(x, dim, start, end):
    """x[start:end] along dim, as a view (the catalog op, so no Python override of Tensor.narrow is involved)."""
    return ops.slice(x, dim=dim, start=int(start), end=int(end))
