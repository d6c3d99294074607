"""torch.nn.modules.container: the containers, re-exported from oar.nn (the same classes)."""
from ..container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
