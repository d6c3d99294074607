"""PyTorch's logical and bitwise functions (and, or, xor, not, shifts) for bool and integer tensors.

The catalog has no bitwise kernels yet, so integer and/or/xor/shifts peel the operands into one bool plane
per bit and rebuild the result: exact in every integer dtype, but O(width) kernel launches per call (about
200-400 for int64). A bitwise functor in kernel_primitives (binary_ops.def) is the real fix; these
composites then reduce to one op call each."""
from . import _C
from ._functions import _promoted, where
from ._ops import ops
from ._tensor_math_base import _D, _broadcast_shape, _scalar


def logical_and(input, other):
    return ops.logical_and(input, other)


def logical_or(input, other):
    return ops.logical_or(input, other)


def logical_xor(input, other):
    return ops.logical_xor(input, other)


_WIDTH = {_D.int8: 8, _D.uint8: 8, _D.int32: 32, _D.int64: 64}


def _bit_planes(x):
    """x's two's-complement bits as bool tensors, least significant first (the sign bit last).

    The catalog has no bitwise kernels; peeling bits with comparisons and subtraction is exact in every
    integer dtype (no float detour, so int64 keeps all 64 bits)."""
    w, signed = _WIDTH[x.dtype], x.dtype != _D.uint8
    if signed:
        negative_ = x < 0
        # x + 2**(w-1) for negative x: in range, so no overflow
        rest = x - negative_.to(dtype=x.dtype) * _scalar(-(1 << (w - 1)), x)
    else:
        rest = x
    planes = []
    for k in reversed(range(w - 1 if signed else w)):
        p = _scalar(1 << k, x)
        bit = rest >= p
        rest = rest - bit.to(dtype=x.dtype) * p
        planes.append(bit)
    planes.reverse()
    if signed:
        planes.append(negative_)
    return planes


def _bit_weight(k, dtype):
    w = _WIDTH[dtype]
    return -(1 << (w - 1)) if dtype != _D.uint8 and k == w - 1 else 1 << k


def _from_planes(planes, like):
    out = ops.fill(shape=list(planes[0].shape), value=0.0, dtype=like.dtype, device=like.device)
    for k, bit in enumerate(planes):
        out = out + bit.to(dtype=like.dtype) * _scalar(_bit_weight(k, like.dtype), like)
    return out


def _bitwise_operands(input, other, fn):
    dtype, (a, b) = _promoted(input, other)
    if dtype.is_floating_point:
        raise _C.DTypeError(f"{fn}(): not implemented for floating point tensors ({dtype}); use integer or bool")
    return dtype, a, b


def _bitwise(logical_op, name):
    def fn(input, other):
        dtype, a, b = _bitwise_operands(input, other, name)
        if dtype == _D.bool:
            return logical_op(a, b)
        shape = _broadcast_shape(a.shape, b.shape)
        planes_a, planes_b = _bit_planes(a.expand(*shape)), _bit_planes(b.expand(*shape))
        return _from_planes([logical_op(p, q) for p, q in zip(planes_a, planes_b)], a)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(ops.logical_and, "bitwise_and")
bitwise_or = _bitwise(ops.logical_or, "bitwise_or")
bitwise_xor = _bitwise(ops.logical_xor, "bitwise_xor")


def bitwise_not(input):
    if input.is_floating_point():
        raise _C.DTypeError(f"bitwise_not(): not implemented for floating point tensors ({input.dtype})")
    if input.dtype == _D.bool:
        return ops.logical_not(input)
    if input.dtype == _D.uint8:
        return _scalar(255, input) - input
    return _scalar(-1, input) - input  # ~x == -1 - x in two's complement, without overflow at MIN or MAX


def _shift_operands(input, other, fn):
    dtype, a, b = _bitwise_operands(input, other, fn)
    if dtype == _D.bool:
        raise _C.DTypeError(f"{fn}(): not implemented for bool tensors")
    shape = _broadcast_shape(a.shape, b.shape)
    return dtype, a.expand(*shape), b.expand(*shape)


def bitwise_left_shift(input, other):
    """input << other, wrapping in input's width like C; shifts of the width or more give 0."""
    dtype, a, b = _shift_operands(input, other, "bitwise_left_shift")
    w = _WIDTH[dtype]
    top = w - 1 if dtype != _D.uint8 else w  # positions below top have weight 2**pos
    two, zero = _scalar(2, a), _scalar(0, a)
    out = zero
    for k, bit in enumerate(_bit_planes(a)):
        pos = b + k
        weight = where(pos < top, two ** ops.clamp(pos, min=0.0, max=float(top - 1)), zero)
        if dtype != _D.uint8:
            weight = where(pos == w - 1, _scalar(-(1 << (w - 1)), a), weight)
        out = out + bit.to(dtype=dtype) * weight
    return out


def bitwise_right_shift(input, other):
    """input >> other, arithmetic (sign-filling) for signed dtypes."""
    dtype, a, b = _shift_operands(input, other, "bitwise_right_shift")
    w = _WIDTH[dtype]
    signed = dtype != _D.uint8
    two, zero = _scalar(2, a), _scalar(0, a)
    planes = _bit_planes(a)
    magnitude = planes[:w - 1] if signed else planes
    out = zero
    for k, bit in enumerate(magnitude):
        weight = where(b <= k, two ** ops.clamp(k - b, min=0.0, max=float(len(magnitude) - 1)), zero)
        out = out + bit.to(dtype=dtype) * weight
    if signed:  # the sign bit becomes -2**(w-1-b), or -1 once b >= w-1
        shift = ops.clamp(b, min=0.0, max=float(w - 1))
        sign_weight = where(shift == 0, _scalar(-(1 << (w - 1)), a),
                            ops.neg(two ** ops.clamp(_scalar(w - 1, a) - shift, min=0.0, max=float(w - 2))))
        out = out + planes[-1].to(dtype=dtype) * sign_weight
    return out



__all__ = ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "bitwise_left_shift", "bitwise_right_shift"]
