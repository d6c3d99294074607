"""Conversions with torch's full signatures: Tensor.to(device, dtype, non_blocking=, copy=, memory_format=),
Tensor.type() and type(t), byte/char/short, cuda(), contiguous/is_contiguous(memory_format=), the memory
formats (contiguous_format, channels_last, channels_last_3d, preserve_format), the device and kind
queries (is_cuda, is_cpu, get_device, is_signed, is_complex, is_sparse, ...), pin_memory, and the legacy
typed-tensor classes (FloatTensor, LongTensor, ...: constructors and isinstance checks).

channels_last is a stride order, as in torch: the tensor keeps its logical NCHW shape, with the channel
dim innermost in memory; every op reads it through its strides.
"""
import builtins
import numbers

from . import _C
from ._C import Tensor

D = _C.dtype


class memory_format:
    """A memory layout request (torch.memory_format)."""

    def __init__(self, name, order=None):
        self._name = name
        self._order = order  # dims from outermost to innermost in memory, for its rank

    def __repr__(self):
        return f"torch.{self._name}"


class layout:
    """A tensor layout (torch.layout): every oar.Tensor is torch.strided; oar.sparse's COO tensors are
    torch.sparse_coo. The others exist to be named and compared (oar has no tensors in them)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name  # the module-level singleton, when pickled (DataLoader workers)


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")


def _to_dense(self, dtype=None, *, masked_grad=None):
    """A dense tensor is its own to_dense() (as torch's strided tensors), in dtype when given."""
    return self if dtype is None else self.to(dtype)


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", (0, 2, 3, 1))
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1))


def _check_format(fmt, t, name):
    if fmt is None or fmt is preserve_format or fmt is contiguous_format:
        return
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{name}(): memory_format must be a torch.memory_format, got {builtins.type(fmt).__name__}")
    if t.ndim != len(fmt._order):
        raise RuntimeError(f"required rank {len(fmt._order)} tensor to use {fmt!r} format, got rank {t.ndim}")


def _in_format(t, fmt):
    """t laid out in fmt (a copy when its strides differ)."""
    if fmt is None or fmt is preserve_format:
        return t
    if fmt is contiguous_format:
        return _c_contiguous(t)
    if _is_in_format(t, fmt):
        return t
    inverse = [fmt._order.index(d) for d in range(t.ndim)]
    return _c_contiguous(t.permute(*fmt._order)).permute(*inverse)


def _is_in_format(t, fmt):
    if fmt is None or fmt is contiguous_format:
        return _c_is_contiguous(t)
    if fmt is preserve_format:
        raise RuntimeError("is_contiguous: preserve_format is not a layout to check against")
    if t.ndim != len(fmt._order):
        return False
    expected = 1
    for d in reversed(fmt._order):
        if t.shape[d] != 1 and stride(t, d) != expected:
            return False
        expected *= t.shape[d]
    return True


_c_stride = Tensor.stride


def stride(self, dim=None):
    """The strides, or one dim's (negative dims count from the end), as torch."""
    strides = _c_stride(self)
    if dim is None:
        return strides
    from ._shape_common import _wrap_dim
    return strides[_wrap_dim(dim, self.ndim)]


_c_contiguous = Tensor.contiguous
_c_is_contiguous = Tensor.is_contiguous
_c_to = Tensor.to
_c_type = Tensor.type


def contiguous(self, memory_format=contiguous_format):
    _check_format(memory_format, self, "contiguous")
    return _in_format(self, memory_format)


def is_contiguous(self, memory_format=contiguous_format):
    return _is_in_format(self, memory_format)


def to(self, *args, **kwargs):
    """to(device=None, dtype=None, non_blocking=False, copy=False, memory_format=preserve_format),
    to(dtype, non_blocking, copy), to(other, non_blocking, copy); non_blocking is accepted (copies
    complete before the result is used on every oar device)."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    fmt = kwargs.pop("memory_format", preserve_format)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    flags = []
    for a in args:
        if isinstance(a, D):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _C.device, int)) and not isinstance(a, bool) and device is None:
            device = a if not isinstance(a, int) else _index_device(a)
        elif isinstance(a, bool):
            flags.append(a)  # non_blocking, then copy
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    if len(flags) > 1:
        copy = copy or flags[1]
    _check_format(fmt, self, "to")
    same_device = device is None or _C.to_device(device) == self.device
    same_dtype = dtype is None or _C.to_dtype(dtype) == self.dtype
    r = self if same_device and same_dtype else _c_to(self, device, dtype)  # torch returns self unchanged
    r = _in_format(r, fmt)
    if copy and r is self:
        r = self.clone()
    return r


def _index_device(index):
    """to(0): the index of the default device's type (torch reads it as cuda:0)."""
    return _C.device(f"{_C.default_device().type}:{index}")


_LEGACY = {D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor",
           D.bfloat16: "BFloat16Tensor", D.int64: "LongTensor", D.int32: "IntTensor",
           D.int8: "CharTensor", D.uint8: "ByteTensor", D.bool: "BoolTensor"}


def _legacy_name(t):
    kind = t.device.type
    return f"torch.{_LEGACY[t.dtype]}" if kind == "cpu" else f"torch.{kind}.{_LEGACY[t.dtype]}"


def type(self, dtype=None, non_blocking=False, **kwargs):
    """type() is torch's type string ('torch.FloatTensor'); type(dtype), type('torch.DoubleTensor') and
    type(oar.DoubleTensor) convert."""
    if dtype is None:
        return _legacy_name(self)
    if isinstance(dtype, _LegacyType):
        return self.to(dtype.dtype)
    if isinstance(dtype, str) and "Tensor" in dtype:
        name = dtype.split(".")[-1]
        for d, n in _LEGACY.items():
            if n == name:
                return self.to(d)
        raise TypeError(f"invalid type: '{dtype}'")
    return _c_type(self, dtype)


def cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
    """The tensor on a CUDA device (the cuda plugin's); a clear error where there is none."""
    from . import cuda as _cuda
    if not _cuda.is_available():
        raise _C.DeviceError("cuda(): no CUDA device is available (oar's cuda plugin found no GPU); "
                             "use .to(device) with the device you have")
    target = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
    return _in_format(_c_to(self, target, None), memory_format)


def _no_int16():
    raise _C.DTypeError("short(): oar has no int16 dtype; use int() (int32) or long() (int64)")


def get_device(self):
    """-1 for a CPU tensor, else the device's index (torch's convention)."""
    return -1 if self.device.type == "cpu" else self.device.index


def pin_memory(self, device=None):
    """Page-locked host memory is a CUDA notion; oar's plugins copy from ordinary host memory, so a
    CPU tensor is returned as it is."""
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}': only dense CPU tensors can be pinned")
    return self


_METHODS = {
    "to": to, "type": type, "stride": stride, "contiguous": contiguous, "is_contiguous": is_contiguous, "cuda": cuda,
    "get_device": get_device, "pin_memory": pin_memory,
    "is_pinned": lambda self, device=None: False,
    "byte": lambda self, memory_format=preserve_format: self.to(D.uint8),
    "char": lambda self, memory_format=preserve_format: self.to(D.int8),
    "short": lambda self, memory_format=preserve_format: _no_int16(),
    "is_cuda": property(lambda self: self.device.type == "cuda"),
    "is_cpu": property(lambda self: self.device.type == "cpu"),
    "is_sparse": property(lambda self: False), "is_sparse_csr": property(lambda self: False),
    "is_quantized": property(lambda self: False), "is_meta": property(lambda self: False),
    "is_mkldnn": property(lambda self: False), "is_nested": property(lambda self: False),
    "is_complex": lambda self: False, "is_conj": lambda self: False, "is_neg": lambda self: False,
    "is_inference": lambda self: False,
    "layout": property(lambda self: strided), "to_dense": _to_dense,
    "is_signed": lambda self: self.dtype not in (D.uint8, D.bool),
    "ndimension": lambda self: self.ndim, "nelement": lambda self: self.numel(),
    "itemsize": property(lambda self: self.element_size()),
    "nbytes": property(lambda self: self.element_size() * self.numel()),
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)


class _LegacyType(builtins.type):
    """The metaclass of the legacy tensor classes: isinstance(t, FloatTensor) is a dtype (and CPU) check."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"


def _legacy_class(name, dtype):
    def __new__(cls, *args, device=None):
        from ._creation import tensor, zeros
        from ._shape_common import Size
        if not args:
            return zeros(0, dtype=dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Size):  # FloatTensor(x.size()): sizes, not data
            args = tuple(args[0])
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            data = args[0]
            return data.to(dtype) if isinstance(data, Tensor) else tensor(data, dtype=dtype, device=device)
        return zeros(*args, dtype=dtype, device=device)  # torch leaves it uninitialised; oar zero-fills
    return _LegacyType(name, (), {"__new__": __new__, "dtype": dtype, "__doc__":
                                  f"torch.{name}: {name}(*sizes) or {name}(data), dtype {dtype}"})


_legacy_classes = {n: _legacy_class(n, d) for d, n in _LEGACY.items()}
globals().update(_legacy_classes)

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
           "layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
           *_legacy_classes]
