"""torch.nn.modules.pixelshuffle: PixelShuffle, PixelUnshuffle, re-exported from oar.nn (the same classes)."""
from ..upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
