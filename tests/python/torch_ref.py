"""PyTorch as a test reference, never a requirement: tests that compare with PyTorch use `import_torch()`
(or the `torch` fixture of a module that defines one from it), which skips the test, saying why, when PyTorch
can't be imported.

Where this Python has no torch, Debian's python3-torch (installed by scripts/install_deps.sh) is tried: it
is built for the system Python 3.11 and NumPy 1.x, so its NumPy bridge may not match this NumPy. Data crosses
between the two frameworks as lists (`to_torch`, `from_torch`), never through NumPy buffers."""
import os
import sys
import warnings

import numpy as np
import pytest

_DEBIAN = "/usr/lib/python3/dist-packages"
_torch = None


def import_torch():
    global _torch
    if _torch is not None:
        return _torch
    try:
        import torch
        _torch = torch
        return torch
    except ImportError:
        pass
    if not os.path.isdir(os.path.join(_DEBIAN, "torch")):
        pytest.skip("PyTorch is not installed (scripts/install_deps.sh installs Debian's python3-torch)")
    sys.path.append(_DEBIAN)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
            torch.tensor([0.0])  # its one-time warning about a NumPy it wasn't built for
    except Exception as e:  # built for another Python or NumPy ABI
        pytest.skip(f"PyTorch can't be imported: {e}")
    finally:
        sys.path.remove(_DEBIAN)
    _torch = torch
    return torch


def to_torch(a, dtype=None):
    """A NumPy array (or an oar tensor) as a torch tensor, through a list."""
    torch = import_torch()
    if hasattr(a, "detach") and hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = a.detach().cpu().numpy()
    a = np.asarray(a)
    return torch.tensor(a.tolist(), dtype=dtype or {np.float32: torch.float32, np.float64: torch.float64,
                                                     np.int64: torch.int64, np.bool_: torch.bool}.get(a.dtype.type))


def from_torch(t):
    """A torch tensor as a NumPy array, through a list."""
    return np.array(t.detach().cpu().tolist(), dtype={"torch.float32": np.float32, "torch.float64": np.float64,
                                                       "torch.int64": np.int64, "torch.bool": np.bool_}
                    .get(str(t.dtype), None))
