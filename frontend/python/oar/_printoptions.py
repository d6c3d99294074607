"""oar.set_printoptions / get_printoptions (torch's): how tensors print, through _tensor_str, which also
becomes Tensor's repr (and so its str) here. NumPy's own printing is untouched."""
import math

from ._C import Tensor
from . import _tensor_str
from ._tensor_str import PRINT_OPTS


_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: a profile ('default', 'short', 'full') first, then the options given; as in
    PyTorch, sci_mode is always set (None: scientific notation when the values call for it)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                       ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, key, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options: precision, threshold, edgeitems, linewidth, sci_mode."""
    return PRINT_OPTS.as_dict()


Tensor.__repr__ = _tensor_str.tensor_str

__all__ = ["set_printoptions", "get_printoptions"]
