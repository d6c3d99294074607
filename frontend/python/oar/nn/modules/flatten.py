"""torch.nn.modules.flatten: Flatten, Unflatten, re-exported from oar.nn (the same classes)."""
from ..layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
