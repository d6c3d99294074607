"""torch.nn.modules.distance: PairwiseDistance, CosineSimilarity, re-exported from oar.nn (the same classes)."""
from ..distance import PairwiseDistance, CosineSimilarity

__all__ = ["PairwiseDistance", "CosineSimilarity"]
