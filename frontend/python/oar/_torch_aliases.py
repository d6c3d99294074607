"""PyTorch's other names for what oar already has, and the small functions and methods scripts expect.

torch.<f> forms of nn.functional ops (conv1d, pixel_shuffle, cosine_similarity, selu_, ...), NumPy-style
aliases (arccos, arctan2, multiply, subtract, ...), the constants pi/e/inf/nan, clone/detach/empty_like/
zero_/fill_ and the is_* predicates as functions, conj/real/resolve_conj for real tensors, and Tensor
methods bmm, sum_to_size, storage/untyped_storage, the in-place view ops (unsqueeze_, t_, as_strided_, ...), split_with_sizes, new, __contains__, __iter__, __pos__, __ipow__ and the
missing in-place binary forms (atan2_, hypot_, copysign_).
"""
import builtins
import math
import numbers

from . import _C, _storage
from ._C import Tensor
from ._storage import TypedStorage, UntypedStorage  # noqa: F401  (torch.TypedStorage, torch.UntypedStorage)
from ._functions import _inplace_method

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan


def _functional(name):
    def call(*args, **kwargs):
        from .nn import functional as F
        return getattr(F, name)(*args, **kwargs)
    call.__name__ = name
    call.__doc__ = f"torch.{name}: nn.functional.{name}."
    return call


# torch.<name> is nn.functional.<name> with the same signature for these
_SAME_AS_FUNCTIONAL = ("conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                       "pixel_shuffle", "pixel_unshuffle", "pairwise_distance", "cosine_similarity", "prelu",
                       "selu", "celu", "threshold", "hardshrink", "rrelu", "alpha_dropout", "group_norm",
                       "adaptive_avg_pool1d", "avg_pool1d", "max_pool1d", "max_pool3d", "pdist", "channel_shuffle")
for _name in _SAME_AS_FUNCTIONAL:
    globals()[_name] = _functional(_name)


def _functional_inplace(name):
    def call(input, *args, **kwargs):
        return input.copy_(_functional(name)(input, *args, **kwargs))
    call.__name__ = name + "_"
    return call


selu_ = _functional_inplace("selu")
celu_ = _functional_inplace("celu")
threshold_ = _functional_inplace("threshold")
rrelu_ = _functional_inplace("rrelu")


def _alias(target):
    import oar
    return getattr(oar, target)


_ALIASES = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh", "arcsinh": "asinh",
            "arctanh": "atanh", "arctan2": "atan2", "multiply": "mul", "subtract": "sub"}


def clone(input, *, memory_format=None):
    from ._tensor_conversion import _in_format
    return _in_format(input.clone(), memory_format) if memory_format is not None else input.clone()


def detach(input):
    return input.detach()


def as_strided(input, size, stride, storage_offset=None):
    return input.as_strided(size, stride, storage_offset)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """A new tensor of input's shape (oar zero-fills what torch leaves uninitialised)."""
    from ._creation import zeros
    return zeros(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    from ._creation import zeros
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def zero_(input):
    return input.zero_()


def fill_(input, value):
    return input.fill_(value)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    from ._creation import full
    from ._creation import get_default_dtype
    return full((), s, dtype or get_default_dtype(), device, requires_grad)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return False


def is_signed(input):
    return input.is_signed()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def is_storage(obj):
    return isinstance(obj, (_storage.TypedStorage, _storage.UntypedStorage))


def conj(input):
    """The complex conjugate: a real tensor itself (oar has no complex dtypes)."""
    return input


resolve_conj = resolve_neg = conj_physical = conj


def real(input):
    return input


def seed():
    """Seeds the generator from OS entropy and returns the seed (torch.seed)."""
    import os
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    _C.manual_seed(s)
    return s


def typename(obj):
    return obj.type() if isinstance(obj, Tensor) else builtins.type(obj).__name__


def _assert(condition, message):
    """torch._assert: raises AssertionError(message) unless condition (a bool or one-element tensor) holds."""
    if not bool(condition):
        raise AssertionError(message)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: the model or function itself, run eagerly (torch.compile does not change results;
    oar's own compilation is oar.jit.to_static). Usable as @compile and @compile(mode=...)."""
    if model is None:
        return lambda fn: fn
    return model


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """Accepts torch's hint ('highest', 'high', 'medium'); oar's float32 matmuls stay full precision."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid float32 matmul precision: {precision!r} (highest, high or medium)")
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: obj itself when it is a tensor that already matches (unless copy=True), else a tensor
    made from it (copy=False refuses to copy)."""
    from ._creation import tensor
    if isinstance(obj, Tensor):
        same = (dtype is None or _C.to_dtype(dtype) == obj.dtype) and (
            device is None or _C.to_device(device) == obj.device)
        if same and not copy:
            return obj.requires_grad_(True) if requires_grad and not obj.requires_grad else obj
        if copy is False:
            raise ValueError("asarray: copy=False but the tensor needs a dtype or device change")
        out = obj.to(device=device, dtype=dtype)
        out = out.clone() if out is obj else out
        return out.detach().requires_grad_(requires_grad)
    return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor of the buffer's bytes read as dtype (a copy; torch's shares the buffer)."""
    import numpy as np
    from ._creation import tensor
    codes = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int8": "i1", "uint8": "u1", "int32": "<i4",
             "int64": "<i8", "bool": "?"}
    name = str(dtype).split(".")[-1]
    if name not in codes:
        raise _C.DTypeError(f"frombuffer: dtype {dtype} is not supported")
    array = np.frombuffer(buffer, dtype=codes[name], count=count, offset=offset)
    if array.size == 0:
        raise ValueError("both buffer length and count can't be zero")
    return tensor(array.copy(), dtype=dtype, requires_grad=requires_grad)


# ---- Tensor methods ----

def _contains(self, element):
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {builtins.type(element)}.")


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _sum_to_size(self, *size):
    """Sums the broadcast dims away so the result has `size` (which must broadcast to self)."""
    from ._creation import _shape
    want = _shape(size)
    lead = self.ndim - len(want)
    if lead < 0 or any(w not in (1, s) for w, s in zip(want, self.shape[lead:])):
        raise _C.ShapeError(f"size {want} is not expandable to size {list(self.shape)}")
    dims = list(range(lead)) + [lead + i for i, w in enumerate(want) if w == 1 and self.shape[lead + i] != 1]
    out = self.sum(dim=dims, keepdim=True) if dims else self
    return out.reshape(*want)


def _new(self, *args, **kwargs):
    """The legacy t.new(...): new(sizes...) a tensor of those sizes, new(data) one holding data, t's dtype
    and device."""
    from ._shape_common import Size
    if len(args) == 1 and isinstance(args[0], Size):  # t.new(t.size()): sizes, not data
        args = tuple(args[0])
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        return self.new_tensor(args[0], **kwargs)
    return self.new_empty(args, **kwargs) if args else self.new_empty((0,), **kwargs)


def _metadata_inplace(name, view):
    """t.unsqueeze_(d) and friends: t itself now shows view(t), with view(t)'s history under autograd (so a
    tracked non-leaf keeps its gradient path; a leaf that requires grad refuses, as any in-place op)."""
    def method(self, *args, **kwargs):
        return self._set_view_(view(self, *args, **kwargs))
    method.__name__ = name
    return method


def _resize_metadata(name, resize):
    """resize_/resize_as_: t shows a tensor of the new size (its leading values kept; may be new memory)."""
    def method(self, *args, **kwargs):
        from .autograd import is_grad_enabled
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(f"{name}(): cannot resize a tensor that autograd tracks; resize a detach()ed one")
        self.data = resize(self, *args, **kwargs)
        return self
    method.__name__ = name
    return method


def _resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: the first elements kept in row-major order, new ones zero (torch leaves them
    uninitialised)."""
    from ._creation import _shape, zeros
    want = _shape(sizes)
    n = 1
    for s in want:
        n *= s
    flat = self.detach().reshape(-1)
    if n <= flat.numel():
        return flat[:n].reshape(*want)
    from ._functions import cat
    return cat([flat, zeros(n - flat.numel(), dtype=self.dtype, device=self.device)]).reshape(*want)


def _binary_inplace(name):
    import oar
    return _inplace_method(getattr(oar, name))


_METHODS = {
    "bmm": lambda self, mat2: _alias("bmm")(self, mat2),
    "sum_to_size": _sum_to_size,
    "split_with_sizes": lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim),
    "new": _new,
    "__contains__": _contains,
    "__iter__": _iter,
    "__pos__": lambda self: self.positive(),
    "conj": conj, "resolve_conj": conj, "resolve_neg": conj, "conj_physical": conj,
    "real": property(real),
    "unsqueeze_": _metadata_inplace("unsqueeze_", lambda t, dim: t.unsqueeze(dim)),
    "squeeze_": _metadata_inplace("squeeze_", lambda t, *dim: t.squeeze(*dim)),
    "t_": _metadata_inplace("t_", lambda t: t.t()),
    "transpose_": _metadata_inplace("transpose_", lambda t, d0, d1: t.transpose(d0, d1)),
    "swapaxes_": _metadata_inplace("swapaxes_", lambda t, d0, d1: t.transpose(d0, d1)),
    "swapdims_": _metadata_inplace("swapdims_", lambda t, d0, d1: t.transpose(d0, d1)),
    "as_strided_": _metadata_inplace("as_strided_", lambda t, size, stride, storage_offset=None:
                                     t.as_strided(size, stride, storage_offset)),
    "resize_": _resize_metadata("resize_", _resize_),
    "resize_as_": _resize_metadata("resize_as_", lambda t, other, memory_format=None: _resize_(t, *other.shape)),
    "storage": _storage.typed_storage,
    "untyped_storage": _storage.untyped_storage,
}


def _install():
    import oar
    for alias, target in _ALIASES.items():
        globals()[alias] = getattr(oar, target)
        setattr(Tensor, alias, getattr(Tensor, target))
        if hasattr(Tensor, target + "_"):
            setattr(Tensor, alias + "_", getattr(Tensor, target + "_"))
            globals()[alias + "_"] = getattr(Tensor, target + "_")
    for name in ("atan2", "hypot", "copysign"):
        if not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _binary_inplace(name))
    setattr(Tensor, "__ipow__", _inplace_method(oar.pow))
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)


__all__ = ["pi", "e", "inf", "nan", *_SAME_AS_FUNCTIONAL, "selu_", "celu_", "threshold_", "rrelu_", "clone",
           "detach", "as_strided", "TypedStorage", "UntypedStorage", "empty_like", "empty_strided", "zero_", "fill_", "scalar_tensor", "is_floating_point",
           "is_complex", "is_signed", "is_nonzero", "is_same_size", "is_storage", "conj", "resolve_conj",
           "resolve_neg", "conj_physical", "real", "seed", "typename", "_assert", "compile",
           "set_float32_matmul_precision", "get_float32_matmul_precision", "asarray", "frombuffer", *_ALIASES]
