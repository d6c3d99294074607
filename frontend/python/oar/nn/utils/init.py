"""nn.utils.init (torch.nn.utils.init): skip_init."""
import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters and buffers need not be initialized (the caller
    overwrites them). PyTorch builds the module on the meta device and allocates uninitialized memory on
    `device`; oar has no meta device, so the module is built on `device` (default CPU) directly, its
    values then initialized anyway (unspecified by skip_init's contract, so nothing depends on them). As
    in PyTorch, module_cls must take a `device` argument."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    return module_cls(*args, **kwargs)
