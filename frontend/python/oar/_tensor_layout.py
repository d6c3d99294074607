"""Shape and layout functions of oar (PyTorch's names): views and dim moves, flips and rolls, repeats,
triangles and diagonals, broadcasting, stacking and splitting.

Built from views, concat, index_select, where and the catalog's tril/triu, which run on every device and
have gradient rules; only size bookkeeping is done in Python. Each is also a Tensor method where PyTorch has
one (end of the file)."""
import builtins
import itertools
import math
import numbers

from . import _C
from ._C import Tensor
from ._ops import ops
from ._functions import _inplace_method
from ._shape_common import (_arange, _c_narrow, _c_squeeze, _cat, _check_tensor, _dim_list, _index_tensor,
                            _install_methods, _scalar, _sizes, _tensor_args, _wrap_dim, broadcast_shapes)


# ---- shape ----
def unsqueeze(x, dim):
    return x.unsqueeze(dim)


def squeeze(x, dim=None):
    """Drops size-1 dims: all of them, one, or those in a tuple (others are kept, as in PyTorch)."""
    if dim is None or isinstance(dim, numbers.Integral):
        if dim is not None:
            _wrap_dim(dim, x.ndim)
        return _c_squeeze(x, dim)
    for d in sorted(_dim_list(dim, x.ndim), reverse=True):
        x = _c_squeeze(x, d)
    return x


def movedim(x, source, destination):
    """x with dims `source` moved to positions `destination`; the other dims keep their order."""
    src, dst = _dim_list(source, x.ndim), _dim_list(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                         f"contain the same number of dims as destination ({list(dst)} dims)")
    return ops.movedim(x, source=src, destination=dst)


moveaxis = movedim


def transpose(x, dim0, dim1):
    return x.transpose(dim0, dim1)


swapaxes = swapdims = transpose


def t(x):
    return x.t()


def adjoint(x):
    """The conjugate transpose of the last two dims (oar tensors are real: the transpose)."""
    if x.ndim < 2:
        raise _C.ShapeError(f"adjoint() expects a tensor with at least 2 dimensions, got {x.ndim}")
    return x.transpose(-2, -1)


def ravel(x):
    return x.reshape(-1)


def narrow(x, dim, start, length):
    d = _wrap_dim(dim, x.ndim)
    start = int(start)
    if start < 0:
        start += x.shape[d]
    return _c_narrow(x, d, start, int(length))


def select(x, dim, index):
    return x.select(dim, int(index))


def unbind(x, dim=0):
    d = _wrap_dim(dim, x.ndim)
    return tuple(x.select(d, i) for i in range(x.shape[d]))


def _reversed(x, d):
    n = x.shape[d]
    return ops.index_select(x, (n - 1) - _arange(n, x.device), dim=d) if n > 1 else x


def flip(x, dims):
    return ops.flip(x, dims=_dim_list(dims, x.ndim))


def fliplr(x):
    if x.ndim < 2:
        raise _C.ShapeError(f"fliplr: input must have at least 2 dimensions, got {x.ndim}")
    return _reversed(x, 1)


def flipud(x):
    if x.ndim < 1:
        raise _C.ShapeError("flipud: input must have at least 1 dimension")
    return _reversed(x, 0)


def roll(x, shifts, dims=None):
    """Elements shifted along dims (wrapping around); with dims=None, along the flattened tensor."""
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else [int(s) for s in shifts]
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: with dims=None, shifts must hold one value, got {len(shifts)}")
        return ops.roll(x, shifts=shifts)
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
    return ops.roll(x, shifts=shifts, dims=[_wrap_dim(d, x.ndim) for d in dims])


def rot90(x, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise ValueError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise _C.ShapeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = _wrap_dim(dims[0], x.ndim), _wrap_dim(dims[1], x.ndim)
    if d0 == d1:
        raise ValueError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return _reversed(x, d1).transpose(d0, d1)
    if k == 2:
        return flip(x, [d0, d1])
    if k == 3:
        return _reversed(x, d0).transpose(d0, d1)
    return x


def repeat(x, *sizes):
    """Tensor.repeat: x tiled sizes[i] times along dim i (sizes may add leading dims)."""
    reps = _sizes(sizes)
    if len(reps) < x.ndim:
        raise _C.ShapeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                            f"of tensor ({len(reps)} < {x.ndim})")
    if any(r < 0 for r in reps):
        raise ValueError(f"repeat: repeats must be non-negative, got {reps}")
    shape = [1] * (len(reps) - x.ndim) + list(x.shape)
    interleaved = [v for r, s in zip(reps, shape) for v in (1, s)]
    expanded = [v for r, s in zip(reps, shape) for v in (r, s)]
    return x.reshape(interleaved).expand(expanded).reshape([r * s for r, s in zip(reps, shape)])


def tile(x, dims, *more):
    """torch.tile(x, dims) / x.tile(dims) / x.tile(2, 1): dims as one sequence or as separate ints."""
    reps = _sizes((dims,) + more)
    return repeat(x, [1] * (x.ndim - len(reps)) + reps)


def repeat_interleave(x, repeats=None, dim=None, *, output_size=None):
    """Each element repeated `repeats` times along dim (flattened when dim is None); repeats may be a tensor
    of per-element counts. repeat_interleave(counts) gives the indices 0, 0, 1, ... themselves."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = x
        return repeat_interleave(_arange(counts.numel(), counts.device), counts, 0, output_size=output_size)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, numbers.Integral):
        if repeats < 0:
            raise ValueError(f"repeat_interleave: repeats can not be negative, got {repeats}")
        y = ops.repeat_interleave(x, repeats=int(repeats), dim=[] if dim is None else [_wrap_dim(dim, x.ndim)])
        d = 0 if dim is None else _wrap_dim(dim, y.ndim)
    else:
        if not isinstance(repeats, Tensor):  # a sequence of counts
            repeats = _index_tensor([int(c) for c in repeats], x.device)
        y = ops.repeat_interleave_counts(x, repeats, dim=[] if dim is None else [_wrap_dim(dim, x.ndim)])
        d = 0 if dim is None else _wrap_dim(dim, y.ndim)
    if output_size is not None and y.shape[d] != output_size:
        raise _C.ShapeError(f"repeat_interleave: output_size {output_size} does not match the result's size "
                            f"{y.shape[d]}")
    return y


def _triangle(name, x, diagonal):
    if x.ndim < 2:
        raise _C.ShapeError(f"{name}: input tensor must have at least 2 dimensions, got {x.ndim}")
    if not isinstance(diagonal, numbers.Integral) or isinstance(diagonal, bool):
        raise TypeError(f"{name}(): diagonal must be an int, got {type(diagonal).__name__}")
    if x.is_floating_point():
        return getattr(ops, name)(x, diagonal=int(diagonal))
    # The catalog's tril/triu kernel lives in the OpenCL linalg program, which fails to build for integer and
    # bool types (its sqrt calls are ambiguous there): those go through a mask of column - row instead.
    rows = _arange(x.shape[-2], x.device).reshape(-1, 1)
    cols = _arange(x.shape[-1], x.device).reshape(1, -1)
    keep = (cols - rows <= diagonal) if name == "tril" else (cols - rows >= diagonal)
    return ops.where(keep, x, _scalar(0, x.dtype, x.device))


def tril(x, diagonal=0):
    """The lower triangle of the last two dims (entries with col - row <= diagonal), the rest zero."""
    return _triangle("tril", x, diagonal)


def triu(x, diagonal=0):
    """The upper triangle of the last two dims (entries with col - row >= diagonal), the rest zero."""
    return _triangle("triu", x, diagonal)


def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    """Matrices whose `offset` diagonal (in dims dim1, dim2 of the result) holds the last dim of x."""
    return ops.diag_embed(x, offset=int(offset), dim1=int(dim1), dim2=int(dim2))


def diagonal(x, offset=0, dim1=0, dim2=1):
    """The `offset` diagonal of dims dim1, dim2, as a new last dim (a view where the layout allows)."""
    return ops.diagonal(x, offset=int(offset), dim1=int(dim1), dim2=int(dim2))


def diag(x, diagonal=0):
    """A 1-D x as the `diagonal` of a square matrix, or a 2-D x's `diagonal` as 1-D."""
    return ops.diag(x, diagonal=int(diagonal))


def diagflat(x, offset=0):
    return diag_embed(x.reshape(-1), offset)


def trace(x):
    if x.ndim != 2:
        raise _C.ShapeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return diagonal(x).sum()


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids (expanded views) of 1-D (or 0-d) tensors; indexing 'xy' swaps the first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for x in tensors:
        _check_tensor(x, "meshgrid")
    grids = ops.meshgrid(list(tensors), indexing=indexing)
    return tuple(grids) if isinstance(grids, (tuple, list)) else (grids,)  # one tensor in: the op returns it alone


def broadcast_to(x, shape):
    return x.expand(_sizes((shape,)))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(x.shape for x in tensors))
    return tuple(x.expand(shape) for x in tensors)


def unflatten(x, dim, sizes):
    d = _wrap_dim(dim, x.ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise ValueError("unflatten: sizes must be non-empty")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (sizes.count(-1) == 0 and known != x.shape[d]) or \
            (sizes.count(-1) == 1 and (known == 0 or x.shape[d] % known)):
        raise _C.ShapeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                            f"({x.shape[d]}) in the input tensor")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[d] // known
    return x.reshape(list(x.shape[:d]) + sizes + list(x.shape[d + 1:]))


def _at_least(name, shape_of):
    def fn(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        out = tuple(x.reshape(shape_of(list(x.shape))) for x in _tensor_args(tensors, name))
        return out[0] if single else out
    fn.__name__ = name
    return fn


atleast_1d = _at_least("atleast_1d", lambda s: s if len(s) >= 1 else [1])
atleast_2d = _at_least("atleast_2d", lambda s: s if len(s) >= 2 else [1] * (2 - len(s)) + s)
atleast_3d = _at_least("atleast_3d",
                        lambda s: s if len(s) >= 3 else {0: [1, 1, 1], 1: [1] + s + [1], 2: s + [1]}[len(s)])


def hstack(tensors):
    tensors = [atleast_1d(x) for x in _tensor_args((tensors,), "hstack")]
    return _cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return _cat([atleast_2d(x) for x in _tensor_args((tensors,), "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    return _cat([atleast_3d(x) for x in _tensor_args((tensors,), "dstack")], 2)


def column_stack(tensors):
    tensors = _tensor_args((tensors,), "column_stack")
    return _cat([x.reshape(-1, 1) if x.ndim <= 1 else x for x in tensors], 1)


def tensor_split(x, indices_or_sections, dim=0):
    """Views of x along dim: `sections` nearly equal parts (the first n % sections one longer), or the parts
    between the given indices."""
    d = _wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        raise _C.ShapeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    n = x.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.is_floating_point() or spec.ndim > 1:
            raise TypeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                            "one-dimensional integer tensor")
        spec = int(spec.item()) if spec.ndim == 0 else [int(v) for v in spec.tolist()]
    if isinstance(spec, numbers.Integral):
        if spec <= 0:
            raise ValueError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(n, int(spec))
        bounds = list(itertools.accumulate([q + 1] * r + [q] * (int(spec) - r), initial=0))
    else:
        cuts = [builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n) for i in spec]
        bounds = [0] + cuts + [n]
    return tuple(x.narrow(d, s, builtins.max(e - s, 0)) if e > s else x.narrow(d, builtins.min(s, n), 0)
                 for s, e in zip(bounds[:-1], bounds[1:]))


def _split_along(name, dim, min_ndim):
    def fn(x, indices_or_sections):
        if x.ndim < min_ndim:
            raise _C.ShapeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
                                f"tensor with {x.ndim} dimensions!")
        d = dim if x.ndim >= 2 or name != "hsplit" else 0
        if isinstance(indices_or_sections, numbers.Integral):
            s = int(indices_or_sections)
            if s == 0 or x.shape[d] % s:
                raise _C.ShapeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                    f"dimension {x.shape[d]} is not divisible by the split_size {s}!")
        return tensor_split(x, indices_or_sections, d)
    fn.__name__ = name
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


__all__ = [
    "unsqueeze", "squeeze", "movedim", "moveaxis", "transpose", "swapaxes", "swapdims", "t", "adjoint", "ravel",
    "narrow", "select", "unbind", "flip", "fliplr", "flipud", "roll", "rot90", "tile", "repeat_interleave",
    "tril", "triu", "diag_embed", "diagonal", "diag", "diagflat", "trace", "meshgrid", "broadcast_to",
    "broadcast_tensors", "unflatten", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack",
    "dstack", "column_stack", "tensor_split", "hsplit", "vsplit", "dsplit",
]

_install_methods(globals(), (
    "squeeze", "movedim", "moveaxis", "swapaxes", "swapdims", "adjoint", "ravel", "narrow", "unbind", "flip",
    "fliplr", "flipud", "roll", "rot90", "repeat", "tile", "repeat_interleave", "tril", "triu", "diag_embed",
    "diagonal", "diag", "diagflat", "trace", "broadcast_to", "unflatten", "tensor_split", "hsplit", "vsplit",
    "dsplit"), ("tril", "triu"), _inplace_method)


def _flip_method(self, *dims, **kwargs):
    """Tensor.flip(0, 1) or Tensor.flip((0, 1)) / flip(dims=[0]), as torch's method takes both."""
    if kwargs:
        if dims or set(kwargs) != {"dims"}:
            raise TypeError(f"flip() takes the dims as ints, a sequence or dims=, got {dims} and {kwargs}")
        dims = kwargs["dims"]
    elif len(dims) == 1 and not isinstance(dims[0], numbers.Integral):
        dims = dims[0]
    return flip(self, dims)


Tensor.flip = _flip_method
Tensor.mH = property(adjoint)
Tensor.H = property(lambda self: self.t() if self.ndim == 2 else adjoint(self))
