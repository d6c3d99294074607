"""Helpers shared by oar.special's families: argument conversion (integers compute in the default float
dtype, as torch's special functions do), constants on an operand's device, Horner evaluation, quadrature
over a trailing node axis, `out=`, and the two ways a function meets autograd (no gradient, as torch for
the functions it does not differentiate, or a custom Function with the exact derivative)."""
import functools
import numbers

from .. import _C
from .._C import Tensor
from .._ops import ops
from .._functions import result_type, where  # noqa: F401  (where: re-exported for the family modules)

_D = _C.dtype


def _default_float():
    from .._creation import get_default_dtype
    return get_default_dtype()


def floating(x, fn):
    """x as a floating tensor: integer and bool tensors are computed in the default float dtype."""
    if not isinstance(x, Tensor):
        raise TypeError(f"special.{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x if x.is_floating_point() else x.to(dtype=_default_float())


def floating_pair(a, b, fn):
    """Two operands (tensors or Python numbers, at least one a tensor) promoted together; integer results
    become the default float dtype."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"special.{fn}(): expected at least one Tensor argument")
    dtype = result_type(a, b)
    if not dtype.is_floating_point:
        dtype = _default_float()
    device = a.device if isinstance(a, Tensor) else b.device

    def conv(v):
        if isinstance(v, Tensor):
            return v if v.dtype == dtype else v.to(dtype=dtype)
        if isinstance(v, bool) or not isinstance(v, numbers.Number):
            raise TypeError(f"special.{fn}(): expected a Tensor or a number, got {type(v).__name__}")
        return _C.tensor(float(v), dtype, device)
    return conv(a), conv(b)


def const(value, like):
    """A 0-d tensor of value in like's dtype, on like's device."""
    return _C.tensor(float(value), like.dtype, like.device)


def nodes(values, like):
    """A 1-D tensor of quadrature nodes or weights in like's dtype, on like's device."""
    return _C.tensor([float(v) for v in values], like.dtype, like.device)


def horner(y, coeffs):
    """sum(coeffs[k] * y**(n-1-k)): coeffs from the highest power down."""
    acc = y * 0.0 + coeffs[0]
    for c in coeffs[1:]:
        acc = acc * y + c
    return acc


def quadrature(x, integrand, points, weights):
    """sum_j weights[j] * integrand(x, t_j) over a trailing node axis (one broadcast op per step, however
    many nodes)."""
    t = nodes(points, x)
    w = nodes(weights, x)
    return (integrand(x.unsqueeze(-1), t) * w).sum(-1)


def no_grad_function(fn):
    """A function torch 1.13 does not differentiate: computed without recording, so its result does not
    require grad (as torch's), and the intermediate ops cost no autograd memory."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        prev = _C.is_grad_enabled()
        _C.set_grad_enabled(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _C.set_grad_enabled(prev)
    return wrapper


def unary_function(name, forward, derivative):
    """A unary function with an exact derivative: forward(x) computes the value without recording the
    composite's intermediate ops, and the gradient is grad * derivative(x, y) (itself made of recorded
    special functions, so second derivatives work where those have gradients)."""
    from ..autograd import Function

    class _Fn(Function):
        @staticmethod
        def forward(ctx, x):
            y = forward(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * derivative(x, y)
    _Fn.__name__ = _Fn.__qualname__ = name

    def fn(input):
        return _Fn.apply(floating(input, name))
    fn.__name__ = fn.__qualname__ = name
    return fn
