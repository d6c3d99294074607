"""PyTorch elementwise math and comparison functions written with catalog ops, and the Tensor methods and
in-place forms of every tensor-math function.

The functions live in cohesive modules (this one: elementwise math and comparison; _tensor_bitwise,
_tensor_reduce, _tensor_select); this module re-exports them all, so `from ._tensor_math import *` gives the
whole set. Everything is composed from ops every device runs, so results stay on the input's device and
gradients flow where PyTorch's do."""
import math

from . import _C
from ._C import Tensor
from ._functions import _device_of, _inplace_method, _promoted, maximum, minimum, result_type, where
from ._ops import ops
from ._tensor_math_base import _D, _as_float, _false_like, _floating_only, _scalar
from . import _tensor_bitwise, _tensor_reduce, _tensor_select
# re-exported, and used by the method tables below (all/any shadow the builtins here, as torch.all does)
from ._tensor_bitwise import *  # noqa: F401,F403
from ._tensor_reduce import *  # noqa: F401,F403
from ._tensor_select import *  # noqa: F401,F403


# ---- math ----
def sign(input):
    """-1, 0 or 1 by the sign of input (NaN stays NaN); bool is returned as is."""
    return input.clone() if input.dtype == _D.bool else ops.sign(input)


sgn = sign  # real tensors: sgn is sign


def positive(input):
    if input.dtype == _D.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def negative(input):
    if input.dtype == _D.bool:
        raise TypeError("Negation, the `-` operator, on a bool tensor is not supported. "
                        "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return ops.neg(input)


def absolute(input):
    if input.dtype == _D.bool:
        return input.clone()
    return ops.abs(input)


def lerp(input, end, weight):
    """input + weight * (end - input), computed from the nearer end as PyTorch does (exact at weight 0 and 1)."""
    _, (a, b) = _promoted(input, end)
    if not a.is_floating_point():
        raise _C.DTypeError(f"lerp(): expected floating point tensors, got {a.dtype}")
    w = weight.to(dtype=a.dtype) if isinstance(weight, Tensor) else _C.tensor(float(weight), a.dtype, a.device)
    return ops.lerp(a, b, w)


def _addc(name, input, tensor1, tensor2, value):
    if isinstance(value, Tensor):
        value = value.item()
    return getattr(ops, name)(input, tensor1, tensor2, value=float(value))


def addcmul(input, tensor1, tensor2, *, value=1):
    return _addc("addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    if not tensor1.is_floating_point() and not tensor2.is_floating_point():
        raise _C.DTypeError("Integer division with addcdiv is no longer supported; divide floating tensors instead")
    return _addc("addcdiv", input, tensor1, tensor2, value)


def xlogy(input, other):
    """input * log(other), 0 where input == 0 (unless other is NaN); gradients stay finite there."""
    dtype, (x, y) = _promoted(input, other)
    if not dtype.is_floating_point:
        x, y = x.to(dtype=_D.float32), y.to(dtype=_D.float32)
    zero = x == 0
    safe_y = where(zero, 1.0, y)  # keeps log(0) out of the zero branch's gradient
    out = where(zero, 0.0, x * ops.log(safe_y))
    return where(y != y, y, out)


def float_power(input, exponent):
    """input ** exponent in float64."""
    device = _device_of(input, exponent)

    def as_f64(v):
        return v.to(dtype=_D.float64) if isinstance(v, Tensor) else _C.tensor(float(v), _D.float64, device)
    return as_f64(input) ** as_f64(exponent)

def copysign(input, other):
    """|input| with other's sign, elementwise; other may be a Python number. Integer inputs give the default
    float dtype."""
    if not isinstance(other, Tensor):
        if not isinstance(input, Tensor):
            raise TypeError(f"copysign(): argument 'input' must be Tensor, not {type(input).__name__}")
        other = _scalar(other, input, result_type(input, other))
    return ops.copysign(input, other)


def frac(input):
    _floating_only(input, "frac")
    return input - ops.trunc(input)


def deg2rad(input):
    return _as_float(input) * (math.pi / 180.0)


def rad2deg(input):
    return _as_float(input) * (180.0 / math.pi)


def logit(input, eps=None):
    x = _as_float(input)
    if eps is not None:
        x = ops.clamp(x, min=float(eps), max=1.0 - float(eps))
    return ops.log(x / (1 - x))


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (with gradient 0 there)."""
    x = _as_float(input)
    zero = x == 0
    px = where(zero, 1.0, x) * math.pi
    return where(zero, 1.0, ops.sin(px) / px)


def heaviside(input, values):
    dtype, (x, v) = _promoted(input, values)
    return where(x == 0, v, (x > 0).to(dtype=dtype))


def signbit(input):
    """True where the sign bit is set: negative numbers, -0.0 and NaNs with the sign bit."""
    if input.is_floating_point():
        return ops.copysign(_scalar(1.0, input), input) < 0
    if input.dtype in (_D.uint8, _D.bool):
        return _false_like(input)
    return input < 0


def clamp(input, min=None, max=None):
    """min(max(input, min), max); tensor or number bounds take part in type promotion (int clamped by 0.5 is float)."""
    if min is None and max is None:
        raise ValueError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor) or result_type(input, *[b for b in (min, max)
                                                                                 if b is not None]) != input.dtype:
        y = input if min is None else maximum(input, min)
        return y if max is None else minimum(y, max)
    attrs = {}
    if min is not None:
        attrs["min"] = float(min)
    if max is not None:
        attrs["max"] = float(max)
    return ops.clamp(input, **attrs)


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


clip = clamp


# ---- comparison ----
def isnan(input):
    return input != input


def isinf(input):
    if not input.is_floating_point():
        return _false_like(input)
    return ops.abs(input) == math.inf


def isposinf(input):
    return input == math.inf if input.is_floating_point() else _false_like(input)


def isneginf(input):
    return input == -math.inf if input.is_floating_point() else _false_like(input)


def isfinite(input):
    if not input.is_floating_point():
        return ops.logical_not(_false_like(input))
    return ops.abs(input) < math.inf  # false for inf and NaN


def isreal(input):
    return ops.logical_not(_false_like(input))  # oar has no complex dtypes


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by nan, posinf and neginf (the dtype's largest finite values by default)."""
    return ops.nan_to_num(input, nan=float(nan), posinf=[] if posinf is None else [float(posinf)],
                          neginf=[] if neginf is None else [float(neginf)])


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise, or equal (infinities); NaNs match when equal_nan."""
    if input.dtype != other.dtype:
        raise _C.DTypeError(f"isclose(): input ({input.dtype}) and other ({other.dtype}) must have the same dtype")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose(): rtol ({rtol}) and atol ({atol}) must be non-negative")
    return ops.isclose(input, other, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input, other):
    """True when both have the same shape and elements (a Python bool)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(all(input == other).item())


def not_equal(input, other):
    return input != other


def greater(input, other):
    return input > other


def greater_equal(input, other):
    return input >= other


def less(input, other):
    return input < other


def less_equal(input, other):
    return input <= other


def fmax(input, other):
    """Elementwise max that ignores a NaN (NaN only where both are NaN)."""
    _, (a, b) = _promoted(input, other)
    if not a.is_floating_point():
        return maximum(a, b)
    return where(a != a, b, where(b != b, a, ops.maximum(a, b)))


def fmin(input, other):
    _, (a, b) = _promoted(input, other)
    if not a.is_floating_point():
        return minimum(a, b)
    return where(a != a, b, where(b != b, a, ops.minimum(a, b)))


# ---- Tensor methods and in-place forms ----
_METHODS = {
    "sign": sign, "sgn": sgn, "positive": positive, "negative": negative, "absolute": absolute, "lerp": lerp,
    "addcmul": addcmul, "addcdiv": addcdiv, "xlogy": xlogy, "float_power": float_power, "copysign": copysign,
    "frac": frac, "deg2rad": deg2rad, "rad2deg": rad2deg, "logit": logit, "sinc": sinc, "heaviside": heaviside,
    "signbit": signbit, "clamp": clamp, "clip": clip, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "isnan": isnan, "isinf": isinf, "isposinf": isposinf, "isneginf": isneginf, "isfinite": isfinite,
    "isreal": isreal, "nan_to_num": nan_to_num, "isclose": isclose, "allclose": allclose, "equal": equal,
    "not_equal": not_equal, "greater": greater, "greater_equal": greater_equal, "less": less,
    "less_equal": less_equal, "fmax": fmax, "fmin": fmin, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_right_shift": bitwise_right_shift, "logsumexp": logsumexp, "median": median, "nanmedian": nanmedian,
    "mode": mode, "kthvalue": kthvalue, "count_nonzero": count_nonzero, "all": all, "any": any, "norm": norm,
    "aminmax": aminmax, "nansum": nansum, "nanmean": nanmean, "cumsum": cumsum, "cumprod": cumprod,
    "cummax": cummax, "cummin": cummin, "logcumsumexp": logcumsumexp, "diff": diff, "sort": sort,
    "argsort": argsort, "msort": msort, "topk": topk, "nonzero": nonzero, "argwhere": argwhere,
    "masked_select": masked_select, "histc": histc, "bincount": bincount, "unique": unique,
    "unique_consecutive": unique_consecutive,
    # operators PyTorch gives integer tensors (the C++ binding's & | ^ ~ are logical only)
    "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor, "__invert__": bitwise_not,
    "__rand__": lambda self, other: bitwise_and(other, self), "__ror__": lambda self, other: bitwise_or(other, self),
    "__rxor__": lambda self, other: bitwise_xor(other, self),
    "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
    "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
    "__rrshift__": lambda self, other: bitwise_right_shift(other, self),
}

# torch.<op>_ and Tensor.<op>_: the result written into the input (which must be able to hold its dtype).
_INPLACE_OF = {
    "sign": sign, "sgn": sgn, "negative": negative, "absolute": absolute, "lerp": lerp, "addcmul": addcmul,
    "addcdiv": addcdiv, "xlogy": xlogy, "float_power": float_power, "copysign": copysign, "frac": frac,
    "deg2rad": deg2rad, "rad2deg": rad2deg, "logit": logit, "sinc": sinc, "heaviside": heaviside, "clamp": clamp,
    "clip": clip,
    "clamp_min": clamp_min, "clamp_max": clamp_max, "nan_to_num": nan_to_num, "not_equal": not_equal,
    "greater": greater, "greater_equal": greater_equal, "less": less, "less_equal": less_equal,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_right_shift": bitwise_right_shift, "cumsum": cumsum, "cumprod": cumprod,
}


def _float_power_(self, exponent):
    # float_power_ needs a float64 tensor, as PyTorch (the result is float64)
    if self.dtype != _D.float64:
        raise _C.DTypeError(f"float_power_(): the base is {self.dtype}, but the result is float64; "
                            "only float64 tensors can be updated in place")
    return _inplace_method(float_power)(self, exponent)


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


_INPLACE = {name + "_": _named(_inplace_method(fn), name + "_") for name, fn in _INPLACE_OF.items()}
_INPLACE["float_power_"] = _float_power_
_INPLACE["__iand__"] = _INPLACE["bitwise_and_"]
_INPLACE["__ior__"] = _INPLACE["bitwise_or_"]
_INPLACE["__ixor__"] = _INPLACE["bitwise_xor_"]
_INPLACE["__ilshift__"] = _INPLACE["bitwise_left_shift_"]
_INPLACE["__irshift__"] = _INPLACE["bitwise_right_shift_"]

for _name, _fn in {**_METHODS, **_INPLACE}.items():
    setattr(Tensor, _name, _fn)

# torch.<name>_ functions (torch.sign_ is not public in PyTorch, but harmless; Tensor methods are the main use)
_PUBLIC_INPLACE = {k: v for k, v in _INPLACE.items() if not k.startswith("__")}
globals().update(_PUBLIC_INPLACE)

_PUBLIC = {n for n in _METHODS if not n.startswith("__")} | {"float_power"}
__all__ = sorted(_PUBLIC.union(_tensor_bitwise.__all__, _tensor_reduce.__all__, _tensor_select.__all__)) + sorted(
    _PUBLIC_INPLACE)

# torch._foreach_* (multi-tensor ops on lists of tensors), exported with the math functions.
from . import _foreach  # noqa: E402
from ._foreach import *  # noqa: F401,F403,E402
__all__ += _foreach.__all__
