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
