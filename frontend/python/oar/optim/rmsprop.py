"""RMSprop with PyTorch's update rule (optionally centered, with momentum).

    g = grad (-grad if maximize) + weight_decay * p
    v = alpha * v + (1 - alpha) * g^2                      (state "square_avg")
    centered: m = alpha * m + (1 - alpha) * g;  avg = sqrt(v - m^2) + eps   ("grad_avg")
    else:     avg = sqrt(v) + eps
    momentum > 0: buf = momentum * buf + g / avg;  p -= lr * buf          ("momentum_buffer")
    else:         p -= lr * g / avg

This file also holds the small helpers the element-wise optimizers here (RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam) share: they are written with plain tensor ops, so they run on any device and
trace into an oar.jit.TrainGraph like Adam's fused op does.
"""
from .._C import Tensor, is_tracing
from .._creation import full, zeros_like
from .._dtypes import float32
from ..autograd import no_grad
from .optimizer import Optimizer


# ---- shared by the element-wise optimizers ----

def _check(ok, what, value):
    """PyTorch's argument checks: ValueError('Invalid <what>: <value>')."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    _check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])


def _grad(p, group, decay=True):
    """The gradient the update uses: negated for maximize, plus weight_decay * p (L2) when `decay`."""
    g = p.grad
    if group["maximize"]:
        g = -g
    if decay and group["weight_decay"] != 0:
        g = g.add(p, alpha=group["weight_decay"])
    return g


def _count_step(state):
    """Advances state["step"] and returns it: a Python int eagerly; while tracing the 0-d float32 tensor
    made by _tensor_scalar_state, incremented in place so each graph run advances it (a Python number
    would be frozen into the graph)."""
    if is_tracing():
        step = state["step"]
        step.copy_(step + 1)
        return step
    state["step"] = int(state["step"]) + 1
    return state["step"]


def _add_scaled(t, x, scale):
    """t += scale * x in place; `scale` is a Python number, or a 0-d tensor while tracing."""
    if isinstance(scale, Tensor):
        t.add_(x * scale)
    else:
        t.add_(x, alpha=scale)
    return t


def _tensor_scalar_state(optimizer, keys=("step",)):
    """For _prepare_graph_state: the per-parameter scalars in `keys` become 0-d float32 tensors on the
    parameter's device (as Adam does for its step), so a traced step reads and updates them in the graph."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            if not state:
                continue
            for key in keys:
                v = state.get(key)
                if v is not None and not (isinstance(v, Tensor) and v.dtype == float32 and v.dim() == 0
                                          and v.device == p.device):
                    state[key] = full((), float(v), dtype=float32, device=p.device)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= momentum, "momentum value", momentum)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= alpha, "alpha value", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["square_avg"] = zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = zeros_like(p)
                        if group["centered"]:
                            state["grad_avg"] = zeros_like(p)
                    _count_step(state)
                    g = _grad(p, group)
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(g * g, alpha=1 - alpha)
                    if group["centered"]:
                        grad_avg = state["grad_avg"]
                        grad_avg.mul_(alpha).add_(g, alpha=1 - alpha)
                        avg = (square_avg - grad_avg * grad_avg).sqrt().add_(eps)
                    else:
                        avg = square_avg.sqrt().add_(eps)
                    lr = self._lr(group, p)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(g / avg)
                        _add_scaled(p, buf, -lr)
                    else:
                        _add_scaled(p, g / avg, -lr)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
