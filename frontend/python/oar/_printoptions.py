"""oar.set_printoptions / get_printoptions (torch's): a tensor's repr prints through NumPy, so these
options apply inside the repr only, without changing how NumPy arrays print."""
import math

from ._C import Tensor


_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}
_print_options = {}  # empty: NumPy's own options, as before set_printoptions


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: how tensors print (their repr), without changing how NumPy arrays print."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _print_options.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                       ("linewidth", linewidth)):
        if value is not None:
            _print_options[key] = value
    if sci_mode is not None:
        _print_options["sci_mode"] = bool(sci_mode)


def get_printoptions():
    import numpy as np
    current = np.get_printoptions()
    opts = {k: _print_options.get(k, current[k]) for k in ("precision", "threshold", "edgeitems", "linewidth")}
    opts["sci_mode"] = _print_options.get("sci_mode")
    return opts


_c_repr = Tensor.__repr__


def _repr(self):
    if not _print_options:
        return _c_repr(self)
    import numpy as np
    opts = {k: v for k, v in _print_options.items() if k != "sci_mode"}
    if "threshold" in opts and opts["threshold"] == math.inf:
        opts["threshold"] = 2 ** 62
    if "sci_mode" in _print_options:
        mode = _print_options["sci_mode"]
        opts["suppress"] = not mode
        if mode:  # NumPy picks scientific notation itself unless told: force it through the formatter
            precision = opts.get("precision", np.get_printoptions()["precision"])
            opts["formatter"] = {"float_kind": lambda v: np.format_float_scientific(v, precision=precision)}
    with np.printoptions(**opts):
        return _c_repr(self)


Tensor.__repr__ = _repr

__all__ = ["set_printoptions", "get_printoptions"]
