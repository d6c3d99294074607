"""Module helpers: hook handles, and state_dict saving and loading in PyTorch's protocol (_save_to_state_dict,
_load_from_state_dict per module, state_dict._metadata, state-dict hooks; its key matching and error messages)."""
from collections import OrderedDict, namedtuple
import itertools

from .. import _C
from .._C import Tensor
from ..autograd import no_grad
from .parameter import is_lazy

EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # the key of get_extra_state()'s value, after the module's prefix

class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result (torch.nn.modules.module._IncompatibleKeys, whose name it prints with); prints
    as torch's does when every key matched."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


IncompatibleKeys = _IncompatibleKeys


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


def save_to_state_dict(module, destination, prefix, keep_vars):
    """Module._save_to_state_dict: the module's own parameters and persistent buffers (not its children's);
    an UninitializedParameter (a lazy module's) is saved as it is, having no data to detach."""
    for store in (module._parameters, module._buffers):
        for name, t in store.items():
            if t is not None and (store is module._parameters or name not in module._non_persistent_buffers_set):
                destination[prefix + name] = t if keep_vars or is_lazy(t) else t.detach()


def _checked_source(key, src, dst, errors):
    """The checkpoint's tensor for `dst`, or None with the reason in errors (PyTorch's messages)."""
    if not isinstance(src, Tensor):
        try:
            src = _C.tensor(src, None, None, False)
        except Exception as e:  # noqa: BLE001 - reported with the key
            errors.append(f'While copying the parameter named "{key}", got a {type(src).__name__} '
                          f"that can't be converted to a tensor: {e}")
            return None
    if is_lazy(src) or is_lazy(dst):
        # an UninitializedParameter of a lazy module takes the checkpoint's shape (materialized on copy);
        # an uninitialized one in the checkpoint has nothing to copy, and can't fill an initialized one
        if is_lazy(src) and not is_lazy(dst):
            errors.append(f'While copying the parameter named "{key}", the checkpoint holds an uninitialized '
                          f"parameter (a lazy module's, before its first forward) for an initialized one.")
        return None if is_lazy(src) else src
    if src.dim() == 1 and dst.dim() == 0:
        src = src[0]  # checkpoints from before 0-dim tensors, as PyTorch accepts
    if tuple(src.shape) != tuple(dst.shape):
        errors.append(f"size mismatch for {key}: copying a param with shape {tuple(src.shape)} from "
                      f"checkpoint, the shape in current model is {tuple(dst.shape)}.")
        return None
    return src


def load_from_state_dict(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                         error_msgs):
    """Module._load_from_state_dict: fills the module's own parameters and persistent buffers from the
    keys under `prefix`, after its load_state_dict pre-hooks; records missing and unexpected keys and
    errors in the lists (the protocol modules override and HF's loader calls module by module)."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    assign = local_metadata.get("assign_to_params_buffers", False)
    local = [(module._parameters, k) for k, v in module._parameters.items() if v is not None]
    local += [(module._buffers, k) for k, v in module._buffers.items()
              if v is not None and k not in module._non_persistent_buffers_set]
    for store, name in local:
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        dst = store[name]
        src = _checked_source(key, state_dict[key], dst, error_msgs)
        if src is None:
            continue
        with no_grad():
            if assign:
                new = src.detach()
                if dst.requires_grad:
                    new.requires_grad_(True)
                store[name] = new
            else:
                if is_lazy(dst):
                    dst.materialize(tuple(src.shape))
                dst.copy_(src)
    extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if module._has_extra_state("set_extra_state"):
        if extra_key in state_dict:
            module.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected_keys.append(extra_key)
    if strict:
        names = {name for _, name in local}
        for key in state_dict.keys():
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix):].split(".", 1)[0]
                if input_name not in module._modules and input_name not in names:
                    unexpected_keys.append(key)


def load_state_dict(module, state_dict, strict=True, assign=False):
    """Module.load_state_dict: calls _load_from_state_dict on every module with the keys under its prefix
    (and its metadata, state_dict._metadata), then its load_state_dict post-hooks, as PyTorch does."""
    if not hasattr(state_dict, "keys"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}")
    missing, unexpected, errors = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    def load(m, local_state_dict, prefix=""):
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata = dict(local_metadata, assign_to_params_buffers=True)  # how PyTorch 2 passes it on
        m._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in m._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}, child_prefix)
        incompatible = IncompatibleKeys(missing, unexpected)
        for hook in m._load_state_dict_post_hooks.values():
            if hook(m, incompatible) is not None:
                raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                   "expected to return new values, if incompatible_keys need to be modified, "
                                   "it should be done inplace.")

    load(module, state_dict)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    return IncompatibleKeys(missing, unexpected)
