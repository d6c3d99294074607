"""torch.nn.modules.pooling: pooling layers and their bases, re-exported from oar.nn (the same classes)."""
from ..pooling import (_MaxPoolNd, _AvgPoolNd, _AdaptiveMaxPoolNd, _AdaptiveAvgPoolNd, _LPPoolNd, _MaxUnpoolNd,
                       MaxPool1d, MaxPool3d, AvgPool1d, AvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                       AdaptiveMaxPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool3d, LPPool1d, LPPool2d, MaxUnpool1d,
                       MaxUnpool2d, MaxUnpool3d)
from ..layers import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d

__all__ = ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
