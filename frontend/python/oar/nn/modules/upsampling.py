"""torch.nn.modules.upsampling: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, re-exported from oar.nn (the same
classes)."""
from ..upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
