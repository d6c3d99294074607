"""torch.nn.modules.linear: Identity, Linear, Bilinear, LazyLinear, re-exported from oar.nn (the same classes)."""
from ..layers import Identity, Linear, Bilinear
from ..lazy import LazyLinear
from ..attention import NonDynamicallyQuantizableLinear

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"]
