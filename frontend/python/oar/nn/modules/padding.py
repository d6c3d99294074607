"""torch.nn.modules.padding: padding layers and their bases, re-exported from oar.nn (the same classes)."""
from ..padding import (_ConstantPadNd, _ReflectionPadNd, _ReplicationPadNd, _CircularPadNd, ConstantPad1d,
                       ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d, ReflectionPad2d,
                       ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                       CircularPad2d, CircularPad3d)

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]
