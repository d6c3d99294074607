"""torch's complex entry points (torch.complex, torch.polar, torch.view_as_real / view_as_complex, complex
dtypes on the creation functions), and the oar functions and Tensor operators extended to take complex tensors.

The extension wraps existing oar functions: a call whose first argument is a ComplexTensor goes to the complex
implementation; any other call runs the original first and only looks for a complex operand if that raises
(the real path pays one Python call, never an isinstance scan of its arguments).
"""
import builtins
import functools
import math
import numbers

from .. import _C
from .._C import Tensor
from ._dtype import ComplexDType, complex64, complex128, complex_of, default_complex, result_real_dtype
from ._tensor import ComplexTensor, _binary, _matmul, _parts, _unsupported, as_complex_tensor, where

_D = _C.dtype


def complex(real, imag, *, out=None):
    """torch.complex: real + 1j * imag from two real floating tensors (broadcast together)."""
    if out is not None:
        raise _unsupported("complex(out=)")
    if not isinstance(real, Tensor) or not isinstance(imag, Tensor):
        raise TypeError("complex(): real and imag must be tensors")
    if not real.is_floating_point() or not imag.is_floating_point():
        raise _C.DTypeError(f"complex(): expected both inputs to be floating point (float32 or float64), got "
                            f"{real.dtype} and {imag.dtype}")
    if real.dtype != imag.dtype:
        raise _C.DTypeError(f"complex(): expected object of scalar type {real.dtype} but got scalar type "
                            f"{imag.dtype} for second argument")
    return ComplexTensor(real, imag)


def polar(abs, angle, *, out=None):
    """torch.polar: abs * (cos(angle) + 1j * sin(angle))."""
    if out is not None:
        raise _unsupported("polar(out=)")
    if abs.dtype != angle.dtype:
        raise _C.DTypeError(f"polar(): expected abs and angle of one dtype, got {abs.dtype} and {angle.dtype}")
    return ComplexTensor(abs * angle.cos(), abs * angle.sin())


def view_as_real(input):
    """torch.view_as_real: a real tensor of shape (*input.shape, 2) holding (real, imag) pairs.

    oar stacks the two parts into new memory (torch returns a view); gradients flow back to both parts."""
    if not isinstance(input, ComplexTensor):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    from .._functions import stack
    return stack([input.re, input.im], -1)


def view_as_complex(input):
    """torch.view_as_complex: a real float32/float64 tensor of shape (..., 2) as a complex tensor of shape (...);
    the parts are views of input's two last-dim slices, so writes to input show through and gradients reach it."""
    if isinstance(input, ComplexTensor):
        raise RuntimeError("view_as_complex is only supported for real tensors (this one is complex)")
    if input.dtype not in (_D.float32, _D.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return ComplexTensor(input.select(-1, 0), input.select(-1, 1))


def _imag_of_real(input):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def _has_complex(args, kwargs):
    for a in args:
        if isinstance(a, ComplexTensor) or isinstance(a, ComplexDType):
            return True
        if _is_complex_number(a):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(x, ComplexTensor) for x in a):
            return True
    for a in kwargs.values():
        if isinstance(a, (ComplexTensor, ComplexDType)) or _is_complex_number(a):
            return True
    return False


def _is_complex_number(x):
    """A complex number that is not a real one: Python's complex, NumPy's complex scalars."""
    t = type(x)
    if t is float or t is int or t is bool:
        return False
    if t is builtins.complex:
        return True
    return isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real)


def _method(name):
    def impl(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    return impl


def _binary_fn(op):
    def impl(input, other, *, alpha=1, out=None, rounding_mode=None):
        if out is not None:
            raise _unsupported(f"{op}(out=)")
        if rounding_mode is not None:
            raise _unsupported(f"div(rounding_mode={rounding_mode!r})")
        if alpha != 1:
            other = other * alpha
        return _binary(op, input, other)
    return impl


def _cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("cat expects a non-empty list of tensors")
    dtype = result_real_dtype(*tensors)
    from .._functions import cat
    parts = [_parts(t, dtype, None) for t in tensors]
    return ComplexTensor(cat([p[0] for p in parts], dim),
                         cat([p[1] if p[1] is not None else p[0] * 0 for p in parts], dim))


def _stack(tensors, dim=0, *, out=None):
    return _cat([t.unsqueeze(dim) for t in tensors], dim)


def _einsum(equation, *operands):
    """einsum with complex operands: the sum over the real products of their parts (2^k einsums for k complex
    operands of the expression; written for the usual 1-3 operands)."""
    import oar
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    dtype = result_real_dtype(*operands)
    split = [_parts(o, dtype, None) for o in operands]
    if len(split) > 4:
        raise _unsupported("einsum of more than 4 operands")
    re = im = None
    from itertools import product
    for pick in product((0, 1), repeat=len(split)):
        if any(p == 1 and s[1] is None for p, s in zip(pick, split)):
            continue
        term = oar.einsum(equation, *[s[p] for p, s in zip(pick, split)])
        k = sum(pick)  # i**k
        sign = -1 if k % 4 in (2, 3) else 1
        term = term if sign == 1 else -term
        if k % 2 == 0:
            re = term if re is None else re + term
        else:
            im = term if im is None else im + term
    return ComplexTensor(re, im if im is not None else re * 0)


def _allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input if isinstance(input, ComplexTensor) else ComplexTensor(input, input * 0)
    return a.allclose(other, rtol, atol, equal_nan)


def _isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input if isinstance(input, ComplexTensor) else ComplexTensor(input, input * 0)
    return a.isclose(other, rtol, atol, equal_nan)


def _equal(input, other):
    a = input if isinstance(input, ComplexTensor) else ComplexTensor(input, input * 0)
    return a.equal(other)


def _eq(input, other):
    return ComplexTensor.__eq__(input, other) if isinstance(input, ComplexTensor) else other.__eq__(input)


def _ne(input, other):
    return ComplexTensor.__ne__(input, other) if isinstance(input, ComplexTensor) else other.__ne__(input)


def _where(condition, input=None, other=None):
    if input is None and other is None:
        raise _unsupported("where(condition) of a complex condition")
    return where(condition, input, other)


def _outer(input, vec2):
    return _binary("mul", input.reshape(-1, 1), vec2.reshape(1, -1))


def _dot(input, other):
    return _binary("mul", input, other).sum()


def _vdot(input, other):
    a = input.conj() if isinstance(input, ComplexTensor) else input
    return _binary("mul", a, other).sum()


def _real(input):
    return input.re if isinstance(input, ComplexTensor) else input


def _broadcast_tensors(*tensors):
    import oar
    shape = oar.broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)


# functions whose complex form is the ComplexTensor method of the same name (first argument complex)
_METHOD_FUNCTIONS = (
    "conj", "conj_physical", "resolve_conj", "resolve_neg", "angle", "abs", "absolute", "exp", "log", "sqrt",
    "rsqrt", "square", "reciprocal", "sgn", "sin", "cos", "isnan", "isinf", "isfinite", "isreal", "nan_to_num",
    "neg", "negative", "sum", "mean", "nansum", "cumsum", "prod", "var", "std", "norm", "reshape", "flatten",
    "unflatten", "transpose", "swapaxes", "swapdims", "permute", "unsqueeze", "squeeze", "movedim", "moveaxis",
    "t", "narrow", "select", "flip", "fliplr", "flipud", "roll", "chunk", "split", "unbind", "tensor_split",
    "index_select", "tile", "diagonal", "diag", "diag_embed", "tril", "triu", "broadcast_to", "detach", "clone",
    "take_along_dim", "gather", "repeat_interleave", "rot90", "trace", "masked_fill", "numel", "pow", "adjoint",
    "is_conj", "is_neg", "hsplit", "vsplit", "take")

# functions with a complex form of their own (any argument complex)
_SPECIAL = {
    "add": _binary_fn("add"), "sub": _binary_fn("sub"), "subtract": _binary_fn("sub"), "mul": _binary_fn("mul"),
    "multiply": _binary_fn("mul"), "div": _binary_fn("div"), "divide": _binary_fn("div"),
    "true_divide": _binary_fn("div"), "matmul": _matmul, "mm": lambda a, b: _matmul(a, b, "mm"),
    "bmm": lambda a, b: _matmul(a, b, "bmm"), "outer": _outer, "ger": _outer, "dot": _dot, "vdot": _vdot,
    "inner": _dot, "einsum": _einsum, "where": _where, "cat": _cat, "concat": _cat, "concatenate": _cat,
    "stack": _stack, "allclose": _allclose, "isclose": _isclose, "equal": _equal, "eq": _eq, "ne": _ne,
    "real": _real, "imag": lambda input: input.im if isinstance(input, ComplexTensor) else _imag_of_real(input),
    "is_complex": lambda input: isinstance(input, ComplexTensor) or input.is_complex(),
    "is_floating_point": lambda input: False if isinstance(input, ComplexTensor) else input.is_floating_point(),
    "broadcast_tensors": _broadcast_tensors,
}


def _wrap(orig, impl, first_only=False):
    """oar function `orig` extended with `impl` for complex operands."""
    @functools.wraps(orig)
    def fn(*args, **kwargs):
        if args and type(args[0]) is ComplexTensor:
            return impl(*args, **kwargs)
        try:
            return orig(*args, **kwargs)
        except Exception:
            if first_only or not _has_complex(args, kwargs):
                raise
        return impl(*args, **kwargs)
    fn._oar_complex_orig = orig
    return fn


# ---- creation ----
def _dtype_arg(args, kwargs, position):
    d = kwargs.get("dtype")
    if d is None and len(args) > position:
        d = args[position]
    return d


def _complex_data(data):
    if isinstance(data, ComplexTensor) or _is_complex_number(data):
        return True
    try:
        import numpy as np
        return np.asarray(data).dtype.kind == "c"
    except Exception:  # noqa: BLE001 - not array-like: not complex data
        return False


def _wrap_tensor(orig):
    @functools.wraps(orig)
    def tensor(data, *args, **kwargs):
        dtype = _dtype_arg(args, kwargs, 0)
        if isinstance(dtype, ComplexDType) or isinstance(data, ComplexTensor):
            return _complex_tensor_call(data, args, kwargs)
        try:
            return orig(data, *args, **kwargs)
        except Exception:
            if not _complex_data(data):
                raise
        return _complex_tensor_call(data, args, kwargs)
    return tensor


def _complex_tensor_call(data, args, kwargs):
    names = ("dtype", "device", "requires_grad")
    kw = dict(zip(names, args))
    kw.update({k: v for k, v in kwargs.items() if k in names})
    return as_complex_tensor(data, kw.get("dtype"), kw.get("device"), kw.get("requires_grad", False))


def _wrap_as_tensor(orig):
    @functools.wraps(orig)
    def as_tensor(data, *args, **kwargs):  # as_tensor(data, dtype, device); asarray(obj, *, dtype, device, copy, ...)
        dtype = kwargs.get("dtype", args[0] if args else None)
        device = kwargs.get("device", args[1] if len(args) > 1 else None)
        if isinstance(data, ComplexTensor):
            return data if dtype is None and device is None else data.to(device=device, dtype=dtype)
        if isinstance(dtype, ComplexDType):
            if isinstance(data, Tensor):
                return data.to(device=device, dtype=dtype)
            return as_complex_tensor(data, dtype, device)
        try:
            return orig(data, *args, **kwargs)
        except Exception:
            if not _complex_data(data):
                raise
        return as_complex_tensor(data, dtype, device)
    return as_tensor


def _wrap_from_numpy(orig):
    @functools.wraps(orig)
    def from_numpy(array):
        try:
            return orig(array)
        except Exception:
            if getattr(getattr(array, "dtype", None), "kind", None) != "c":
                raise
        # a complex array is copied into two real tensors (torch shares its memory)
        return as_complex_tensor(array, complex128 if array.dtype.itemsize == 16 else complex64, "cpu")
    return from_numpy


def _wrap_sized(orig, make):
    """zeros / ones / empty / randn / rand (*size, dtype=...)."""
    @functools.wraps(orig)
    def fn(*args, **kwargs):
        dtype = kwargs.get("dtype")
        if not isinstance(dtype, ComplexDType):
            return orig(*args, **kwargs)
        kwargs = dict(kwargs, dtype=dtype.real_dtype)
        rg = kwargs.pop("requires_grad", False)
        out = make(orig, args, kwargs)
        return out.requires_grad_(True) if rg else out
    return fn


def _zeros_parts(orig, args, kwargs):
    re = orig(*args, **kwargs)
    return ComplexTensor(re, re.clone())


def _empty_parts(orig, args, kwargs):
    """empty(dtype=complex): zero-filled parts (uninitialised memory could pair a value with a NaN)."""
    re = orig(*args, **kwargs).zero_()
    return ComplexTensor(re, re.clone())


def _make_full(orig):
    @functools.wraps(orig)
    def full(size, fill_value, *args, **kwargs):
        dtype = _dtype_arg(args, kwargs, 0)
        if not isinstance(dtype, ComplexDType) and not _is_complex_number(fill_value):
            return orig(size, fill_value, *args, **kwargs)
        names = ("dtype", "device", "requires_grad")
        kw = dict(zip(names, args))
        kw.update(kwargs)
        dtype = kw.pop("dtype", None) or default_complex()
        rg = kw.pop("requires_grad", False)
        v = builtins.complex(fill_value)
        out = ComplexTensor(orig(size, v.real, dtype=dtype.real_dtype, **kw),
                            orig(size, v.imag, dtype=dtype.real_dtype, **kw))
        return out.requires_grad_(True) if rg else out
    return full


def _wrap_like(orig, fill):
    """zeros_like / ones_like / empty_like / full_like / randn_like / rand_like."""
    @functools.wraps(orig)
    def fn(input, *args, **kwargs):
        if fill == "full":
            value, args = (args[0], args[1:]) if args else (kwargs.pop("fill_value"), args)
        dtype = _dtype_arg(args, kwargs, 0)
        if not isinstance(input, ComplexTensor) and not isinstance(dtype, ComplexDType) and \
                not (fill == "full" and _is_complex_number(value)):
            return orig(input, *args, **kwargs) if fill != "full" else orig(input, value, *args, **kwargs)
        names = ("dtype", "device", "requires_grad")
        kw = dict(zip(names, args))
        kw.update(kwargs)
        dtype = kw.pop("dtype", None)
        device = kw.pop("device", None) or input.device
        rg = kw.pop("requires_grad", False)
        if dtype is None:
            dtype = input.dtype if isinstance(input, ComplexTensor) else complex_of(input.dtype)
        if not isinstance(dtype, ComplexDType):  # complex input, a real dtype asked for
            base = input.re
            return orig(base, value, dtype=dtype, device=device) if fill == "full" else \
                orig(base, dtype=dtype, device=device)
        base = input.re if isinstance(input, ComplexTensor) else input
        rd = dtype.real_dtype
        import oar
        if fill == "zeros" or fill == "empty":
            re = oar.zeros(*base.shape, dtype=rd, device=device)
            out = ComplexTensor(re, re.clone())
        elif fill == "ones":
            out = ComplexTensor(oar.ones(*base.shape, dtype=rd, device=device),
                                oar.zeros(*base.shape, dtype=rd, device=device))
        elif fill == "full":
            v = builtins.complex(value)
            out = ComplexTensor(oar.full(tuple(base.shape), v.real, dtype=rd, device=device),
                                oar.full(tuple(base.shape), v.imag, dtype=rd, device=device))
        elif fill == "randn":
            s = math.sqrt(0.5)
            out = ComplexTensor(oar.randn(*base.shape, dtype=rd, device=device) * s,
                                oar.randn(*base.shape, dtype=rd, device=device) * s)
        else:  # rand
            out = ComplexTensor(oar.rand(*base.shape, dtype=rd, device=device),
                                oar.rand(*base.shape, dtype=rd, device=device))
        return out.requires_grad_(True) if rg else out
    return fn


def _randn_parts(orig, args, kwargs):
    s = math.sqrt(0.5)  # torch: real and imaginary parts each of variance 1/2
    return ComplexTensor(orig(*args, **kwargs) * s, orig(*args, **kwargs) * s)


def _rand_parts(orig, args, kwargs):
    return ComplexTensor(orig(*args, **kwargs), orig(*args, **kwargs))


# ---- Tensor methods and operators that meet a complex operand ----
def _wrap_binary_method(orig, name):
    op = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div",
          "divide": "div", "true_divide": "div"}[name]

    @functools.wraps(orig)
    def fn(self, other, *args, **kwargs):
        try:
            return orig(self, other, *args, **kwargs)
        except Exception:
            if not isinstance(other, ComplexTensor) and not _is_complex_number(other):
                raise
        return _binary_fn(op)(self, other, **kwargs)
    return fn


def _wrap_to(orig):
    @functools.wraps(orig)
    def to(self, *args, **kwargs):
        try:
            return orig(self, *args, **kwargs)
        except Exception:
            if not _has_complex(args, kwargs):
                raise
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        rest = {k: v for k, v in kwargs.items() if k in ("non_blocking", "copy", "memory_format")}
        for a in args:
            if isinstance(a, ComplexDType):
                dtype = a
            elif isinstance(a, (ComplexTensor, Tensor)):
                device, dtype = a.device, a.dtype
            elif isinstance(a, _D):
                dtype = a
            elif a is not None and not isinstance(a, bool):
                device = a
        re = orig(self, device=device, dtype=dtype.real_dtype, **rest)
        return ComplexTensor(re, re * 0)
    return to


def _wrap_type_as(orig):
    @functools.wraps(orig)
    def type_as(self, other):
        if isinstance(other, ComplexTensor):
            re = self.to(other.re.dtype)
            return ComplexTensor(re, re * 0)
        return orig(self, other)
    return type_as


def _wrap_finfo(orig):
    class finfo(orig):  # noqa: N801 - torch's name
        def __init__(self, type=None):
            super().__init__(type.real_dtype if isinstance(type, ComplexDType) else type)
    finfo.__doc__ = orig.__doc__
    finfo.__module__ = orig.__module__
    return finfo


def _wrap_promote_types(orig):
    @functools.wraps(orig)
    def promote_types(type1, type2):
        if isinstance(type1, ComplexDType) or isinstance(type2, ComplexDType):
            r1 = type1.real_dtype if isinstance(type1, ComplexDType) else type1
            r2 = type2.real_dtype if isinstance(type2, ComplexDType) else type2
            both = (r1, r2)
            return complex128 if _D.float64 in both else complex64
        return orig(type1, type2)
    return promote_types


def _wrap_result_type(orig):
    @functools.wraps(orig)
    def result_type(tensor1, tensor2):
        if any(isinstance(x, ComplexTensor) or _is_complex_number(x) for x in (tensor1, tensor2)):
            return complex_of(result_real_dtype(tensor1, tensor2))
        return orig(tensor1, tensor2)
    return result_type


def _is_tensor(orig):
    @functools.wraps(orig)
    def is_tensor(obj):
        return isinstance(obj, (Tensor, ComplexTensor))
    return is_tensor


def install(oar):
    """Adds the complex dtypes and functions to oar and extends its functions, creation entry points and the
    Tensor operators to complex operands."""
    oar.complex64 = oar.cfloat = complex64
    oar.complex128 = oar.cdouble = complex128
    oar.complex = complex
    oar.polar = polar
    oar.view_as_real = view_as_real
    oar.view_as_complex = view_as_complex
    oar.ComplexTensor = ComplexTensor
    for name in _METHOD_FUNCTIONS:
        orig = getattr(oar, name, None)
        if orig is not None and not hasattr(orig, "_oar_complex_orig"):
            setattr(oar, name, _wrap(orig, _method(name), first_only=True))
    for name, impl in _SPECIAL.items():
        orig = getattr(oar, name, None)
        if orig is None:
            setattr(oar, name, impl)
        elif not hasattr(orig, "_oar_complex_orig"):
            setattr(oar, name, _wrap(orig, impl))
    # creation
    oar.tensor = _wrap_tensor(oar.tensor)
    oar.as_tensor = _wrap_as_tensor(oar.as_tensor)
    oar.asarray = _wrap_as_tensor(oar.asarray) if hasattr(oar, "asarray") else oar.as_tensor
    oar.from_numpy = _wrap_from_numpy(oar.from_numpy)
    oar.zeros = _wrap_sized(oar.zeros, _zeros_parts)
    oar.empty = _wrap_sized(oar.empty, _empty_parts)
    oar.ones = _wrap_sized(oar.ones, lambda orig, a, k: ComplexTensor(orig(*a, **k), orig(*a, **k).zero_()))
    oar.randn = _wrap_sized(oar.randn, _randn_parts)
    oar.rand = _wrap_sized(oar.rand, _rand_parts)
    oar.full = _make_full(oar.full)
    for name, fill in (("zeros_like", "zeros"), ("ones_like", "ones"), ("empty_like", "empty"),
                       ("full_like", "full"), ("randn_like", "randn"), ("rand_like", "rand")):
        setattr(oar, name, _wrap_like(getattr(oar, name), fill))
    oar.finfo = _wrap_finfo(oar.finfo)
    oar.promote_types = _wrap_promote_types(oar.promote_types)
    oar.result_type = _wrap_result_type(oar.result_type)
    oar.is_tensor = _is_tensor(oar.is_tensor)
    # Tensor's operators (+ - * / @) hand complex operands over themselves (frontend/python/src/tensor.cpp):
    # a ComplexTensor gets NotImplemented, so its reflected operator runs; a Python complex goes to _binary.
    for name in ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide"):
        orig = getattr(Tensor, name, None)
        if orig is not None and not hasattr(orig, "_oar_complex_orig"):
            fn = _wrap_binary_method(orig, name)
            fn._oar_complex_orig = orig
            setattr(Tensor, name, fn)
    if not hasattr(Tensor.to, "_oar_complex_orig"):
        fn = _wrap_to(Tensor.to)
        fn._oar_complex_orig = Tensor.to
        Tensor.to = fn
    if not hasattr(Tensor.type_as, "_oar_complex_orig"):
        fn = _wrap_type_as(Tensor.type_as)
        fn._oar_complex_orig = Tensor.type_as
        Tensor.type_as = fn
