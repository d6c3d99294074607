"""oar.nn.grad (torch.nn.grad): the gradients of a convolution with respect to its input and its weight.

convNd_input(input_size, weight, grad_output, ...) is the transposed convolution of grad_output with weight
(the output_padding that gives input_size chosen as PyTorch does); convNd_weight(input, weight_size,
grad_output, ...) is the vector-Jacobian product of the convolution with respect to a weight of that size,
taken through autograd (differentiable again when input or grad_output requires grad).
"""
from .. import _C
from ..autograd import enable_grad, grad as _autograd_grad
from . import functional as F
from ._functional_conv import _ntuple

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _grad_input_padding(grad_output, input_size, stride, padding, kernel_size, dilation):
    k = grad_output.ndim - 2
    if input_size is None:
        raise ValueError(f"grad.conv{k}d_input requires specifying an input_size")
    input_size = [int(s) for s in input_size]
    if len(input_size) == k + 2:
        input_size = input_size[-k:]
    if len(input_size) != k:
        raise ValueError(f"input_size must have {k + 2} elements (got {len(input_size)})")
    min_sizes = [(grad_output.shape[d + 2] - 1) * stride[d] - 2 * padding[d] + 1 + dilation[d] * (kernel_size[d] - 1)
                 for d in range(k)]
    max_sizes = [min_sizes[d] + stride[d] - 1 for d in range(k)]
    for size, lo, hi in zip(input_size, min_sizes, max_sizes):
        if size < lo or size > hi:
            raise ValueError(f"requested an input grad size of {input_size}, but valid sizes range from {min_sizes} "
                             f"to {max_sizes} (for a grad_output of {list(grad_output.shape[2:])})")
    return tuple(input_size[d] - min_sizes[d] for d in range(k))


def _input(n, transposed_fn, input_size, weight, grad_output, stride, padding, dilation, groups):
    if grad_output.ndim != n + 2:
        raise _C.ShapeError(f"conv{n}d_input: expected a {n + 2}-D grad_output [N, C_out, ...], got shape "
                            f"{tuple(grad_output.shape)}")
    stride, padding = _ntuple(stride, n, "stride"), _ntuple(padding, n, "padding")
    dilation = _ntuple(dilation, n, "dilation")
    kernel_size = tuple(weight.shape[2:])
    output_padding = _grad_input_padding(grad_output, input_size, stride, padding, kernel_size, dilation)
    return transposed_fn(grad_output, weight, None, stride, padding, output_padding, groups, dilation)


def _weight(n, conv_fn, input, weight_size, grad_output, stride, padding, dilation, groups):
    from .._creation import zeros
    w = zeros(tuple(int(s) for s in weight_size), dtype=input.dtype, device=input.device, requires_grad=True)
    create_graph = input.requires_grad or grad_output.requires_grad
    with enable_grad():
        y = conv_fn(input, w, None, stride, padding, dilation, groups)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise _C.ShapeError(f"conv{n}d_weight: grad_output has shape {tuple(grad_output.shape)}, but the "
                                f"convolution's output has shape {tuple(y.shape)}")
        (g,) = _autograd_grad([y], [w], [grad_output], create_graph=create_graph)
    return g


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input(1, F.conv_transpose1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight(1, F.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input(2, F.conv_transpose2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight(2, F.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input(3, F.conv_transpose3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight(3, F.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
