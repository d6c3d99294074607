"""Lazy modules: LazyLinear, LazyConv1d/2d/3d and LazyConvTranspose1d/2d/3d infer their input size
(in_features / in_channels) from the first input, as PyTorch's.

Until then their weight and bias are UninitializedParameter objects (nn/parameter.py). A forward pre-hook
registered at construction materializes them on the first call (the same Parameter objects, so an optimizer
built before it keeps working), runs reset_parameters(), removes itself and turns the module into its
cls_to_become (LazyLinear -> Linear). load_state_dict() into a lazy module materializes the parameters from the
checkpoint's shapes (nn/_state_dict.py); the first forward then takes in_features / in_channels from them
(PyTorch leaves them 0 there). state_dict() of an uninitialized module holds the UninitializedParameters
(Module._save_to_state_dict keeps them as they are).
"""

from .._C import ShapeError
from ..autograd import no_grad
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import Linear, _check_positive
from .module import Module
from .parameter import UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


class LazyModuleMixin:
    """Mixin of the lazy modules (first base, before the module class): subclasses define
    initialize_parameters(*inputs), call _lazy_setup() at the end of __init__ and name cls_to_become."""
    cls_to_become = None

    def _lazy_setup(self):
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


def _uninitialized_weight_and_bias(module, bias, device, dtype):
    """A lazy Linear/Conv's weight and (if bias) bias as UninitializedParameters, then the hook that
    materializes them on the first forward."""
    module.weight = UninitializedParameter(device=device, dtype=dtype)
    if bias:
        module.bias = UninitializedParameter(device=device, dtype=dtype)
    else:
        module.register_parameter("bias", None)
    module._lazy_setup()


def _materialize_weight_and_bias(module, weight_shape, out_features):
    """Gives the lazy weight (and bias) their shapes in place, then the usual initialization."""
    with no_grad():
        module.weight.materialize(weight_shape)
        if module.bias is not None:
            module.bias.materialize((out_features,))
        module.reset_parameters()


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of the first input."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        _check_positive("out_features", out_features)
        self.in_features, self.out_features = 0, int(out_features)
        _uninitialized_weight_and_bias(self, bias, device, dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():  # materialized by load_state_dict
            self.in_features = self.weight.shape[1]
            return
        if input.ndim == 0:
            raise ShapeError(f"{type(self).__name__}: expected an input with at least 1 dim [..., in_features], "
                             f"got a 0-D tensor")
        self.in_features = int(input.shape[-1])
        _materialize_weight_and_bias(self, (self.out_features, self.in_features), self.out_features)


class _LazyConvXdMixin(LazyModuleMixin):
    def _lazy_init(self, cls, out_channels, groups, bias, device, dtype, *args):
        """cls.__init__ with in_channels = groups (valid, never used), then in_channels 0 and uninitialized
        weight and bias; reset_parameters skipped meanwhile."""
        _check_positive("out_channels", out_channels)
        self.__dict__["_lazy_constructing"] = True
        try:
            cls.__init__(self, groups, out_channels, *args, device=device, dtype=dtype)
        finally:
            del self.__dict__["_lazy_constructing"]
        self.in_channels = 0
        _uninitialized_weight_and_bias(self, bias, device, dtype)

    def reset_parameters(self):
        if self.__dict__.get("_lazy_constructing"):
            return
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise ShapeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {self._get_name()}, "
                             f"but got input of size: {list(input.shape)}")
        return int(input.shape[1] if input.ndim == n + 2 else input.shape[0])

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():  # materialized by load_state_dict
            w = self.weight.shape
            self.in_channels = w[0] if self.transposed else w[1] * self.groups
            return
        in_channels = self._get_in_channels(input)
        if in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        self.in_channels = in_channels
        if self.transposed:
            shape = (in_channels, self.out_channels // self.groups) + tuple(self.kernel_size)
        else:
            shape = (self.out_channels, in_channels // self.groups) + tuple(self.kernel_size)
        _materialize_weight_and_bias(self, shape, self.out_channels)


class _LazyConvNd(_LazyConvXdMixin):
    """LazyConv1d/2d/3d: Conv*d's constructor without in_channels (cls_to_become is that Conv*d)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(self.cls_to_become, out_channels, groups, bias, device, dtype, kernel_size, stride, padding,
                        dilation, groups, False, padding_mode)


class _LazyConvTransposeNd(_LazyConvXdMixin):
    """LazyConvTranspose1d/2d/3d: ConvTranspose*d's constructor without in_channels."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(self.cls_to_become, out_channels, groups, bias, device, dtype, kernel_size, stride, padding,
                        output_padding, groups, False, dilation, padding_mode)


class LazyConv1d(_LazyConvNd, Conv1d):
    """Conv1d whose in_channels is dim 1 (dim 0 unbatched) of the first input."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvNd, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
