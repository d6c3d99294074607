"""torch.nn.modules.channelshuffle: ChannelShuffle, re-exported from oar.nn (the same classes)."""
from ..upsampling import ChannelShuffle

__all__ = ["ChannelShuffle"]
