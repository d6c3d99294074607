"""Type promotion of binary ops against PyTorch's documented rules, as a generated table.

For + - * / ** == < maximum minimum where, a tensor of every oar dtype (dimensioned, or
zero-dim) meets a Python bool/int/float, a zero-dim tensor or a dimensioned tensor of every
dtype, in both operand orders. The expected dtype comes from the rules below, written here
independently of oar (PyTorch's promoteTypes table and its result_type priorities):
- categories bool < integer < floating;
- dimensioned tensors promote by the table (int32+int64 -> int64, float16+bfloat16 -> float32);
- a zero-dim tensor, and below it a Python number, only raises the category: its width counts
  only when it is of a higher category than everything above it (int32 tensor + float64
  zero-dim -> float64, int32 tensor + Python float -> float32, float16 tensor + float64 zero-dim
  -> float16);
- a Python bool is bool, int is int64, float is the default dtype float32;
- comparisons give bool; true division of integers (or bools) gives float32.
Values are checked against NumPy computed in the expected dtype.

oar has no int16: where PyTorch gives int16 (uint8 with int8) oar gives int32 (documented in
runtime/src/dtype.cpp); the table expects int32 there.

Combinations PyTorch refuses (subtraction with any bool operand, bool ** bool) are not generated.
maximum/minimum with a Python number is an oar extension (PyTorch wants two tensors); it follows
the same rules.
Operators (C++ dispatch, where 0-dim tensors only raise the category) and the Python functions
`where`, `maximum` and `minimum` must all pass.
"""
import numpy as np
import pytest

import oar

DEVICES = oar._C.info()["devices"]

# ---- PyTorch's promoteTypes (c10/core/ScalarType.cpp), restricted to oar's dtypes plus int16 ----
_NAMES = ["u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "b", "bf16"]
_TABLE = """
        u8    i8    i16   i32   i64   f16   f32   f64   b     bf16
u8      u8    i16   i16   i32   i64   f16   f32   f64   u8    bf16
i8      i16   i8    i16   i32   i64   f16   f32   f64   i8    bf16
i16     i16   i16   i16   i32   i64   f16   f32   f64   i16   bf16
i32     i32   i32   i32   i32   i64   f16   f32   f64   i32   bf16
i64     i64   i64   i64   i64   i64   f16   f32   f64   i64   bf16
f16     f16   f16   f16   f16   f16   f16   f32   f64   f16   f32
f32     f32   f32   f32   f32   f32   f32   f32   f64   f32   f32
f64     f64   f64   f64   f64   f64   f64   f64   f64   f64   f64
b       u8    i8    i16   i32   i64   f16   f32   f64   b     bf16
bf16    bf16  bf16  bf16  bf16  bf16  f32   f32   f64   bf16  bf16
"""
_PROMOTE = {}
for _row in _TABLE.strip().splitlines()[1:]:
    _a, *_cells = _row.split()
    for _b, _c in zip(_NAMES, _cells):
        _PROMOTE[_a, _b] = _c
assert all(_PROMOTE[a, b] == _PROMOTE[b, a] for a in _NAMES for b in _NAMES)

_FLOATS = {"f16", "bf16", "f32", "f64"}


def _cat(t):
    return 0 if t == "b" else 2 if t in _FLOATS else 1


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower-priority group counts when it is bool-above or floating."""
    if higher is None:
        return lower
    if lower is None or _cat(higher) == 2:
        return higher
    if higher == "b" or _cat(lower) == 2:
        return _PROMOTE[higher, lower]
    return higher


def expected_result_type(operands):
    """operands: (dtype name, kind) with kind "dim", "zero" or "scalar" (a Python number's dtype)."""
    state = {"dim": None, "zero": None, "scalar": None}
    for t, kind in operands:
        state[kind] = t if state[kind] is None else _PROMOTE[state[kind], t]
    return _combine(_combine(state["dim"], state["zero"]), state["scalar"])


# ---- operands ----
_OAR = {"u8": oar.uint8, "i8": oar.int8, "i32": oar.int32, "i64": oar.int64, "f16": oar.float16,
        "f32": oar.float32, "f64": oar.float64, "b": oar.bool, "bf16": oar.bfloat16}
_NP = {"u8": np.uint8, "i8": np.int8, "i16": np.int32, "i32": np.int32, "i64": np.int64, "f16": np.float16,
       "f32": np.float32, "f64": np.float64, "b": np.bool_, "bf16": np.float32}
_DTYPES = list(_OAR)
_SCALARS = {"py_bool": (True, "b"), "py_int": (2, "i64"), "py_float": (2.5, "f32")}


class Operand:
    """A Python number, a zero-dim tensor or a 2-element tensor, built on a device when used."""

    def __init__(self, kind, dtype, value):
        self.kind, self.dtype, self.value = kind, dtype, value

    @property
    def name(self):
        if self.kind == "scalar":
            return f"py_{type(self.value).__name__}"
        return f"{self.dtype}[]" if self.kind == "zero" else f"{self.dtype}[2]"

    def make(self, device):
        if self.kind == "scalar":
            return self.value
        return oar.tensor(self.value, dtype=_OAR[self.dtype], device=device)


def _dim(t, values):
    return Operand("dim", t, [bool(v) for v in values] if t == "b" else values)


def _zero(t):
    return Operand("zero", t, True if t == "b" else 2)


BASES = [("dim", _dim(t, [1, 2]) if t != "b" else _dim(t, [True, False])) for t in _DTYPES] + \
        [("zero", _zero(t)) for t in _DTYPES]
SCALARS = [Operand("scalar", t, v) for v, t in _SCALARS.values()]
OTHERS_OF_DIM = SCALARS + [_zero(t) for t in _DTYPES] + [_dim(t, [3, 2]) if t != "b" else _dim(t, [True, False])
                                                       for t in _DTYPES]

OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "pow": (lambda a, b: a ** b, np.power),
    "eq": (lambda a, b: a == b, np.equal),
    "lt": (lambda a, b: a < b, np.less),
    "maximum": (oar.maximum, np.maximum),
    "minimum": (oar.minimum, np.minimum),
    "where": (None, None),
}
_MASK = [True, False]


def _op_dtypes(op, common):
    """(compute dtype, result dtype) of op for operands promoted to `common`."""
    if op in ("eq", "lt"):
        return common, "b"
    if op == "div" and _cat(common) != 2:
        return "f32", "f32"
    return common, common


def expected_dtype(op, lhs, rhs):
    return _op_dtypes(op, expected_result_type([(lhs.dtype, lhs.kind), (rhs.dtype, rhs.kind)]))


def _refused_by_pytorch(op, lhs, rhs, result):
    # sub_check refuses any bool operand (a Python bool included); pow has no bool kernel.
    return (op == "sub" and "b" in (lhs.dtype, rhs.dtype)) or (op == "pow" and result == "b")


def _cases():
    out = []
    for base_kind, base in BASES:
        others = OTHERS_OF_DIM if base_kind == "dim" else SCALARS + [_zero(t) for t in _DTYPES]
        for other in others:
            orders = ["lhs", "rhs"]
            if other.kind == base_kind:
                orders = ["lhs"]  # the other order is the case with the roles swapped
            for order in orders:
                lhs, rhs = (base, other) if order == "lhs" else (other, base)
                for op in OPS:
                    result = expected_dtype(op, lhs, rhs)[1]
                    if _refused_by_pytorch(op, lhs, rhs, result):
                        continue
                    out.append(pytest.param(op, lhs, rhs, id=f"{op}-{lhs.name}-{rhs.name}"))
    return out


# ---- the test ----
def _expected_values(op, lhs, rhs, compute, result):
    cd = _NP[compute]
    a, b = np.asarray(lhs.value).astype(cd), np.asarray(rhs.value).astype(cd)
    with np.errstate(all="ignore"):
        if op == "where":
            y = np.where(np.array(_MASK), a, b)
        else:
            y = OPS[op][1](a, b)
    return np.asarray(y).astype(_NP[result]).astype(np.float64)


def _tolerance(result):
    return {"f16": 2e-3, "bf16": 1e-2}.get(result, 1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,lhs,rhs", _cases())
def test_binary_promotion(op, lhs, rhs, device):
    compute, result = expected_dtype(op, lhs, rhs)
    want = "i32" if result == "i16" else result
    a, b = lhs.make(device), rhs.make(device)
    if op == "where":
        y = oar.where(oar.tensor(_MASK, device=device), a, b)
    else:
        y = OPS[op][0](a, b)
    assert y.dtype == _OAR[want], f"{op}({lhs.name}, {rhs.name}): got {y.dtype}, PyTorch gives {want}"
    got = np.asarray(y.to(oar.float64).cpu().tolist(), dtype=np.float64)
    expect = _expected_values(op, lhs, rhs, compute, result)
    np.testing.assert_allclose(got, expect, rtol=_tolerance(result), equal_nan=True)


# ---- the Python-side helpers that implement the same rules ----
def test_result_type_and_promote_types_match_the_rules():
    for x in _DTYPES:
        for y in _DTYPES:
            want = _PROMOTE[x, y]
            assert oar.promote_types(_OAR[x], _OAR[y]) == _OAR["i32" if want == "i16" else want], (x, y)
    t = oar.tensor([1, 2], dtype=oar.int32)
    assert oar.result_type(t, 2.5) == oar.float32
    assert oar.result_type(t, oar.tensor(1.0, dtype=oar.float64)) == oar.float64
    assert oar.result_type(oar.tensor([1.0], dtype=oar.float16), oar.tensor(1.0, dtype=oar.float64)) == oar.float16
    assert oar.result_type(oar.tensor([True]), 1) == oar.int64
    assert oar.result_type(oar.tensor([True]), oar.tensor(1, dtype=oar.int8)) == oar.int8
    assert oar.result_type(1, 2.0) == oar.float32 and oar.result_type(1, True) == oar.int64


def test_where_with_python_float_on_integer_tensor_is_float32():
    y = oar.where(oar.tensor([True, False]), oar.tensor([1, 2]), 0.5)
    assert y.dtype == oar.float32 and y.tolist() == [1.0, 0.5]
    y = oar.where(oar.tensor([True, False]), 1.5, 0)
    assert y.dtype == oar.float32 and y.tolist() == [1.5, 0.0]
    assert oar.where(oar.tensor([True, False]), 1, 0).dtype == oar.int64
