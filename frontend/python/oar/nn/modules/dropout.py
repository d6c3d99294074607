"""torch.nn.modules.dropout: dropout layers and their base _DropoutNd, re-exported from oar.nn (the same classes)."""
from ..layers import _DropoutNd, Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
