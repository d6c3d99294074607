"""Activation functions of oar.nn.functional added beside functional.py's (re-exported there): glu, the
shrink family, logsigmoid, softmin, softsign, prelu, rrelu and gumbel_softmax, composed from catalog ops
so autograd and every device come from those ops."""
import numbers

from .. import _C
from .._C import Tensor, ShapeError
from .._ops import ops
from .. import _functions as _fn

__all__ = ["glu", "hardshrink", "softshrink", "tanhshrink", "logsigmoid", "softmin", "softsign", "prelu", "rrelu",
           "rrelu_", "gumbel_softmax"]


def _check(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be an oar.Tensor, not {type(x).__name__}")


def _inplace(input, fn, inplace):
    # Same contract as functional._inplace (kept local: functional imports this module).
    if not inplace:
        return fn(input)
    return input._update_(fn(input._inplace_src()))


def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of input along dim."""
    _check(input, "input", "glu")
    if input.ndim == 0:
        raise ShapeError("glu does not support scalars because halving size must be even")
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    n = input.shape[d]
    if n % 2:
        raise ShapeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = ops.split(input, sizes=[n // 2, n // 2], dim=d)
    return a * ops.sigmoid(b)


def hardshrink(input, lambd=0.5):
    """input where |input| > lambd, else 0."""
    _check(input, "input", "hardshrink")
    return _fn.where(ops.abs(input) > lambd, input, 0.0).to(dtype=input.dtype)


def softshrink(input, lambd=0.5):
    """input - lambd above lambd, input + lambd below -lambd, 0 in between."""
    _check(input, "input", "softshrink")
    if lambd < 0:
        raise ValueError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return input - ops.clamp(input, min=-float(lambd), max=float(lambd))


def tanhshrink(input):
    return input - ops.tanh(input)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|, gradient sigmoid(-x) (0.5 at 0)."""
    _check(input, "input", "logsigmoid")
    from ._loss_functions import _softplus
    return -_softplus(-input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along dim (PyTorch's implicit dim when None)."""
    _check(input, "input", "softmin")
    if dtype is not None:
        input = input.to(dtype=dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return ops.softmax(-input, dim=int(dim))


def softsign(input):
    """input / (1 + |input|)."""
    _check(input, "input", "softsign")
    return ops.softsign(input)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight a scalar or one value per channel (dim 1)."""
    _check(input, "input", "prelu")
    _check(weight, "weight", "prelu")
    if weight.ndim > 1:
        raise ShapeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise ShapeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim >= 2 else 1
        if channels != n:
            raise ShapeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                             f"and channel size = {channels}.")
        w = weight.reshape(1, n, *([1] * (input.ndim - 2)))
    else:
        w = weight.reshape(())
    return _fn.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each non-positive element is scaled by a slope drawn from
    U(lower, upper); otherwise by the mean slope (lower + upper) / 2."""
    _check(input, "input", "rrelu")
    if not isinstance(lower, numbers.Real) or not isinstance(upper, numbers.Real):
        raise TypeError("rrelu(): lower and upper must be numbers")
    if lower > upper:
        raise ValueError(f"Lower bound should be less than or equal to the upper bound, got lower={lower} "
                         f"upper={upper}")
    if not training:
        slope = (float(lower) + float(upper)) / 2
        return _inplace(input, lambda x: ops.leaky_relu(x, negative_slope=slope), inplace)

    def noisy(x):
        a = ops.uniform(shape=list(x.shape), low=float(lower), high=float(upper), dtype=x.dtype, device=x.device)
        return _fn.where(x > 0, x, x * a)
    return _inplace(input, noisy, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); hard=True returns the one-hot of its argmax with
    the soft sample's gradient (straight-through estimator)."""
    _check(logits, "logits", "gumbel_softmax")
    if eps != 1e-10:
        import warnings
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    u = ops.uniform(shape=list(logits.shape), low=0.0, high=1.0, dtype=logits.dtype, device=logits.device)
    # TODO(log1p): -log1p(-u) once the catalog has log1p; the clamp keeps an exponential draw of 0 finite.
    exponential = ops.clamp(-ops.log(1 - u), min=1e-30)
    y_soft = ops.softmax((logits - ops.log(exponential)) / float(tau), dim=int(dim))
    if not hard:
        return y_soft
    d = dim + logits.ndim if dim < 0 else dim
    index = ops.argmax(y_soft, dims=[d], keepdim=True)
    classes = _C.call("arange", [], {"start": 0.0, "end": float(logits.shape[d]), "dtype": index.dtype},
                      logits.device).reshape(*[logits.shape[d] if i == d else 1 for i in range(logits.ndim)])
    y_hard = (index == classes).to(dtype=logits.dtype)
    return y_hard - y_soft.detach() + y_soft
