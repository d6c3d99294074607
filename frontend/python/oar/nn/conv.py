"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d with PyTorch's constructor signatures,
initialisation (kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))), padding modes,
repr and state_dict keys (weight, bias)."""
import math
import numbers

from .. import _C, _creation
from .._creation import empty
from . import functional as F
from . import init
from . import _functional_conv as _fc
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _check_positive(name, v, minimum=1):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v!r}")


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nsp = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._nsp
        _check_positive("in_channels", in_channels)
        _check_positive("out_channels", out_channels)
        if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _fc._ntuple(kernel_size, n, "kernel_size")
        stride = _fc._ntuple(stride, n, "stride")
        dilation = _fc._ntuple(dilation, n, "dilation")
        if any(k <= 0 for k in kernel_size):
            raise ValueError(f"kernel_size must be positive, got {kernel_size}")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _fc._ntuple(padding, n, "padding")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'zeros', 'reflect', 'replicate', 'circular'}}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.transposed, self.output_padding = transposed, output_padding
        self.groups, self.padding_mode = int(groups), padding_mode
        # F.pad's (left, right, ...) from the last dim, for the non-zeros padding modes
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        dt = dtype or _creation.get_default_dtype()
        self.weight = Parameter(empty(*(shape + kernel_size), dtype=dt, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dt, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = self._nsp
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _check_channels(self, input):
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise _C.ShapeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                                f"{'conv_transpose' if self._transposed else 'conv'}{n}d, but got input of size: "
                                f"{list(input.shape)}")
        c = input.shape[-n - 1]
        if c != self.in_channels:
            w = list(self.weight.shape)
            if self._transposed:
                raise _C.ShapeError(f"Given transposed=1, weight of size {w}, expected input{list(input.shape)} to "
                                    f"have {self.in_channels} channels, but got {c} channels instead")
            raise _C.ShapeError(f"Given groups={self.groups}, weight of size {w}, expected input"
                                f"{list(input.shape)} to have {self.in_channels} channels, but got {c} channels "
                                f"instead")


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False,
                         (0,) * self._nsp, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = self._fn
        if self.padding_mode != "zeros":
            pads = self._reversed_padding_repeated_twice
            if self.padding_mode == "circular":
                x = _fc.circular_pad(input, pads)
            else:
                x = F.pad(input, pads, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        self._check_channels(input)
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over [N, C_in, L] (or [C_in, L]); weight [C_out, C_in / groups, k]."""
    _nsp = 1
    _fn = staticmethod(_fc.conv1d)


class Conv2d(_Conv):
    """2-D convolution over [N, C_in, H, W] (or [C_in, H, W]); weight [C_out, C_in / groups, kH, kW]."""
    _nsp = 2
    _fn = staticmethod(lambda *a: F.conv2d(*a))


class Conv3d(_Conv):
    """3-D convolution over [N, C_in, D, H, W] (or unbatched); weight [C_out, C_in / groups, kD, kH, kW]."""
    _nsp = 3
    _fn = staticmethod(_fc.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise TypeError(f"{type(self).__name__}: padding must be an int or a tuple of ints, got {padding!r}")
        output_padding = _fc._ntuple(output_padding, self._nsp, "output_padding")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding giving output_size (PyTorch's rule and messages); self.output_padding if None."""
        if output_size is None:
            return self.output_padding
        has_batch_dim = input.ndim == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = [int(s) for s in output_size]
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.ndim}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.shape[d + num_non_spatial_dims] - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            if output_size[i] < min_sizes[i] or output_size[i] > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {list(input.shape[num_non_spatial_dims:])})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        self._check_channels(input)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._nsp, self.dilation)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                        self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution ("deconvolution"); weight [C_in, C_out / groups, k]."""
    _nsp = 1
    _fn = staticmethod(_fc.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution; weight [C_in, C_out / groups, kH, kW]."""
    _nsp = 2
    _fn = staticmethod(_fc.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution; weight [C_in, C_out / groups, kD, kH, kW]."""
    _nsp = 3
    _fn = staticmethod(_fc.conv_transpose3d)
