"""PyTorch-style functions and Tensor methods over the generated ops."""
import numbers
import os

from . import _C
from ._C import Tensor
from ._ops import ops


# ---- type promotion (PyTorch's rules) ----
_D = _C.dtype


def _category(dtype):
    """0 bool, 1 integer, 2 floating."""
    return 0 if dtype == _D.bool else 2 if dtype.is_floating_point else 1


def promote_types(a, b):
    """The smallest dtype both convert to (torch.promote_types; the core's table, runtime/src/dtype.cpp):
    uint8 with int8 gives int32, oar having no int16."""
    return _C.promote_types(_C.to_dtype(a), _C.to_dtype(b))


def _operand_kind(x):
    """(dtype, priority): dimensioned tensors 0, zero-dim tensors 1, Python numbers 2."""
    if isinstance(x, Tensor):
        return x.dtype, 0 if x.ndim else 1
    if isinstance(x, bool):
        return _D.bool, 2
    if isinstance(x, numbers.Integral):
        return _D.int64, 2
    if isinstance(x, numbers.Real):
        return _D.float32, 2  # a Python float takes the default dtype
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


def _combine(higher, lower):
    # A lower-priority operand only raises the category; its width counts only when it does.
    if higher is None or lower is None:
        return higher if lower is None else lower
    if _category(higher) == 2:
        return higher
    if _category(higher) == 0 or _category(lower) == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """The dtype PyTorch gives an op on these tensors and Python numbers (torch.result_type)."""
    groups = [None, None, None]
    for x in operands:
        dtype, priority = _operand_kind(x)
        g = groups[priority]
        groups[priority] = dtype if g is None else promote_types(g, dtype)
    return _combine(_combine(groups[0], groups[1]), groups[2])


def _device_of(*operands):
    for x in operands:
        if isinstance(x, Tensor):
            return x.device
    return _C.default_device()


def _as_operand(x, dtype, device):
    """x as a tensor of dtype: Python numbers become 0-dim tensors, tensors are cast if needed."""
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else x.to(dtype=dtype)
    return _C.tensor(x, dtype, device)


def _promoted(*operands, device=None):
    dtype = result_type(*operands)
    device = device if device is not None else _device_of(*operands)
    return dtype, [_as_operand(x, dtype, device) for x in operands]


def _dims(dim):
    if dim is None:
        return []
    if isinstance(dim, numbers.Integral):
        return [int(dim)]
    return [int(d) for d in dim]


def add(a, b, alpha=1):
    return a + (b * alpha if alpha != 1 else b)


def sub(a, b, alpha=1):
    return a - (b * alpha if alpha != 1 else b)


def mul(a, b):
    return a * b


def div(a, b, rounding_mode=None):
    """torch.div: true division, or rounded toward zero ("trunc") or down ("floor") in the promoted dtype."""
    if rounding_mode is None:
        return true_divide(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        return _rounded_divide(a, b, _trunc_int_div, _trunc_float_div)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")


def true_divide(a, b):
    # A scalar numerator reaches the tensor's __rtruediv__ (scalar / tensor).
    return a / b


divide = div


# ---- rounded division and remainders ----
# Integers are divided in float64, exact for |values| <= 2**53 (a quotient just below an
# integer stays below it), since the catalog has no integer division kernel.
def _check_int_divisor(b):
    if bool(ops.sum(b == 0).item()):
        raise ZeroDivisionError("integer division by zero")


def _floor_int_div(a, b):
    _check_int_divisor(b)
    return ops.floor(a.to(dtype=_D.float64) / b.to(dtype=_D.float64)).to(dtype=a.dtype)


def _trunc_int_div(a, b):
    _check_int_divisor(b)
    return trunc(a.to(dtype=_D.float64) / b.to(dtype=_D.float64)).to(dtype=a.dtype)


def _floor_float_div(a, b):
    # PyTorch's div_floor_floating: through fmod, so 1.0 // 0.1 == 9.0 as in Python; b == 0 gives a / b.
    mod = ops.fmod(a, b)
    q = (a - mod) / b
    q = ops.where(ops.logical_and(mod != 0, (b < 0) != (mod < 0)), q - 1, q)
    fq = ops.floor(q)
    fq = ops.where(q - fq > 0.5, fq + 1, fq)
    return ops.where(b == 0, a / b, fq)


def _trunc_float_div(a, b):
    return trunc(a / b)


def _rounded_divide(a, b, int_div, float_div):
    """Division rounded in the promoted dtype; float16/bfloat16 are computed in float32 as PyTorch does."""
    dtype, (x, y) = _promoted(a, b)
    if dtype == _D.bool:
        raise _C.DTypeError("rounded division is not defined for bool tensors")
    if not dtype.is_floating_point:
        return int_div(x, y)
    if dtype in (_D.float16, _D.bfloat16):
        return float_div(x.to(dtype=_D.float32), y.to(dtype=_D.float32)).to(dtype=dtype)
    return float_div(x, y)


def floor_divide(a, b):
    """a // b rounded toward minus infinity (Python's rule: -7 // 2 == -4), in the promoted dtype."""
    return _rounded_divide(a, b, _floor_int_div, _floor_float_div)


def _remainder_float(a, b):
    mod = ops.fmod(a, b)
    return ops.where(ops.logical_and(mod != 0, (b < 0) != (mod < 0)), mod + b, mod)


def remainder(a, b):
    """a % b with the sign of b (Python's rule: -7 % 2 == 1)."""
    return _rounded_divide(a, b, lambda x, y: x - _floor_int_div(x, y) * y, _remainder_float)


def fmod(a, b):
    """C's fmod: the remainder with the sign of a (-7 fmod 2 == -1)."""
    return _rounded_divide(a, b, lambda x, y: x - _trunc_int_div(x, y) * y, ops.fmod)


def matmul(a, b):
    """torch.matmul: 1-D operands act as a row (left) or column (right) and their dim is dropped."""
    return a @ b


mm = bmm = matmul


def sum(x, dim=None, keepdim=False, dtype=None):
    y = ops.sum(x, dims=_dims(dim), keepdim=keepdim)
    return y if dtype is None else y.to(dtype=dtype)


def mean(x, dim=None, keepdim=False):
    return ops.mean(x, dims=_dims(dim), keepdim=keepdim)


def prod(x, dim=None, keepdim=False):
    return ops.prod(x, dims=_dims(dim), keepdim=keepdim)


def var(x, dim=None, unbiased=True, keepdim=False, correction=None):
    c = (1 if unbiased else 0) if correction is None else correction
    return ops.var(x, dims=_dims(dim), keepdim=keepdim, correction=int(c))


def std(x, dim=None, unbiased=True, keepdim=False, correction=None):
    return ops.sqrt(var(x, dim, unbiased, keepdim, correction))


class _ValuesIndices(tuple):
    """(values, indices), as torch.max(x, dim) returns."""
    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _extreme(op, argop, x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return ops.maximum(x, dim) if op == "max" else ops.minimum(x, dim)
    if dim is None:
        return getattr(ops, op)(x)
    values = getattr(ops, op)(x, dims=[dim], keepdim=keepdim)
    indices = getattr(ops, argop)(x, dims=[dim], keepdim=keepdim)
    return _ValuesIndices((values, indices))


def max(x, dim=None, keepdim=False):
    return _extreme("max", "argmax", x, dim, keepdim)


def min(x, dim=None, keepdim=False):
    return _extreme("min", "argmin", x, dim, keepdim)


def amax(x, dim=None, keepdim=False):
    return ops.max(x, dims=_dims(dim), keepdim=keepdim)


def amin(x, dim=None, keepdim=False):
    return ops.min(x, dims=_dims(dim), keepdim=keepdim)


def argmax(x, dim=None, keepdim=False):
    return ops.argmax(x, dims=_dims(dim), keepdim=keepdim)


def argmin(x, dim=None, keepdim=False):
    return ops.argmin(x, dims=_dims(dim), keepdim=keepdim)


def cat(tensors, dim=0):
    return ops.concat(list(tensors), dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    return ops.stack(list(tensors), dim=dim)


def split(x, split_size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(split_size_or_sections, numbers.Integral):
        s = int(split_size_or_sections)
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
    out = ops.split(x, sizes=sizes, dim=dim)
    return out if isinstance(out, tuple) else (out,)


def chunk(x, chunks, dim=0):
    n = x.shape[dim]
    return split(x, -(-n // chunks), dim)


def where(condition, input, other):
    """input where condition else other, in result_type(input, other): where(mask, int_t, 0.5) is float32."""
    _, (a, b) = _promoted(input, other, device=condition.device)
    return ops.where(condition, a, b)


def clamp(x, min=None, max=None):
    """min(max(x, min), max); tensor bounds broadcast and take part in type promotion."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        y = x if min is None else maximum(x, min)
        return y if max is None else minimum(y, max)
    attrs = {}
    if min is not None:
        attrs["min"] = float(min)
    if max is not None:
        attrs["max"] = float(max)
    return ops.clamp(x, **attrs)


clip = clamp


def softmax(x, dim=-1):
    return ops.softmax(x, dim=dim)


def log_softmax(x, dim=-1):
    return ops.log_softmax(x, dim=dim)


def gather(x, dim, index):
    return ops.gather(x, index, dim=dim)


def index_select(x, dim, index):
    return ops.index_select(x, index, dim=dim)


def flatten(x, start_dim=0, end_dim=-1):
    return x.flatten(start_dim, end_dim)


def allclose(a, b, rtol=1e-5, atol=1e-8):
    import numpy as np
    return bool(np.allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=rtol, atol=atol))


def _unary(name):
    f = getattr(ops, name)
    return lambda x: f(x)


_UNARY = ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "square", "sign",
          "erf", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
(exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, abs, neg, square, sign, erf, tan, asin, acos, atan, sinh,
 cosh, asinh, acosh, atanh) = (_unary(n) for n in _UNARY)


def _rounding(name):
    f = getattr(ops, name)

    def rounded(x):
        # Integers are already whole: PyTorch returns them unchanged, in their own dtype.
        return f(x) if x.is_floating_point() else x.clone()
    rounded.__name__ = name
    return rounded


floor, ceil = _rounding("floor"), _rounding("ceil")


def round(x, decimals=0):
    """Rounds half to even, as PyTorch; decimals shifts the rounding position."""
    if not x.is_floating_point():
        return x.clone()
    if decimals == 0:
        return ops.round(x)
    scale = 10.0 ** decimals
    return ops.round(x * scale) / scale


def trunc(x):
    if not x.is_floating_point():
        return x.clone()
    return ops.where(x < 0, ops.ceil(x), ops.floor(x))


fix = trunc


def reciprocal(x):
    return 1.0 / x


def pow(a, b):
    return a ** b


def maximum(a, b):
    """Elementwise max in result_type(a, b) (NaN propagates); for bool, logical or. Python numbers are accepted."""
    dtype, (a, b) = _promoted(a, b)
    return ops.logical_or(a, b) if dtype == _D.bool else ops.maximum(a, b)


def minimum(a, b):
    dtype, (a, b) = _promoted(a, b)
    return ops.logical_and(a, b) if dtype == _D.bool else ops.minimum(a, b)


def clamp_min(x, min):
    return clamp(x, min=min)


def clamp_max(x, max):
    return clamp(x, max=max)


def eq(a, b):
    return a == b


def logical_not(x):
    return ops.logical_not(x)


# ---- CPU threads ----
# The CPU plugin applies OAR_NUM_THREADS once, when it loads; no ABI entry changes it later. Until one
# exists, the OpenMP runtime the plugin (and oneDNN) run on is called directly: it is one shared
# library per process, and the kernels run on the calling thread, so this sets their team size.
_OMP = None  # the OpenMP runtime's ctypes handle once looked up; False when there is none


def _openmp():
    global _OMP
    if _OMP is None:
        _C.info()  # loads the plugins, and with the CPU plugin its OpenMP runtime
        _OMP = False
        try:
            with open("/proc/self/maps") as maps:
                paths = sorted({line.split()[-1] for line in maps if "/" in line})
        except OSError:
            paths = []
        for path in paths:
            if path.rsplit("/", 1)[-1].startswith(("libgomp.so", "libomp.so", "libiomp5.so")):
                import ctypes
                _OMP = ctypes.CDLL(path)
                break
    return _OMP or None


def set_num_threads(n):
    """Threads used by CPU kernels (torch.set_num_threads); also sets the OAR_NUM_THREADS flag."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n!r}")
    _C.set_flag("OAR_NUM_THREADS", str(int(n)))
    omp = _openmp()
    if omp is not None:
        omp.omp_set_num_threads(int(n))


def get_num_threads():
    """Threads CPU kernels use (torch.get_num_threads)."""
    omp = _openmp()
    if omp is not None:
        return int(omp.omp_get_max_threads())
    n = int(_C.get_flag("OAR_NUM_THREADS"))
    return n if n > 0 else (os.cpu_count() or 1)


def _castable_into(self, result):
    """result in self's dtype, which it must not outrank (no float into int), as PyTorch's in-place ops."""
    if _category(result.dtype) > _category(self.dtype):
        raise _C.DTypeError(f"result type {result.dtype} can't be cast to the desired output type {self.dtype}")
    return result.to(self.dtype) if result.dtype != self.dtype else result


def _inplace_method(fn):
    def method(self, *args, **kwargs):
        # Under autograd fn may read a clone (its op may save the input the write overwrites); where nothing
        # else sees self's memory the write takes the result's memory instead and the saved input stays intact.
        src = self._inplace_src(*args, *kwargs.values())
        # The result goes to _update_ as a temporary, so its memory can be taken over rather than copied.
        return self._update_(_castable_into(self, fn(src, *args, **kwargs)))
    method.__name__ = fn.__name__ + "_"
    return method


def _inplace_functions():
    """relu_, exp_, ...: torch.<op>_(t) writes into t and returns t."""
    out = {}
    for name in _UNARY + ("floor", "ceil", "round", "trunc", "fix", "reciprocal", "logical_not"):
        out[name + "_"] = _inplace_method(globals()[name])
    return out


_INPLACE = _inplace_functions()
globals().update(_INPLACE)

__all__ = ["add", "sub", "mul", "div", "divide", "true_divide", "floor_divide", "remainder", "fmod", "matmul", "mm",
           "bmm", "sum", "mean", "prod", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "cat",
           "concat", "concatenate", "stack", "split", "chunk", "where", "clamp", "clip", "clamp_min", "clamp_max",
           "softmax", "log_softmax", "gather", "index_select", "flatten", "allclose", "floor", "ceil", "round",
           "trunc", "fix", "reciprocal", "pow", "maximum", "minimum", "eq", "logical_not", "promote_types",
           "result_type", "set_num_threads", "get_num_threads", "numel"] + list(_UNARY) + sorted(_INPLACE)

# Tensor methods with PyTorch names.
_methods = {
    "sum": sum, "mean": mean, "prod": prod, "var": var, "std": std, "max": max, "min": min, "amax": amax,
    "amin": amin, "argmax": argmax, "argmin": argmin, "softmax": softmax, "log_softmax": log_softmax,
    "pow": pow, "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "matmul": matmul, "mm": matmul, "split": split, "chunk": chunk,
    "gather": gather, "index_select": index_select, "maximum": maximum, "minimum": minimum,
    "logical_not": logical_not, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "add": add, "sub": sub, "mul": mul, "div": div, "divide": div, "true_divide": true_divide,
    "floor_divide": floor_divide, "remainder": remainder, "fmod": fmod, "floor": floor, "ceil": ceil,
    "round": round, "trunc": trunc, "fix": trunc, "reciprocal": reciprocal,
    "where": lambda self, condition, other: where(condition, self, other),
}
_methods.update({n: globals()[n] for n in _UNARY})
for _name, _fn in _methods.items():
    setattr(Tensor, _name, _fn)


# ---- more Tensor methods PyTorch code relies on ----
def _masked_fill(self, mask, value):
    v = value if isinstance(value, Tensor) else _C.tensor(value, self.dtype, self.device)
    return ops.where(mask, v.to(self.dtype), self)


def _unbind(self, dim=0):
    return tuple(self.select(dim, i) for i in range(self.shape[dim]))


def _index_add_(self, dim, index, source, alpha=1):
    """self[..., index[i], ...] += alpha * source[..., i, ...] along dim (repeated indices accumulate)."""
    src = source * alpha if alpha != 1 else source
    return self._update_(ops.index_add(self._inplace_src(src), index, src, dim=dim))


def _index_add(self, dim, index, source, alpha=1):
    return ops.index_add(self, index, source * alpha if alpha != 1 else source, dim=dim)


def _scatter_add_(self, dim, index, src):
    return self._update_(ops.scatter_add(self._inplace_src(src), index, src, dim=dim))


def _index_fill_(self, dim, index, value):
    key = (slice(None),) * (dim % self.dim()) + (index,)
    self[key] = value
    return self


def _random_fill(op, **attrs):
    """t.uniform_(a, b) / t.normal_(mean, std): fresh draws written into t (a leaf that requires grad
    refuses under grad mode, as in PyTorch; nn.init wraps these in no_grad)."""
    def method(self, *args, generator=None):
        names = list(attrs)
        values = dict(attrs, **dict(zip(names, args)))
        from ._creation import _random
        draw = _random(op, list(self.shape), dict({k: float(v) for k, v in values.items()}, dtype=self.dtype),
                       generator, self.device)
        return self.copy_(draw)
    return method


def _new_factory(make):
    """t.new_zeros(size) and friends: a new tensor with t's dtype and device unless given (torch.Tensor.new_*)."""
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        from . import _creation
        return getattr(_creation, make)(*args, dtype=dtype or self.dtype, device=device or self.device,
                                        requires_grad=requires_grad, **kwargs)
    method.__name__ = "new_" + make
    return method


def numel(x):
    return x.numel()


def _format(self, spec):
    """"{:.2f}".format(t): a one-element tensor formats as its number, any other as its str()."""
    if self.numel() == 1:
        return format(self.item(), spec)
    return format(str(self), spec)


_more_methods = {
    "clamp_": _inplace_method(clamp), "clip_": _inplace_method(clamp),
    "pow_": _inplace_method(pow), "floor_divide_": _inplace_method(floor_divide),
    "remainder_": _inplace_method(remainder), "fmod_": _inplace_method(fmod),
    "masked_fill": _masked_fill,
    "masked_fill_": lambda self, mask, value: self._update_(_masked_fill(self._inplace_src(), mask, value)),
    "index_add_": _index_add_, "index_add": _index_add, "scatter_add_": _scatter_add_,
    "scatter_add": lambda self, dim, index, src: ops.scatter_add(self, index, src, dim=dim),
    "index_fill_": _index_fill_,
    "new_zeros": _new_factory("zeros"), "new_ones": _new_factory("ones"), "new_empty": _new_factory("empty"),
    "new_full": _new_factory("full"), "new_tensor": _new_factory("tensor"),
    "uniform_": _random_fill("uniform", low=0.0, high=1.0),
    "normal_": _random_fill("normal", mean=0.0, std=1.0),
    "unbind": _unbind,
    "expand_as": lambda self, other: self.expand(*other.shape),
    "view_as": lambda self, other: self.view(*other.shape),
    "reshape_as": lambda self, other: self.reshape(*other.shape),
    "type_as": lambda self, other: self.to(other.dtype),
    "mT": property(lambda self: self.transpose(-2, -1)),
    "__format__": _format,
    "__floordiv__": floor_divide,
    "__rfloordiv__": lambda self, other: floor_divide(other, self),
    "__ifloordiv__": _inplace_method(floor_divide),
    "__mod__": remainder,
    "__rmod__": lambda self, other: remainder(other, self),
    "__imod__": _inplace_method(remainder),
}
_more_methods.update(_INPLACE)
for _name, _fn in _more_methods.items():
    setattr(Tensor, _name, _fn)
