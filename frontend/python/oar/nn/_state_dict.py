"""Module helpers: hook handles and load_state_dict (PyTorch's key matching and error messages)."""
from collections import OrderedDict, namedtuple
import itertools

from .. import _C
from .._C import Tensor
from ..autograd import no_grad
from .parameter import is_lazy

class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result; prints as torch's does when every key matched."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by register_*_hook; remove() unregisters the hook (also usable as a context manager)."""
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._hooks = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def load_state_dict(module, state_dict, strict=True, assign=False):
    """Copies state_dict's tensors into module's parameters and persistent buffers (see Module.load_state_dict)."""
    if not hasattr(state_dict, "keys"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}")
    own = OrderedDict()
    for mod_name, m in module.named_modules(remove_duplicate=False):
        pre = mod_name + ("." if mod_name else "")
        for k, v in m._parameters.items():
            if v is not None:
                own[pre + k] = (m._parameters, k)
        for k, v in m._buffers.items():
            if v is not None and k not in m._non_persistent_buffers_set:
                own[pre + k] = (m._buffers, k)
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict.keys() if k not in own]
    errors = []
    loads = []
    for key, (store, k) in own.items():
        if key not in state_dict:
            continue
        src = state_dict[key]
        if not isinstance(src, Tensor):
            try:
                src = _C.tensor(src, None, None, False)
            except Exception as e:  # noqa: BLE001 - reported below with the key
                errors.append(f'While copying the parameter named "{key}", got a {type(src).__name__} '
                              f"that can't be converted to a tensor: {e}")
                continue
        dst = store[k]
        if is_lazy(src) or is_lazy(dst):
            # an UninitializedParameter of a lazy module takes the checkpoint's shape (materialized below);
            # an uninitialized one in the checkpoint has nothing to copy, and can't fill an initialized one
            if not is_lazy(src):
                loads.append((store, k, dst, src))
            elif not is_lazy(dst):
                errors.append(f'While copying the parameter named "{key}", the checkpoint holds an uninitialized '
                              f"parameter (a lazy module's, before its first forward) for an initialized one.")
            continue
        if tuple(src.shape) != tuple(dst.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape {tuple(src.shape)} from "
                          f"checkpoint, the shape in current model is {tuple(dst.shape)}.")
            continue
        loads.append((store, k, dst, src))
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    with no_grad():
        for store, k, dst, src in loads:
            if is_lazy(dst) and not assign:
                dst.materialize(tuple(src.shape))
            if assign:
                new = src.detach()
                if dst.requires_grad:
                    new.requires_grad_(True)
                store[k] = new
            else:
                dst.copy_(src)
    return IncompatibleKeys(missing, unexpected)
