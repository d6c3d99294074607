"""BatchNorm1d/2d and LayerNorm with PyTorch's parameters, buffers and running-stat updates.

BatchNorm keeps running_mean / running_var / num_batches_tracked as buffers
(saved in state_dict). In training the batch statistics normalize and the
running stats are updated in place under no_grad with the unbiased batch
variance; in eval the running stats normalize.
"""
import numbers

from .. import _C
from .._creation import zeros, ones, tensor
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    _expected_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        if not isinstance(num_features, numbers.Integral) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, got {num_features!r}")
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = dtype or _C.dtype.float32
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dt, device=device))
            self.bias = Parameter(zeros(num_features, dtype=dt, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dt, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dt, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_C.dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.ndim not in self._expected_dims:
            want = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise _C.ShapeError(f"{type(self).__name__}: expected {self.num_features} channels (dim 1), got input "
                                f"of shape {tuple(input.shape)}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or self.running_mean is None
        # Running stats are handed to F.batch_norm only when they should be used or updated.
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over [N, C] or [N, C, L]."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over [N, C, H, W]."""
    _expected_dims = (4,)


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims, with elementwise weight and bias."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        if not self.normalized_shape or any(s <= 0 for s in self.normalized_shape):
            raise ValueError(f"normalized_shape must be non-empty and positive, got {normalized_shape!r}")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dt = dtype or _C.dtype.float32
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dt, device=device))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape, dtype=dt, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
