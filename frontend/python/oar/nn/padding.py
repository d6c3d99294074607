"""Padding layers: ConstantPad, ZeroPad, ReflectionPad, ReplicationPad and CircularPad in 1-D, 2-D and 3-D, with
PyTorch's constructor signatures, `padding` attribute (a tuple (left, right, top, bottom, front, back) from the
last dim), repr, and forward = F.pad with the layer's mode; errors for bad sizes come from F.pad."""
import numbers

from .._C import ShapeError
from . import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _padding(padding, n, cls):
    """An int (the same on every side) or a sequence of 2 * n ints, as a tuple of 2 * n ints."""
    if _is_int(padding):
        return (int(padding),) * (2 * n)
    if isinstance(padding, (tuple, list)) and all(_is_int(p) for p in padding):
        if len(padding) != 2 * n:
            raise ValueError(f"{cls}: padding must be an int or a tuple of {2 * n} ints, got {len(padding)} values "
                             f"{tuple(padding)}")
        return tuple(int(p) for p in padding)
    raise TypeError(f"{cls}: padding must be an int or a tuple of {2 * n} ints, got {padding!r}")


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._n, type(self).__name__)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim of [C, W] or [N, C, W] with value: padding = int or (left, right)."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims: padding = int or (left, right, top, bottom)."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims: padding = int or (left, right, top, bottom, front, back)."""
    _n = 3


class _ZeroPadMixin:
    """ZeroPadNd: ConstantPadNd with value 0 (so isinstance(ZeroPad2d(1), ConstantPad2d), as in PyTorch),
    constructed from the padding alone and shown without the value."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class ZeroPad1d(_ZeroPadMixin, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPadMixin, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPadMixin, ConstantPad3d):
    pass


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Mirror padding (the edge value not repeated) of [C, W] or [N, C, W]; each padding < W."""
    _n = 1


class ReflectionPad2d(_ReflectionPadNd):
    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    _n = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Repeats the edge value of [C, W] or [N, C, W]."""
    _n = 1


class ReplicationPad2d(_ReplicationPadNd):
    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    _n = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise ShapeError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Wrap-around padding of [C, W] or [N, C, W]: the left pad repeats the last values, each padding <= W."""
    _n = 1


class CircularPad2d(_CircularPadNd):
    _n = 2


class CircularPad3d(_CircularPadNd):
    _n = 3
