"""oar.nn.init: in-place parameter initializers with PyTorch's names and formulas.

Each fills the tensor's memory with copy_ under no_grad (so it works on
parameters) and returns the same tensor. Random draws use oar's generator, so
oar.manual_seed makes them reproducible.
"""
import math
import numbers

from .. import _C
from .._ops import ops
from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _fill_from(tensor, value):
    with no_grad():
        tensor.copy_(value)
    return tensor


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _check_float(tensor, fn):
    if not tensor.is_floating_point():
        raise TypeError(f"nn.init.{fn}: expected a floating-point tensor, got {tensor.dtype}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    _check_float(tensor, "uniform_")
    if tensor.numel() == 0:
        return tensor
    u = ops.uniform(shape=list(tensor.shape), low=float(a), high=float(b), dtype=tensor.dtype, device=tensor.device)
    return _fill_from(tensor, u)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _check_float(tensor, "normal_")
    if tensor.numel() == 0:
        return tensor
    n = ops.normal(shape=list(tensor.shape), mean=float(mean), std=float(std), dtype=tensor.dtype,
                   device=tensor.device)
    return _fill_from(tensor, n)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal draws clamped into [a, b] by redrawing the out-of-range entries (up to a few rounds)."""
    _check_float(tensor, "trunc_normal_")
    if tensor.numel() == 0:
        return tensor
    shape = list(tensor.shape)
    x = ops.normal(shape=shape, mean=float(mean), std=float(std), dtype=tensor.dtype, device=tensor.device)
    for _ in range(8):
        bad = ops.logical_or(x < a, x > b)
        if not bool(ops.max(bad)):
            break
        redraw = ops.normal(shape=shape, mean=float(mean), std=float(std), dtype=tensor.dtype, device=tensor.device)
        x = ops.where(bad, redraw, x)
    return _fill_from(tensor, ops.clamp(x, min=float(a), max=float(b)))


def constant_(tensor, val):
    with no_grad():
        tensor.fill_(float(val))
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    r = _C.call("arange", [], {"start": 0.0, "end": float(tensor.shape[0]), "dtype": _C.dtype.int64}, tensor.device)
    c = _C.call("arange", [], {"start": 0.0, "end": float(tensor.shape[1]), "dtype": _C.dtype.int64}, tensor.device)
    return _fill_from(tensor, (r.unsqueeze(1) == c.unsqueeze(0)).to(dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


# PyTorch's deprecated spellings without the trailing underscore.
uniform, normal, constant = uniform_, normal_, constant_
xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal = (xavier_uniform_, xavier_normal_,
                                                                  kaiming_uniform_, kaiming_normal_)
