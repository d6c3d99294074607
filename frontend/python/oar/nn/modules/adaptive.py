"""torch.nn.modules.adaptive: AdaptiveLogSoftmaxWithLoss, re-exported from oar.nn (the same classes)."""
from ..adaptive import AdaptiveLogSoftmaxWithLoss

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
