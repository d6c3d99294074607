"""torch.nn.modules.lazy: LazyModuleMixin, re-exported from oar.nn (the same classes)."""
from ..lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
