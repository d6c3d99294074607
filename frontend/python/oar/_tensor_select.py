"""PyTorch sort and selection functions: sort, topk, nonzero, masked_select, searchsorted, bucketize, histc,
bincount, unique. Only ops whose output shape depends on the data (nonzero, masked_select, unique, bincount,
histc's automatic range) read a count or a bound back to the host; the results stay on the input's device."""
from . import _C
from ._C import Tensor
from ._functions import _ValuesIndices, result_type
from ._ops import ops
from ._tensor_math_base import (_D, _floating_only, _is_int, _norm_dim)


def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) along dim; the sort is always stable, NaN sorts above every number."""
    if isinstance(dim, bool):  # sort(x, stable, ...) is not a torch form, but dim=True would pass as 1
        raise TypeError("sort(): dim must be an int")
    d = _norm_dim(dim, input.ndim)
    x = input.to(dtype=_D.uint8) if input.dtype == _D.bool else input
    values, indices = ops.sort(x, dim=d, descending=bool(descending))
    return _ValuesIndices((values.to(dtype=_D.bool) if input.dtype == _D.bool else values, indices))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable)[1]


def msort(input):
    return sort(input, 0)[0]


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) entries along dim, in order, and their positions."""
    d = _norm_dim(dim, input.ndim)
    return _ValuesIndices(ops.topk(input, k=int(k), dim=d, largest=bool(largest), sorted=bool(sorted)))


def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero entries, in row-major order: (n, ndim), or one (n,) tensor per dim."""
    idx = ops.nonzero(input)
    if as_tuple:
        if input.ndim == 0:
            return (_C.tensor([0] * idx.shape[0], _D.int64, input.device),)
        return tuple(idx.select(1, d) for d in range(input.ndim))
    return idx


def argwhere(input):
    return nonzero(input)


def masked_select(input, mask):
    """The entries of input where mask (broadcast together) is true, as a 1-D tensor."""
    if mask.dtype != _D.bool:
        raise _C.DTypeError(f"masked_select(): expected a bool mask, got {mask.dtype}")
    return ops.masked_select(input, mask)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Insertion points of input into the sorted last dim of sorted_sequence (compares every pair)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted(): side='left' and right=True contradict each other")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = ops.gather(seq, sorter, dim=-1)
    scalar = not isinstance(input, Tensor)
    values = _C.tensor(input, seq.dtype if not isinstance(input, float) else result_type(seq, input),
                       seq.device) if scalar else input
    if seq.ndim > 1 and (values.ndim != seq.ndim or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        raise _C.ShapeError(f"searchsorted(): boundaries {tuple(seq.shape)} and input {tuple(values.shape)} must "
                            "have the same leading dims (or boundaries must be 1-D)")
    out = ops.searchsorted(seq, values, right=bool(right))
    return out.to(dtype=_D.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise _C.ShapeError(f"bucketize(): boundaries must be 1-D, got shape {tuple(boundaries.shape)}")
    if not isinstance(input, Tensor):
        return searchsorted(boundaries, input, out_int32=out_int32, right=right)
    out = ops.bucketize(input, boundaries, right=bool(right))
    return out.to(dtype=_D.int32) if out_int32 else out


def histc(input, bins=100, min=0, max=0):
    """Counts of input in `bins` equal bins over [min, max] (the data's range when min == max); others ignored."""
    _floating_only(input, "histc")
    if bins <= 0:
        raise ValueError(f"histc(): bins must be > 0, got {bins}")
    if float(min) > float(max):
        raise ValueError(f"histc(): max ({float(max)}) must be larger than min ({float(min)})")
    return ops.histc(input, bins=int(bins), min=float(min), max=float(max))


def bincount(input, weights=None, minlength=0):
    """How often each value 0..max occurs in a 1-D non-negative integer tensor (or the sum of its weights)."""
    if input.ndim != 1 or not _is_int(input):
        raise _C.ValueError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise ValueError(f"bincount(): minlength should be >= 0, got {minlength}")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise _C.ShapeError(f"bincount(): weights {tuple(weights.shape)} should have the input's shape "
                            f"{tuple(input.shape)}")
    return ops.bincount(input, weights, minlength=int(minlength))


def _unique(input, dim, ordered, return_inverse, return_counts):
    op = ops.unique if ordered else ops.unique_consecutive
    values, inverse, counts = op(input, dim=[] if dim is None else [_norm_dim(dim, input.ndim)])
    out = [values] + ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct entries (or slices along dim) in ascending order, with the inverse map and counts if asked.

    oar always sorts (sorted=False is allowed, as PyTorch's order is then unspecified)."""
    return _unique(input, dim, True, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive entries (or slices along dim) to one."""
    return _unique(input, dim, False, return_inverse, return_counts)



__all__ = ["sort", "argsort", "msort", "topk", "nonzero", "argwhere", "masked_select", "searchsorted", "bucketize",
           "histc", "bincount", "unique", "unique_consecutive"]
