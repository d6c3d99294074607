"""Pooling layers beyond MaxPool2d/AvgPool2d/AdaptiveAvgPool2d (in layers.py): 1-D and 3-D max/avg pooling,
adaptive max pooling (with indices), adaptive average pooling, power-average pooling and max unpooling, with
PyTorch's constructor signatures, stored attributes and repr."""
from . import _functional_conv as _fc
from .module import Module

__all__ = ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows of [N, C, L] (or [C, L]); return_indices=True also gives the argmax positions in L."""

    def forward(self, input):
        return _fc.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Max over windows of [N, C, D, H, W] (or unbatched); indices are flat positions in D * H * W."""

    def forward(self, input):
        return _fc.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """Base of AvgPool1d/2d/3d (PyTorch's name, for isinstance checks)."""

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _fc._ntuple(kernel_size, 1, "kernel_size")
        self.stride = _fc._ntuple(stride if stride is not None else kernel_size, 1, "stride")
        self.padding = _fc._ntuple(padding, 1, "padding")
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return _fc.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return _fc.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max over PyTorch's adaptive bins [floor(i L / o), ceil((i + 1) L / o)) of [N, C, L]."""

    def forward(self, input):
        return _fc.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max over adaptive bins of [N, C, H, W]; None in output_size keeps that input size."""

    def forward(self, input):
        return _fc.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return _fc.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return _fc.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return _fc.adaptive_avg_pool3d(input, self.output_size)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    """(sum over each window of x ** p) ** (1 / p) over [N, C, L]."""

    def forward(self, input):
        return _fc.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input):
        return _fc.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._nsp
        self.kernel_size = _fc._ntuple(kernel_size, n, "kernel_size")
        self.stride = _fc._ntuple(stride if stride is not None else kernel_size, n, "stride")
        self.padding = _fc._ntuple(padding, n, "padding")

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return _fc._max_unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size, self._nsp,
                               f"max_unpool{self._nsp}d")


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of MaxPool1d(return_indices=True): zeros except the maxima, at their indices."""
    _nsp = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _nsp = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nsp = 3
