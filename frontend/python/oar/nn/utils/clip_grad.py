"""Gradient clipping and flat parameter vectors (PyTorch's nn.utils names)."""
import math

from ..._C import Tensor
from ..._ops import ops
from ...autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales all gradients so their joint norm is at most max_norm; returns the total norm (a tensor).

    As PyTorch: every gradient is multiplied by min(max_norm / (norm + 1e-6), 1), computed on the
    device, so the call waits for nothing (unless error_if_nonfinite reads the norm) and records into
    a static graph (oar.jit.TrainGraph) like any other op."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        from ..._creation import tensor
        return tensor(0.0)
    norm_type = float(norm_type)
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
        coef = ops.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(dtype=g.dtype) if g.dtype != coef.dtype else coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    c = float(clip_value)
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                g = p.grad
                g.copy_(ops.clamp(g, min=-c, max=c))


def parameters_to_vector(parameters):
    return ops.concat([p.reshape(-1) for p in parameters], dim=0)


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError("expected vec to be a 1-D Tensor")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(*p.shape))
            offset += n
