"""DataParallel / data_parallel with PyTorch's signatures, for a single device.

Without an accelerator (no cuda device) the wrapper just calls the module, as PyTorch's does on a machine
without GPUs (device_ids becomes []). With one, device_ids (default: device 0) names one cuda device: the
module is moved there at construction, its parameters must stay there, and the inputs' tensors are moved
there before the call, whose output is returned as is (PyTorch's single-device path). More than one device
id raises NotImplementedError: oar has one device per process, and multi-device data parallelism means one
process per device (DistributedDataParallel).
"""
import numbers
from itertools import chain

from ... import _C
from ... import cuda
from ..module import Module

__all__ = ["DataParallel", "data_parallel"]

_MULTI = ("{}: more than one device id ({}) is not supported: oar runs one device per process. For several "
          "devices run one process per device with torch.nn.parallel.DistributedDataParallel (launched by "
          "torchrun); with one device, pass device_ids=None or a single id.")


def _device_index(d):
    if isinstance(d, bool):
        raise TypeError(f"device id must be an int, a device string or a device, got {d!r}")
    if isinstance(d, numbers.Integral):
        return int(d)
    if isinstance(d, str):
        kind, _, index = d.partition(":")
        if kind and (not index or index.isdigit()):
            return int(index or 0)
    elif isinstance(d, _C.device):
        return int(d.index or 0)
    raise TypeError(f"device id must be an int, a device string or a device, got {d!r}")


def _device_ids(device_ids, what):
    if device_ids is None:
        return None
    ids = [_device_index(d) for d in device_ids]
    if len(ids) > 1:
        raise NotImplementedError(_MULTI.format(what, ids))
    return ids


def _device_type():
    """The accelerator PyTorch's DataParallel would use ('cuda'), or None (plain call)."""
    return "cuda" if cuda.is_available() else None


def _to(obj, device):
    """obj with its tensors (inside tuples, lists and dicts) moved to device: PyTorch's scatter to one device."""
    if isinstance(obj, _C.Tensor):
        return obj if obj.device == device else obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(o, device) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


def _check_on(module, device):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != device:
            raise RuntimeError(f"module must have its parameters and buffers on device {device} (device_ids[0]) "
                               f"but found one of them on device: {t.device}")


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0): calls module on oar's one device.

    `.module` is the wrapped module, so state_dict keys start with 'module.' as in PyTorch."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be an nn.Module, got {type(module).__name__}")
        ids = _device_ids(device_ids, "DataParallel")
        if output_device is not None:
            output_device = _device_index(output_device)
        if getattr(module, "has_uninitialized_params", None) and module.has_uninitialized_params():
            module._replicate_for_data_parallel()
        self.module = module
        self.dim = dim
        device_type = _device_type()
        if device_type is None:
            self.device_ids = []
            self.output_device = output_device
            self.src_device_obj = None
            return
        if not ids:
            ids = [0]
        self.device_ids = ids
        self.output_device = ids[0] if output_device is None else output_device
        self.src_device_obj = _C.to_device(f"{device_type}:{ids[0]}")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        inputs, kwargs = _to(inputs, self.src_device_obj), _to(kwargs, self.src_device_obj)
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """module(*inputs, **module_kwargs) on one device (see DataParallel); inputs may be one tensor or a tuple."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    module_kwargs = module_kwargs or {}
    ids = _device_ids(device_ids, "data_parallel")
    device_type = _device_type()
    if device_type is None:
        return module(*inputs, **module_kwargs)
    device = _C.to_device(f"{device_type}:{ids[0] if ids else 0}")
    _check_on(module, device)
    return module(*_to(inputs, device), **_to(module_kwargs, device))
