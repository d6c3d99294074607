"""oar.nn.init: in-place parameter initializers with PyTorch's names and formulas.

Each fills the tensor's memory with copy_ under no_grad (so it works on
parameters) and returns the same tensor. Random draws use oar's generator, so
oar.manual_seed makes them reproducible.
"""
import math
import numbers
import warnings

import numpy as np

from .. import _C
from .._ops import ops
from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_"]


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


def _erfinv(y):
    """erfinv(y) for |y| < 1: Winitzki's approximation refined by Newton steps on erf (an op).
    TODO(erfinv): a catalog erfinv op would replace this."""
    w = ops.log((1 - y) * (1 + y))
    a = 0.147
    t = w * 0.5 + 2.0 / (math.pi * a)
    x = ops.sign(y) * ops.sqrt(ops.sqrt(t * t - w / a) - t)
    for _ in range(3):
        x = x - (ops.erf(x) - y) / (ops.exp(-x * x) * (2.0 / math.sqrt(math.pi)))
    return x


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) draws truncated to [a, b] (absolute bounds), by PyTorch's method: uniform draws
    between the CDF values of a and b mapped back through the inverse normal CDF, then clamped."""
    _check_float(tensor, "trunc_normal_")
    if tensor.numel() == 0:
        return tensor
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    u = ops.uniform(shape=list(tensor.shape), low=2 * lo - 1, high=2 * hi - 1, dtype=tensor.dtype,
                    device=tensor.device)
    u = ops.clamp(u, min=-1 + 1e-7 if tensor.dtype != _C.dtype.float64 else -1 + 1e-15,
                  max=1 - 1e-7 if tensor.dtype != _C.dtype.float64 else 1 - 1e-15)
    x = _erfinv(u) * (std * math.sqrt(2.0)) + mean
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


def _from_numpy(tensor, array):
    return _fill_from(tensor, _C.tensor(np.ascontiguousarray(array, dtype=np.float64), tensor.dtype, tensor.device))


def dirac_(tensor, groups=1):
    """The identity of a convolution weight [out, in, *kernel]: 1 at the kernel centre of (d, d) for each
    group's first min(out // groups, in) channels, 0 elsewhere."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per = sizes[0] // groups
    out = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per, sizes[1])):
            out[(g * per + d, d) + centre] = 1
    return _from_numpy(tensor, out)


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
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


_calculate_correct_fan = _fan


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix times gain, from the QR decomposition of a normal draw, the signs fixed
    by R's diagonal as PyTorch does (the draw is oar's, the QR NumPy's on the host); dims after the first
    are flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ops.normal(shape=[rows, cols], mean=0.0, std=1.0, dtype=tensor.dtype, device=tensor.device)
    a = np.asarray(flat.cpu().numpy(), dtype=np.float64)
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _from_numpy(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Normal(0, std) entries with ceil(sparsity * rows) zeros at random rows of each column (2-D only)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    values = ops.normal(shape=[rows, cols], mean=0.0, std=float(std), dtype=tensor.dtype, device=tensor.device)
    keep = np.ones((rows, cols))
    if num_zeros:
        from .._creation import randperm
        for c in range(cols):
            keep[np.asarray(randperm(rows).tolist()[:num_zeros], dtype=np.int64), c] = 0
    mask = _C.tensor(keep, tensor.dtype, tensor.device)
    return _fill_from(tensor, values * mask)


# PyTorch's deprecated spellings without the trailing underscore.
uniform, normal, constant = uniform_, normal_, constant_
xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal = (xavier_uniform_, xavier_normal_,
                                                                  kaiming_uniform_, kaiming_normal_)
orthogonal, sparse = orthogonal_, sparse_
