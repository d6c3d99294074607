"""Adamax (Adam with the infinity norm) with PyTorch's update rule.

    g = grad (-grad if maximize) + weight_decay * p
    m = b1 * m + (1 - b1) * g                            (state "exp_avg")
    u = max(b2 * u, |g| + eps)                           (state "exp_inf")
    p -= lr / (1 - b1^t) * m / u
"""
from .._creation import zeros_like
from ..autograd import no_grad
from .._functions import maximum
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _check_betas, _count_step, _grad, _tensor_scalar_state


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_inf"] = zeros_like(p)
                    step = _count_step(state)
                    g = _grad(p, group)
                    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                    exp_avg.mul_(b1).add_(g, alpha=1 - b1)
                    exp_inf.copy_(maximum(exp_inf.mul_(b2), g.abs().add_(group["eps"])))
                    clr = self._lr(group, p) / (1 - b1 ** step)
                    _add_scaled(p, exp_avg / exp_inf, -clr)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
