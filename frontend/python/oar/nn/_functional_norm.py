"""Normalization functions of oar.nn.functional (re-exported there): group_norm, instance_norm, rms_norm and
local_response_norm, composed from the layer_norm / avg_pool2d / reduction ops (so they have gradients
and run on every device that has those ops)."""
import math
import numbers

import numpy as np

from .. import _C
from .._C import Tensor, ShapeError
from .._ops import ops
from ..autograd import no_grad

__all__ = ["group_norm", "instance_norm", "rms_norm", "local_response_norm"]

_EPS = {}


def finfo_eps(dtype):
    """torch.finfo(dtype).eps for oar's floating dtypes."""
    if not _EPS:
        D = _C.dtype
        _EPS.update({str(D.float16): float(np.finfo(np.float16).eps), str(D.float32): float(np.finfo(np.float32).eps),
                     str(D.float64): float(np.finfo(np.float64).eps), str(D.bfloat16): 0.0078125})
    return _EPS.get(str(dtype), _EPS[str(_C.dtype.float32)])


def _check(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be an oar.Tensor, not {type(x).__name__}")


def _channel_view(t, ndim):
    """A per-channel [C] tensor as [1, C, 1, ...] to broadcast against an ndim-D [N, C, *] input."""
    return t.reshape(1, t.shape[0], *([1] * (ndim - 2)))


def _affine(y, weight, bias):
    if weight is not None:
        y = y * _channel_view(weight, y.ndim)
    if bias is not None:
        y = y + _channel_view(bias, y.ndim)
    return y


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes each group of C // num_groups channels of an [N, C, *] input over its channels and
    spatial positions (biased variance), then applies the per-channel weight and bias."""
    _check(input, "input", "group_norm")
    if input.ndim < 2:
        raise ShapeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    N, C = input.shape[0], input.shape[1]
    if not isinstance(num_groups, numbers.Integral) or num_groups <= 0 or C % num_groups:
        raise ShapeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                         f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise ShapeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                             f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    per = C // num_groups * math.prod(input.shape[2:])
    if N * C // num_groups * math.prod(input.shape[2:]) == 1:  # PyTorch's _verify_batch_size
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    if input.numel() == 0:
        return _affine(input, weight, bias)
    x = input.reshape(N, num_groups, per)
    y = ops.layer_norm(x, None, None, normalized_ndim=1, eps=float(eps))[0].reshape(*input.shape)
    return _affine(y, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each (sample, channel) plane of an [N, C, *] input over its spatial positions. With
    use_input_stats the running stats (if given) are updated in place with the batch mean of the
    per-instance means and unbiased variances; without, the running stats normalize."""
    _check(input, "input", "instance_norm")
    if input.ndim < 2:
        raise ShapeError(f"instance_norm(): expected an input with at least 2 dims [N, C, ...], got "
                         f"{list(input.shape)}")
    N, C = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise ShapeError(f"instance_norm(): {name} has shape {list(t.shape)}, expected [{C}] for input of "
                             f"shape {list(input.shape)}")
    spatial = math.prod(input.shape[2:])
    if use_input_stats:
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
        x = input.reshape(N, C, spatial)
        y = ops.layer_norm(x, None, None, normalized_ndim=1, eps=float(eps))[0].reshape(*input.shape)
        if running_mean is not None or running_var is not None:
            with no_grad():
                xd = x.detach()
                m = float(momentum)
                if running_mean is not None:
                    mean = ops.mean(ops.mean(xd, dims=[2]), dims=[0]).to(dtype=running_mean.dtype)
                    running_mean.copy_(running_mean * (1 - m) + mean * m)
                if running_var is not None:
                    var = ops.mean(ops.var(xd, dims=[2], correction=1), dims=[0]).to(dtype=running_var.dtype)
                    running_var.copy_(running_var * (1 - m) + var * m)
        return _affine(y, weight, bias)
    if running_mean is None or running_var is None:
        raise ValueError("Expected running_mean and running_var to be defined when use_input_stats is false")
    rm, rv = _channel_view(running_mean, input.ndim), _channel_view(running_var, input.ndim)
    return _affine((input - rm) * ops.rsqrt(rv + float(eps)), weight, bias)


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input**2 over the trailing normalized_shape dims) + eps) * weight;
    eps=None takes the machine epsilon of input's dtype (torch.finfo(dtype).eps)."""
    _check(input, "input", "rms_norm")
    shape = _normalized_shape(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise ShapeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                         f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise ShapeError(f"rms_norm(): weight has shape {list(weight.shape)}, expected {list(shape)}")
    if eps is None:
        eps = finfo_eps(input.dtype)
    dims = list(range(input.ndim - k, input.ndim))
    y = input * ops.rsqrt(ops.mean(input * input, dims=dims, keepdim=True) + float(eps))
    return y if weight is None else y * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha / size * sum of input**2 over the `size` neighbouring channels) ** beta,
    the window centred as PyTorch's (size // 2 channels before, (size - 1) // 2 after, zero padded)."""
    _check(input, "input", "local_response_norm")
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if not isinstance(size, numbers.Integral) or size <= 0:
        raise ValueError(f"local_response_norm(): size must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    N, C = input.shape[0], input.shape[1]
    sq = (input * input).reshape(N, 1, C, -1)
    sq = ops.pad(sq, pads=[0, 0, size // 2, (size - 1) // 2])
    div = ops.avg_pool2d(sq, kernel_size=[int(size), 1], stride=[1, 1], padding=[0, 0]).reshape(*input.shape)
    return input / ((div * float(alpha) + float(k)) ** float(beta))
