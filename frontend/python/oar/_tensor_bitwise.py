"""PyTorch's logical and bitwise functions (and, or, xor, not, shifts) for bool and integer tensors.

Integer tensors use the catalog's bitwise ops (kernel_primitives' binary_ops.def / unary_ops.def, INTEGRAL
functors: one kernel per call on every device); bool tensors use the logical ops, as PyTorch's bitwise
functions do on bool. Shifts follow PyTorch: a count that is negative or the width or more gives 0 (left)
or the sign fill (right)."""
from . import _C
from ._functions import _promoted
from ._ops import ops
from ._tensor_math_base import _D


def logical_and(input, other):
    return ops.logical_and(input, other)


def logical_or(input, other):
    return ops.logical_or(input, other)


def logical_xor(input, other):
    return ops.logical_xor(input, other)


def _bitwise_operands(input, other, fn):
    dtype, (a, b) = _promoted(input, other)
    if dtype.is_floating_point:
        raise _C.DTypeError(f"{fn}(): not implemented for floating point tensors ({dtype}); use integer or bool")
    return dtype, a, b


def _bitwise(logical_op, integer_op, name):
    def fn(input, other):
        dtype, a, b = _bitwise_operands(input, other, name)
        return logical_op(a, b) if dtype == _D.bool else integer_op(a, b)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(ops.logical_and, ops.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(ops.logical_or, ops.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(ops.logical_xor, ops.bitwise_xor, "bitwise_xor")


def bitwise_not(input):
    if input.is_floating_point():
        raise _C.DTypeError(f"bitwise_not(): not implemented for floating point tensors ({input.dtype})")
    if input.dtype == _D.bool:
        return ops.logical_not(input)
    return ops.bitwise_not(input)


def _shift(integer_op, name):
    def fn(input, other):
        dtype, a, b = _bitwise_operands(input, other, name)
        if dtype == _D.bool:
            raise _C.DTypeError(f"{name}(): not implemented for bool tensors")
        return integer_op(a, b)
    fn.__name__ = name
    return fn


bitwise_left_shift = _shift(ops.bitwise_left_shift, "bitwise_left_shift")
bitwise_right_shift = _shift(ops.bitwise_right_shift, "bitwise_right_shift")


__all__ = ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "bitwise_left_shift", "bitwise_right_shift"]
