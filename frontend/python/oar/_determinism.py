"""torch.use_deterministic_algorithms and its queries (HF's enable_full_determinism calls them).

oar's kernels are deterministic already: accumulating ops (scatter_add, index_add, embedding backward)
give each lane its own outputs instead of using atomics (kernel_primitives/README.md), so no op needs to
be refused or warned about in deterministic mode. The settings are kept and reported as torch's are.
"""
__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_state = {"mode": False, "warn_only": False}

_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode, *, warn_only=False):
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["mode"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _state["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/"default": off, 1/"warn": warn only, 2/"error": on (torch's mapping onto the two settings)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):  # True/False count as 1/0, as in torch
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["mode"]:
        return 0
    return 1 if _state["warn_only"] else 2
