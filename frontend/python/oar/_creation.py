"""Tensor creation functions (PyTorch names and defaults)."""
import builtins
import numbers
import operator
import os

from . import _C
from ._C import Tensor


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:  # ints, and what stands for one (__index__: NumPy integers, one-element integer tensors), as torch
        if any(isinstance(s, bool) for s in size):
            raise TypeError
        return [operator.index(s) for s in size]
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {size!r}") from None


def _device(device):
    return _C.default_device() if device is None else _C.to_device(device)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def get_default_dtype():
    """The dtype of floating tensors made without one (float32 unless set_default_dtype changed it)."""
    return _C.default_float_dtype()


def set_default_dtype(d):
    """torch.set_default_dtype: the dtype that creation functions, Python floats in oar.tensor and new
    modules' parameters get when none is given, and that integers become where an op needs floating point
    (true division, sqrt, mean, an integer tensor with a Python float). The core keeps it (one setting
    for the process, as in torch)."""
    d = _C.to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d}")
    _C.set_default_float_dtype(d)


def _python_data(data):
    return isinstance(data, (list, tuple, numbers.Number)) and not isinstance(data, bool)


_PLAIN_SCALARS = frozenset((float, int, bool))


def _has_typed_leaves(data):
    """True if nested lists/tuples hold a tensor or a NumPy scalar, whose dtypes torch.tensor takes into account."""
    if set(map(type, data)) <= _PLAIN_SCALARS:  # the common case, at C speed
        return False
    return any(_has_typed_leaves(e) if isinstance(e, (list, tuple)) else
               type(e) not in _PLAIN_SCALARS and (isinstance(e, Tensor) or hasattr(e, "dtype")) for e in data)


def _scalar_dtype(x):
    if isinstance(x, bool):
        return _C.dtype.bool
    if isinstance(x, numbers.Integral) and not hasattr(x, "dtype"):
        return _C.dtype.int64
    if isinstance(x, numbers.Real) and not hasattr(x, "dtype"):
        return get_default_dtype()
    if isinstance(x, Tensor):
        return x.dtype
    import numpy as np
    return _C.to_dtype(np.dtype(x.dtype))


def _plain_with_dtype(data):
    """(nested lists of Python scalars, their dtype): torch.tensor's rule for sequences holding tensors or NumPy
    scalars, each a scalar of its own dtype, the result their promotion (Python floats count as the default
    dtype); a tensor element must hold one value."""
    dtype = None

    def walk(x):
        nonlocal dtype
        if isinstance(x, (list, tuple)):
            return [walk(e) for e in x]
        if isinstance(x, Tensor) and x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        d = _scalar_dtype(x)
        dtype = d if dtype is None else _C.promote_types(dtype, d)
        if not isinstance(x, Tensor) and getattr(x, "ndim", 0):
            return x.tolist()  # a NumPy array nested in the list: its values, typed by its dtype
        return x.item() if hasattr(x, "item") else x

    return walk(data), dtype


def _stackable_arrays(data):
    """True for a list of NumPy arrays of one shape and dtype (a replay buffer's states): stacked by NumPy,
    they make the same tensor as torch.tensor's element-by-element walk, much faster."""
    first = data[0] if data else None
    if type(first).__name__ != "ndarray" or not first.ndim:
        return False
    kind, shape, dtype = type(first), first.shape, first.dtype
    return all(type(a) is kind and a.shape == shape and a.dtype == dtype for a in data)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays and scalars, tensors)."""
    if isinstance(data, (list, tuple)) and _stackable_arrays(data):
        import numpy as np
        data = np.stack(data)
    if type(data) not in _PLAIN_SCALARS and not isinstance(data, (list, tuple, Tensor)) and hasattr(data, "dtype") \
            and not hasattr(data, "__len__"):
        import numpy as np
        data = np.asarray(data)  # a NumPy scalar keeps its dtype, as a 0-d array does
    elif isinstance(data, (list, tuple)) and _has_typed_leaves(data):
        data, inferred = _plain_with_dtype(data)
        return _C.tensor(data, dtype or inferred, device, requires_grad)
    t = _C.tensor(data, dtype, device, requires_grad)
    if dtype is None and t.dtype == _C.dtype.float32 and _python_data(data) and \
            _C.default_float_dtype() != _C.dtype.float32:
        t = _C.tensor(data, _C.default_float_dtype(), device, requires_grad)  # Python floats take the default dtype
    return t


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, copying only if needed (torch.as_tensor): a tensor is converted with .to (so
    autograd still sees it), and a NumPy array whose dtype oar has shares its memory, as from_numpy."""
    if isinstance(data, Tensor):
        return data if dtype is None and device is None else data.to(device=device, dtype=dtype)
    if _shareable_array(data):
        t = from_numpy(data)
        device = _device(device)  # None is the default device, which need not be the CPU
        return t if dtype is None and t.device == device else t.to(device=device, dtype=dtype)
    return tensor(data, dtype, device, False)


# NumPy dtypes that from_numpy (DLPack) wraps; as_tensor copies the others (uint16, big-endian, ...) through tensor().
_SHAREABLE_DTYPES = frozenset(("float32", "float64", "float16", "int8", "uint8", "int32", "int64", "bool"))


def _shareable_array(data):
    """A writable, native-endian NumPy array of a dtype from_numpy wraps without a copy."""
    if type(data).__name__ != "ndarray" or not hasattr(data, "flags") or not data.flags.writeable:
        return False
    return data.dtype.name in _SHAREABLE_DTYPES and data.dtype.isnative


def from_numpy(array):
    """A tensor sharing memory with a NumPy array (zero-copy, through DLPack)."""
    import numpy as np
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    if not array.flags.writeable:
        raise ValueError("from_numpy: the array is read-only; pass array.copy()")
    return _C.from_dlpack(array)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _C.dtype.bool if isinstance(fill_value, bool) else (
            _C.dtype.int64 if isinstance(fill_value, numbers.Integral) else get_default_dtype())
    t = _C.call("fill", [], {"shape": _shape(size if isinstance(size, (tuple, list)) else (size,)),
                             "value": float(fill_value), "dtype": _C.to_dtype(dtype)}, _device(device))
    return _finish(t, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(_shape(size), 0.0, dtype or get_default_dtype(), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(_shape(size), 1.0, dtype or get_default_dtype(), device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return full(t.shape, 0.0, dtype or t.dtype, device or t.device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return full(t.shape, 1.0, dtype or t.dtype, device or t.device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return full(t.shape, fill_value, dtype or t.dtype, device or t.device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = _C.dtype.int64 if is_int else get_default_dtype()
    t = _C.call("arange", [], {"start": float(start), "end": float(end), "step": float(step),
                               "dtype": _C.to_dtype(dtype)}, _device(device))
    return _finish(t, requires_grad)


# ---- random numbers ----
_SEED_MASK = (1 << 63) - 1  # op seeds are non-negative int64 (-1 means "draw from the global stream")


def _unpack_state(state):
    """(seed, offset) from a state tensor made by get_state: 8 little-endian bytes each."""
    raw = bytes(int(v) for v in state.tolist())
    if len(raw) != 16:
        raise ValueError(f"set_state: expected a uint8 tensor of 16 bytes, got {len(raw)}")
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")


class Generator:
    """A random stream of its own (torch.Generator): a seed and an offset into oar's counter-based
    Philox, so it gives the same numbers on every device and leaves the global stream alone.
    With the same seed it draws what oar.manual_seed(seed) would draw from the global stream."""

    def __init__(self, device="cpu"):
        self.device = _C.to_device(device)
        self._seed, self._offset = 67280421310721, 0  # PyTorch's default seed

    def manual_seed(self, seed):
        self._seed, self._offset = int(seed) % (1 << 64), 0
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Reseeds from the operating system's entropy and returns the new seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") & _SEED_MASK)
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor: seed and offset, 8 little-endian bytes each."""
        raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return _C.tensor(list(raw), _C.dtype.uint8, "cpu")

    def set_state(self, state):
        self._seed, self._offset = _unpack_state(state)
        return self

    def _reserve(self, count):
        """(seed, offset) for `count` values, advancing as the core's reserve_random does."""
        offset = self._offset
        self._offset += (builtins.max(int(count), 1) + 3) // 4 * 4
        return self._seed & _SEED_MASK, offset

    def __repr__(self):
        return f"<oar.Generator device={self.device} seed={self._seed}>"


class _DefaultGenerator(Generator):
    """oar.default_generator: the global stream (oar.manual_seed) seen as a Generator."""

    def __init__(self):
        pass  # no state of its own; the device is looked up when asked (import does not start the runtime)

    @property
    def device(self):
        return _C.to_device("cpu")

    @property
    def _seed(self):
        return _C.get_rng_state()[0]

    @property
    def _offset(self):
        return _C.get_rng_state()[1]

    def manual_seed(self, seed):
        _C.manual_seed(int(seed) % (1 << 64))
        return self

    def set_state(self, state):
        _C.set_rng_state(*_unpack_state(state))
        return self


default_generator = _DefaultGenerator()


def manual_seed(seed):
    """Seeds the global stream and returns oar.default_generator, as torch.manual_seed does (scripts keep
    the result and pass it as generator=)."""
    return default_generator.manual_seed(seed)


def get_rng_state():
    """The global random state as a uint8 tensor (seed and offset), for set_rng_state."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _random(op, shape, attrs, generator, device):
    """Calls a random op, from `generator`'s stream if one is given, else from the global one."""
    attrs = dict(attrs, shape=shape)
    if generator is not None and not isinstance(generator, _DefaultGenerator):
        n = 1
        for s in shape:
            n *= s
        attrs["seed"], attrs["offset"] = generator._reserve(n)
    return _C.call(op, [], attrs, _device(device))


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    t = _random("uniform", _shape(size), {"dtype": _C.to_dtype(dtype or get_default_dtype())}, generator, device)
    return _finish(t, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    t = _random("normal", _shape(size), {"dtype": _C.to_dtype(dtype or get_default_dtype())}, generator, device)
    return _finish(t, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers uniform in [low, high): randint(high, size) or randint(low, high, size), as in PyTorch."""
    if size is None and isinstance(high, (tuple, list)):  # the two-argument form randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if int(high) <= int(low):
        raise ValueError(f"randint(): expected low < high, got low={low}, high={high}")
    k = _random_integers(int(low), int(high), _shape(tuple(size)), generator, device)
    return _finish(k.to(dtype=dtype or _C.dtype.int64), requires_grad)


def _random_integers(low, high, shape, generator, device):
    """int64 integers uniform in [low, high). Up to 2^53 values: the floor of a float64 draw (exact);
    wider ranges: 63 random bits from two exact float64 draws, reduced modulo the range (as torch
    does for ranges past 2^32)."""
    span = high - low
    if span > 2 ** 63:
        raise ValueError(f"random integers: the range [{low}, {high}) is wider than 2^63")
    if span <= 2 ** 53:
        u = _random("uniform", shape, {"low": float(low), "high": float(high), "dtype": _C.dtype.float64},
                    generator, device)
        # floor, not the cast's truncation toward zero (which would skew negative ranges), and
        # high - 1 at most, in case float64 rounding reached high.
        k = _C.call("clamp", [_C.call("floor", [u], {}, None)], {"max": float(high - 1)}, None)
        return k.to(dtype=_C.dtype.int64)
    bits = []
    for width in (31, 32):
        u = _random("uniform", shape, {"low": 0.0, "high": float(2 ** width), "dtype": _C.dtype.float64},
                    generator, device)
        bits.append(_C.call("floor", [u], {}, None).to(dtype=_C.dtype.int64))
    v = bits[0] * (2 ** 32) + bits[1]  # uniform in [0, 2^63)
    if span < 2 ** 63:
        v = v % span
    return v + low


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    m = n if m is None else m
    rows = arange(n, device=device).reshape(n, 1)
    cols = arange(m, device=device).reshape(1, m)
    return _finish((rows == cols).to(dtype=dtype or get_default_dtype()), requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    return rand(*t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    return randn(*t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randint_like(t, low, high=None, dtype=None, device=None):
    return randint(low, high, tuple(t.shape), dtype=dtype or t.dtype, device=device or t.device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from start to end, both included (torch.linspace)."""
    if not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative integer, got {steps!r}")
    dtype = dtype or get_default_dtype()
    if steps == 1:
        return full((1,), start, dtype, device, requires_grad)
    i = arange(steps, dtype=_C.dtype.float64, device=device)
    t = (i * ((float(end) - float(start)) / (steps - 1)) + float(start)).to(dtype)
    return _finish(t, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None):
    """A random permutation of 0..n-1, drawn from oar's generator (oar.manual_seed repeats it)."""
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative integer, got {n!r}")
    import numpy as np
    seed = int(randint(0, 2 ** 62, (1,), generator=generator, dtype=_C.dtype.int64, device="cpu").item())
    perm = np.random.default_rng(seed).permutation(int(n)).astype(np.int64)
    return from_numpy(perm).to(dtype or _C.dtype.int64).to(_device(device))


# ---- torch's layout= / pin_memory= / memory_format= keywords on the creation functions ----
def _torch_keywords(fn):
    """fn also taking torch's layout= (torch.strided only: oar.sparse_coo_tensor makes sparse tensors),
    pin_memory= (oar's host memory needs no pinning, as Tensor.pin_memory) and, for the functions torch gives
    it, memory_format= (the result laid out so: torch.channels_last, ...)."""
    import functools

    @functools.wraps(fn)
    def call(*args, layout=None, pin_memory=False, memory_format=None, **kwargs):
        if layout is not None and repr(layout) != "torch.strided":
            raise NotImplementedError(f"{fn.__name__}(layout={layout!r}): oar creates strided (dense) tensors here; "
                                      "make a sparse COO tensor with torch.sparse_coo_tensor or Tensor.to_sparse()")
        out = fn(*args, **kwargs)
        if memory_format is not None:
            from ._tensor_conversion import _check_format, _in_format, preserve_format
            if memory_format is not preserve_format:
                _check_format(memory_format, out, fn.__name__)
                out = _finish(_in_format(out.detach(), memory_format), out.requires_grad)
        return out
    return call


for _name in ("full", "zeros", "ones", "empty", "zeros_like", "ones_like", "full_like", "arange", "rand", "randn",
              "randint", "eye", "rand_like", "randn_like", "randint_like", "linspace", "randperm"):
    globals()[_name] = _torch_keywords(globals()[_name])
del _name
