"""Catalog ops whose torch.<op> signature differs from the catalog's (tensors, then attributes).

_catalog.install gives every other public op a generic wrapper; these keep PyTorch's argument order,
Python-number operands and return values, so code written for torch.<op> runs unchanged.
"""
from ._C import Tensor
from ._ops import ops


# Comparisons take Python numbers, as the operators do.
def ne(a, b):
    return a != b


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def scatter_add(input, dim, index, src):
    return ops.scatter_add(input, index, src, dim=dim)


def index_add(input, dim, index, source, *, alpha=1):
    return input.index_add(dim, index, source, alpha=alpha)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """torch.normal: mean and std tensors or numbers (broadcast together); with two numbers, size is the shape."""
    from ._creation import randn
    like = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    if like is None:
        if size is None:
            raise TypeError("normal() with a number mean and std needs size")
        z = randn(*size, generator=generator, dtype=dtype, device=device)
    else:
        shape = (mean * 0 + std * 0).shape
        z = randn(*shape, generator=generator, dtype=dtype or like.dtype, device=device or like.device)
    out = z * std + mean
    return out.requires_grad_(True) if requires_grad else out


def dropout(input, p=0.5, train=True):
    from .nn import functional as F
    return F.dropout(input, p, train)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    from .nn import functional as F
    return F.conv2d(input, weight, bias, stride, padding, dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    from .nn import functional as F
    return F.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    from .nn import functional as F
    return F.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    from .nn import functional as F
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    from .nn import functional as F
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def polygamma(n, input):
    """torch.polygamma(n, input): the n-th derivative of digamma (n a non-negative int)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma(n, input): n must be a non-negative int, got {n!r}")
    return ops.polygamma(input, n=float(n))


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_inplace(self, n):
    return self._update_(polygamma(n, self))


Tensor.polygamma = _polygamma_method
Tensor.polygamma_ = _polygamma_inplace

__all__ = ["ne", "lt", "le", "gt", "ge", "scatter_add", "index_add", "normal", "dropout", "conv2d", "max_pool2d",
           "avg_pool2d", "layer_norm", "batch_norm", "polygamma"]
