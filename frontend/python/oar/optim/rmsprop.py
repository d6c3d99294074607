"""RMSprop with PyTorch's update rule (optionally centered, with momentum).

    g = grad (-grad if maximize) + weight_decay * p
    v = alpha * v + (1 - alpha) * g^2                      (state "square_avg")
    centered: m = alpha * m + (1 - alpha) * g;  avg = sqrt(v - m^2) + eps   ("grad_avg")
    else:     avg = sqrt(v) + eps
    momentum > 0: buf = momentum * buf + g / avg;  p -= lr * buf          ("momentum_buffer")
    else:         p -= lr * g / avg
"""
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _count_step, _grad, _tensor_scalar_state


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
