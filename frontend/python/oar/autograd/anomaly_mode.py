"""torch.autograd.detect_anomaly / set_detect_anomaly and the flags behind them.

PyTorch's anomaly mode records each node's forward traceback and checks every backward node's outputs for
nan. oar's engine runs in C++ without those per-node checks; here, while anomaly mode is on with check_nan,
Tensor.backward / oar.autograd.backward / oar.autograd.grad check the gradients they produce for the leaves
(or the requested inputs) after the pass and raise a RuntimeError naming the node that fed the nan to the
leaf, like torch's "Function 'XBackward0' returned nan values". A nan that a later op turns into a number
(e.g. `where`) goes unreported, and the forward traceback is not recorded."""
import threading
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

_state = threading.local()


def is_anomaly_enabled():
    return getattr(_state, "enabled", False)


def is_anomaly_check_nan_enabled():
    return getattr(_state, "check_nan", True)


def set_anomaly_enabled(enabled, check_nan=True):
    _state.enabled = bool(enabled)
    _state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager: anomaly detection on inside the block (see the module's docstring for what oar checks)."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off; as a context manager, restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def _checking():
    return is_anomaly_enabled() and is_anomaly_check_nan_enabled()


def _has_nan(t):
    return t is not None and t.is_floating_point() and bool(t.isnan().any())


def _leaves(roots):
    """[(leaf tensor, name of the node that feeds it)] reachable from the roots' grad_fns."""
    found, seen = [], set()
    stack = [r.grad_fn for r in roots if getattr(r, "grad_fn", None) is not None]
    while stack:
        node = stack.pop()
        if hash(node) in seen:
            continue
        seen.add(hash(node))
        for child, _ in node.next_functions:
            if child is None:
                continue
            var = getattr(child, "variable", None)
            if var is not None:
                if hash(child) not in seen:
                    seen.add(hash(child))
                    found.append((var, node.name()))
            else:
                stack.append(child)
    return found


def _nan_error(what):
    return RuntimeError(f"{what} returned nan values (anomaly detection: oar checks the gradients a backward pass "
                        "produces for its leaves, not each node's output)")


def _before_backward(roots, inputs=None):
    """The leaves to watch and whether each one's .grad already held nan (then it is not reported again)."""
    if inputs is not None:
        watched = [(t, None) for t in ([inputs] if hasattr(inputs, "grad_fn") else inputs)]
    else:
        watched = _leaves(roots)
    return [(t, node, _has_nan(t.grad)) for t, node in watched]


def _after_backward(watched):
    for t, node, had_nan in watched:
        if not had_nan and _has_nan(t.grad):
            who = f"Function '{node}'" if node else "The backward pass"
            raise _nan_error(f"{who} (into the gradient of a leaf of shape {list(t.shape)})")


def _check_grads(grads, inputs):
    for i, g in enumerate(grads):
        if _has_nan(g):
            raise _nan_error(f"The backward pass (the gradient of input {i}, shape {list(inputs[i].shape)})")
