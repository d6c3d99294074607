"""Adadelta with PyTorch's update rule.

    g = grad (-grad if maximize) + weight_decay * p
    v = rho * v + (1 - rho) * g^2                        (state "square_avg")
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta^2                    (state "acc_delta")
    p -= lr * delta
"""
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _count_step, _grad, _tensor_scalar_state


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= rho <= 1.0, "rho value", rho)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                rho, eps = group["rho"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["square_avg"] = zeros_like(p)
                        state["acc_delta"] = zeros_like(p)
                    _count_step(state)
                    g = _grad(p, group)
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    square_avg.mul_(rho).add_(g * g, alpha=1 - rho)
                    std = square_avg.add(eps).sqrt()
                    delta = acc_delta.add(eps).sqrt().div_(std).mul_(g)
                    acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                    _add_scaled(p, delta, -self._lr(group, p))
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
