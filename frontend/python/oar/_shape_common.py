"""Helpers shared by the shape, scatter, matrix and einsum modules, and oar.Size (Tensor.shape, size()).

The C++ binding's own narrow and squeeze are kept here before the Python versions replace them as Tensor
methods: a replacement must call these, never x.narrow(...), or it calls itself."""
import builtins
import math
import numbers
import operator

from . import _C
from ._C import Tensor
from ._ops import ops

_D = _C.dtype
_c_narrow = Tensor.narrow
_c_squeeze = Tensor.squeeze


def _wrap_dim(dim, ndim):
    """dim in [0, ndim) from PyTorch's [-ndim, ndim) (a 0-d tensor takes -1 and 0), or IndexError."""
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise _C.IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def _dim_list(dims, ndim):
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    out = [_wrap_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise ValueError(f"dims {dims} contain a repeated dimension")
    return out


def _zeros(shape, dtype, device):
    return _C.call("fill", [], {"shape": [int(s) for s in shape], "value": 0.0, "dtype": dtype}, device)


def _scalar(value, dtype, device):
    return _C.tensor(value, dtype, device)


def _arange(n, device):
    return _C.call("arange", [], {"start": 0.0, "end": float(n), "step": 1.0, "dtype": _D.int64}, device)


def _index_tensor(values, device):
    """A 1-D int64 tensor of index positions computed from sizes (not from tensor data)."""
    return _C.tensor(list(values), _D.int64, device) if values else _zeros([0], _D.int64, device)


def _cat(tensors, dim):
    return ops.concat(list(tensors), dim=dim)


def _check_tensor(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} expected a Tensor, got {type(x).__name__}")


def _tensor_args(tensors, name):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for x in tensors:
        _check_tensor(x, name)
    return tensors


def _sizes(args):
    """Sizes given as ints or as one tuple/list (x.repeat(2, 3) or x.repeat((2, 3)))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = tuple(args[0])
    return [int(a) for a in args]


def _install_methods(namespace, methods, inplace, inplace_method):
    """namespace[name] as Tensor.<name> for each method name, and its in-place form for each inplace name."""
    for name in methods:
        setattr(Tensor, name, namespace[name])
    for name in inplace:
        setattr(Tensor, name + "_", inplace_method(namespace[name]))


class Size(tuple):
    """A tensor's shape: a tuple of ints (torch.Size), as Tensor.shape and Tensor.size() return."""

    def __new__(cls, sizes=()):
        try:
            return super().__new__(cls, map(operator.index, sizes))  # ints (and int-like: bool, 0-d int tensors)
        except TypeError:
            pass
        for k, s in enumerate(sizes):  # torch's message, naming the first size that is not an int
            try:
                operator.index(s)
            except TypeError:
                raise TypeError(f"oar.Size() takes an iterable of 'int' (item {k} is '{type(s).__name__}')") from None
        raise TypeError(f"oar.Size() takes an iterable of 'int', not {type(sizes).__name__}")

    def numel(self):
        return math.prod(self)

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __repr__(self):
        return f"oar.Size({list(self)})"

    def __reduce__(self):
        return Size, (tuple(self),)


def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to (ints stand for 1-D shapes)."""
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    out = []
    for i in range(1, builtins.max((len(s) for s in shapes), default=0) + 1):
        size = 1
        for s in shapes:
            if len(s) >= i and s[-i] != 1:
                if size != 1 and s[-i] != size:
                    raise _C.ShapeError(f"Shape mismatch: objects cannot be broadcast to a single shape "
                                        f"({', '.join(str(list(s)) for s in shapes)})")
                size = s[-i]
        out.append(size)
    return Size(reversed(out))


# Tensor.shape and size() return oar.Size, as torch returns torch.Size.
_c_shape_get = Tensor.__dict__["shape"].fget
_c_size = Tensor.size


def _size(self, dim=None):
    if dim is None:
        return Size(_c_size(self))
    return _c_size(self, dim)


Tensor.shape = property(lambda self: Size(_c_shape_get(self)), doc="the tensor's shape, an oar.Size")
Tensor.size = _size
