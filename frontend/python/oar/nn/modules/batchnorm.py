"""torch.nn.modules.batchnorm: batch normalization and its bases _NormBase and _BatchNorm, re-exported from oar.nn (the
same classes)."""
from ..normalization import _NormBase, _BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]
