"""torch.nn.modules.instancenorm: instance normalization and its base _InstanceNorm, re-exported from oar.nn (the same
classes)."""
from ..normalization import _InstanceNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
