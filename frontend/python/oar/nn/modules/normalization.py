"""torch.nn.modules.normalization: LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, re-exported from oar.nn (the same
classes)."""
from ..normalization import LocalResponseNorm, LayerNorm, GroupNorm, RMSNorm

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
