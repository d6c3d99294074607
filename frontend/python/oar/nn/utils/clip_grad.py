"""nn.utils.clip_grad (torch.nn.utils.clip_grad): gradient clipping by joint norm or by value, and
get_total_norm / clip_grads_with_norm_, the two halves of clip_grad_norm_ (PyTorch 2.6).
parameters_to_vector / vector_to_parameters live in convert_parameters.py and are re-exported here."""
import math
import warnings

from ..._C import Tensor
from ..._ops import ops
from ...autograd import no_grad

from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401 - the old home

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _total_norm(grads, norm_type, error_if_nonfinite):
    """The joint norm of the tensors in `grads` (a 0-d tensor in the first one's dtype); no_grad."""
    with no_grad():
        if math.isinf(norm_type):
            norms = [ops.max(ops.abs(g)).to(dtype=grads[0].dtype) for g in grads]
            total = ops.max(ops.stack(norms))
        else:
            parts = [ops.sum(ops.abs(g) ** norm_type).to(dtype=grads[0].dtype) for g in grads]
            total = ops.sum(ops.stack(parts)) ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(float(total.item())):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def _scale(grads, max_norm, total):
    with no_grad():
        coef = ops.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(dtype=g.dtype) if g.dtype != coef.dtype else coef)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (for gradients: [p.grad for p in parameters]); 0 for none."""
    tensors = [t for t in _params(tensors) if t is not None]
    if not tensors:
        from ..._creation import tensor
        return tensor(0.0)
    return _total_norm(tensors, float(norm_type), error_if_nonfinite)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients by min(max_norm / (total_norm + 1e-6), 1), total_norm from get_total_norm."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if grads:
        _scale(grads, max_norm, total_norm)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales all gradients so their joint norm is at most max_norm; returns the total norm (a tensor).

    As PyTorch: every gradient is multiplied by min(max_norm / (norm + 1e-6), 1), computed on the
    device, so the call waits for nothing (unless error_if_nonfinite reads the norm) and records into
    a static graph (oar.jit.TrainGraph) like any other op."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        from ..._creation import tensor
        return tensor(0.0)
    total = _total_norm(grads, float(norm_type), error_if_nonfinite)
    _scale(grads, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_ (warns, as PyTorch does)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    c = float(clip_value)
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                g = p.grad
                g.copy_(ops.clamp(g, min=-c, max=c))
