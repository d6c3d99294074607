"""torch.nn.modules.fold: Fold, Unfold, re-exported from oar.nn (the same classes)."""
from ..fold import Fold, Unfold

__all__ = ["Fold", "Unfold"]
