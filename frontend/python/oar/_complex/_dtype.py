"""oar.complex64 / oar.complex128: the dtypes of the frontend ComplexTensor, and torch's type promotion for
operations that involve one.

oar's core has no complex dtype (the C ABI's dtypes are f32 f64 f16 bf16 i8 u8 i32 i64 bool), so these are
Python objects, not members of oar.dtype: `x.dtype == torch.complex64`, `torch.complex64.is_complex`,
`dtype=torch.cfloat` on the creation functions and `.to(torch.complex64)` work; `isinstance(d, torch.dtype)`
is False for them.
"""
from .. import _C

_D = _C.dtype


class ComplexDType:
    """A complex dtype: a pair of real tensors of `real_dtype` (float32 for complex64, float64 for complex128)."""

    __slots__ = ("name", "real_dtype", "itemsize")
    is_complex = True
    is_floating_point = False
    is_signed = True

    def __init__(self, name, real_dtype, itemsize):
        self.name = name
        self.real_dtype = real_dtype
        self.itemsize = itemsize

    def __repr__(self):
        return f"oar.{self.name}"

    __str__ = __repr__

    def to_real(self):
        return self.real_dtype

    def to_complex(self):
        return self

    def __reduce__(self):
        return (_by_name, (self.name,))


complex64 = ComplexDType("complex64", _D.float32, 8)
complex128 = ComplexDType("complex128", _D.float64, 16)
cfloat, cdouble = complex64, complex128


def _by_name(name):
    return {"complex64": complex64, "complex128": complex128}[name]


def complex_of(real_dtype):
    """The complex dtype whose parts are `real_dtype`: float64 -> complex128; float32, and the types a complex
    number promotes them to (float16, bfloat16, integers, bool), -> complex64 (oar has no complex32)."""
    return complex128 if real_dtype == _D.float64 else complex64


def default_complex():
    from .._creation import get_default_dtype
    return complex_of(get_default_dtype())


def is_complex_dtype(d):
    return isinstance(d, ComplexDType)


def real_dtype_for(dtype):
    """The real dtype the parts of a complex tensor of `dtype` (complex or real) are computed in."""
    if isinstance(dtype, ComplexDType):
        return dtype.real_dtype
    return _D.float64 if dtype == _D.float64 else _D.float32


# ---- torch's result_type, for operands at least one of which is complex ----
# A kind is (category, real dtype): category 3 complex (real dtype: its parts), 2 floating, 1 integral, 0 bool.
def _kind(x):
    from ._tensor import ComplexTensor
    from .._C import Tensor
    if isinstance(x, ComplexTensor):
        return 3, x.re.dtype
    if isinstance(x, Tensor):
        d = x.dtype
        if d == _D.bool:
            return 0, d
        return (2 if x.is_floating_point() else 1), d
    import numbers
    if isinstance(x, bool):
        return 0, None
    if isinstance(x, numbers.Integral):
        return 1, None
    if isinstance(x, numbers.Real):
        return 2, None
    return 3, None  # a complex number: the default complex dtype when it decides


def _promote(a, b):
    """Promotion within one priority group: the higher category; float64 parts win among the floating ones."""
    (ca, da), (cb, db) = a, b
    if ca < 2 and cb < 2:
        return max(a, b, key=lambda k: k[0])
    if ca >= 2 and cb >= 2:
        if da is None or db is None:
            d = da if db is None else db
        else:
            d = _D.float64 if _D.float64 in (da, db) else (_D.float32 if _D.float32 in (da, db) or da != db else da)
        return max(ca, cb), d
    return a if ca >= 2 else b


def result_real_dtype(*operands):
    """The real dtype of the parts of a complex result of an operation on `operands`, as torch.result_type
    decides it: dimensioned tensors first, then 0-d tensors, then Python numbers; a lower group only counts
    when its category is higher (a complex 0-d tensor or number makes float tensors complex of their precision).
    """
    from .._C import Tensor
    from ._tensor import ComplexTensor
    groups = [None, None, None]
    for x in operands:
        if isinstance(x, (Tensor, ComplexTensor)):
            g = 0 if x.ndim else 1
        else:
            g = 2
        k = _kind(x)
        groups[g] = k if groups[g] is None else _promote(groups[g], k)
    state = None
    for k in groups:
        if k is None:
            continue
        if state is None:
            state = k
        elif k[0] > state[0]:
            # a higher category from a lower-priority group: its category, the higher group's precision if floating
            state = (k[0], state[1] if state[0] >= 2 else k[1])
    d = state[1]
    if d is None or d not in (_D.float32, _D.float64):
        return _D.float64 if d == _D.float64 else (default_complex().real_dtype if d is None else _D.float32)
    return d
