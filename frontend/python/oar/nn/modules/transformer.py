"""torch.nn.modules.transformer: transformer layers, re-exported from oar.nn (the same classes)."""
from ..transformer import (Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
                           TransformerDecoderLayer)

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]
