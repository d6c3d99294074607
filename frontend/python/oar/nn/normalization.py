"""Normalization layers with PyTorch's parameters, buffers, reprs and running-stat updates: BatchNorm1d/2d/3d,
SyncBatchNorm (single process), InstanceNorm1d/2d/3d, GroupNorm, LayerNorm, RMSNorm and LocalResponseNorm.

BatchNorm keeps running_mean / running_var / num_batches_tracked as buffers
(saved in state_dict). In training the batch statistics normalize and the
running stats are updated in place under no_grad with the unbiased batch
variance; in eval the running stats normalize. InstanceNorm has the same
buffers when track_running_stats=True (off by default) and no affine
parameters unless affine=True.
"""
import numbers
import warnings

from .. import _C, _creation
from .._creation import zeros, ones, tensor
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _NormBase(Module):
    """The parameters and buffers shared by batch and instance norm."""
    _expected_dims = ()
    _version = 2  # version 2 added num_batches_tracked (PyTorch 0.4.1)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        if not isinstance(num_features, numbers.Integral) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, got {num_features!r}")
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = dtype or _creation.get_default_dtype()
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

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # a checkpoint from before version 2, or without metadata (a plain dict), may lack
        # num_batches_tracked: it loads as 0 instead of being missing, as in PyTorch
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            state_dict.setdefault(prefix + "num_batches_tracked", tensor(0, dtype=_C.dtype.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _check_input_dim(self, input):
        if input.ndim not in self._expected_dims:
            want = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

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


class BatchNorm1d(_BatchNorm):
    """Batch norm over [N, C] or [N, C, L]."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over [N, C, H, W]."""
    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over [N, C, D, H, W]."""
    _expected_dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch norm over [N, C, *]. oar runs one process, so the statistics are those of the local batch
    (what PyTorch's SyncBatchNorm computes when no process group is initialized)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm sharing its parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            for name in ("weight", "bias"):
                out._parameters[name] = module._parameters[name]
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                out._buffers[name] = module._buffers[name]
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.ndim == self._no_batch_dim
        x = input.unsqueeze(0) if unbatched else input
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over [N, C, L] (or unbatched [C, L])."""
    _expected_dims, _no_batch_dim = (2, 3), 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over [N, C, H, W] (or unbatched [C, H, W])."""
    _expected_dims, _no_batch_dim = (3, 4), 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over [N, C, D, H, W] (or unbatched [C, D, H, W])."""
    _expected_dims, _no_batch_dim = (4, 5), 4


class GroupNorm(Module):
    """Normalizes groups of num_channels // num_groups channels of an [N, C, *] input, then applies
    per-channel weight and bias (affine)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dt = dtype or _creation.get_default_dtype()
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dt, device=device))
            self.bias = Parameter(zeros(num_channels, dtype=dt, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


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
        dt = dtype or _creation.get_default_dtype()
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


class RMSNorm(Module):
    """Root-mean-square norm over the trailing normalized_shape dims, with an elementwise weight;
    eps=None uses the machine epsilon of the input's dtype."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype or _creation.get_default_dtype(), device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalizes each channel by the summed squares of its `size` neighbouring channels (AlexNet's LRN)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
