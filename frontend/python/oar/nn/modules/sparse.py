"""torch.nn.modules.sparse: Embedding, EmbeddingBag, re-exported from oar.nn (the same classes)."""
from ..layers import Embedding
from ..sparse import EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
