"""oar.save / oar.load: state dicts in oar's checkpoint format.

The format (docs/serialization.md) is shared with the C++ API (oar::save /
oar::load): versioned, checksummed, written atomically. A file that is
truncated, foreign, from a newer format version or corrupted raises
oar.IOError (a RuntimeError) naming the file and the problem.
"""
import collections
import os

from . import _C


def save(obj, f):
    """Saves a dict of name -> Tensor (e.g. model.state_dict()) to the path `f`."""
    if not isinstance(obj, dict):
        raise TypeError(f"oar.save stores a dict of str -> Tensor (a state_dict), got {type(obj).__name__}")
    items = []
    for k, v in obj.items():
        if not isinstance(k, str):
            raise TypeError(f"oar.save: keys must be str, got {type(k).__name__}")
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"oar.save: value of '{k}' is a {type(v).__name__}, not a Tensor")
        items.append((k, v))
    if not hasattr(_C, "save_state_dict"):
        raise RuntimeError("this oar build has no serialization support (built without the C++ frontend)")
    _C.save_state_dict(items, os.fspath(f))


def load(f, map_location=None):
    """Loads a state dict saved by oar.save (or oar::save in C++) as an OrderedDict."""
    if not hasattr(_C, "load_state_dict"):
        raise RuntimeError("this oar build has no serialization support (built without the C++ frontend)")
    device = None if map_location is None else str(map_location) if not isinstance(map_location, str) else map_location
    return collections.OrderedDict(_C.load_state_dict(os.fspath(f), device))


# ---- copy.deepcopy and pickle of tensors (models are deep-copied for EMA,
# checkpoint averaging, DataLoader workers): values go through NumPy on the
# CPU, bfloat16 through float32 (exact), and dtype/device/requires_grad return.
def _tensor_from_state(values, dtype_name, device, requires_grad):
    from ._creation import from_numpy
    t = from_numpy(values.copy()).to(getattr(_C.dtype, dtype_name)).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_state(t):
    host = t.detach().to("cpu")
    name = str(t.dtype).replace("oar.", "")
    values = (host.to(_C.dtype.float32) if name == "bfloat16" else host).contiguous().numpy().copy()
    return values, name, str(t.device), t.requires_grad


def _tensor_reduce_ex(self, protocol):
    if not self.is_leaf:
        raise RuntimeError("only leaf tensors (not results of recorded ops) can be pickled or deep-copied; "
                           "use .detach() first")
    return _tensor_from_state, _tensor_state(self)


def _tensor_deepcopy(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError("only leaf tensors (not results of recorded ops) support deepcopy; use .detach() first")
    out = self.detach().clone()
    if self.requires_grad:
        out.requires_grad_(True)
    memo[id(self)] = out
    if self.grad is not None:
        out.grad = _tensor_deepcopy(self.grad, memo)
    return out


_C.Tensor.__reduce_ex__ = _tensor_reduce_ex
_C.Tensor.__deepcopy__ = _tensor_deepcopy
