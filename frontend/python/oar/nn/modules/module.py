"""torch.nn.modules.module: the Module base class and the global module hooks, re-exported from oar.nn (the same
classes)."""
from ..module import (Module, register_module_forward_pre_hook, register_module_forward_hook,
                      register_module_full_backward_pre_hook, register_module_full_backward_hook, _addindent)
from ..parameter import Parameter
from ..module import RemovableHandle
from .._state_dict import IncompatibleKeys as _IncompatibleKeys  # noqa: F401  load_state_dict's result type

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook", "_addindent",
           "Parameter", "RemovableHandle"]
