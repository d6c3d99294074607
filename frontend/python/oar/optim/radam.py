"""RAdam (rectified Adam) with PyTorch's update rule.

    g = grad (-grad if maximize);  weight decay: g += wd * p, or decoupled: p *= 1 - lr * wd
    m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2   (state "exp_avg", "exp_avg_sq")
    rho_inf = 2 / (1 - b2) - 1;  rho_t = rho_inf - 2 t b2^t / (1 - b2^t)
    rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                p -= lr * m / (1 - b1^t) * r * sqrt(1 - b2^t) / (sqrt(v) + eps)
    else:       p -= lr * m / (1 - b1^t)

While tracing, rho_t is a tensor: both branches are computed and one is selected arithmetically, so
the graph does not depend on the step count.
"""
import math

from .._C import Tensor
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _check_betas, _count_step, _grad, _tensor_scalar_state


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                wd = group["weight_decay"]
                rho_inf = 2 / (1 - b2) - 1
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    step = _count_step(state)
                    lr = self._lr(group, p)
                    decoupled = group["decoupled_weight_decay"]
                    g = _grad(p, group, decay=not decoupled)
                    if decoupled and wd != 0:
                        p.mul_(1 - lr * wd)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.mul_(b1).add_(g, alpha=1 - b1)
                    exp_avg_sq.mul_(b2).add_(g * g, alpha=1 - b2)
                    bias_correction1 = 1 - b1 ** step
                    bias_correction2 = 1 - b2 ** step
                    rho_t = rho_inf - 2 * step * b2 ** step / bias_correction2
                    m_hat = exp_avg / bias_correction1
                    rect_sq = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    if isinstance(rho_t, Tensor):  # traced: both branches, gated by rho_t > 5
                        gate = (rho_t > 5).to(dtype=rho_t.dtype)
                        scale = rect_sq.clamp_min(0).sqrt() * bias_correction2 ** 0.5 * gate
                        factor = scale / exp_avg_sq.sqrt().add_(group["eps"]) + (1 - gate)
                        _add_scaled(p, m_hat * factor, -lr)
                    elif rho_t > 5.0:
                        adaptive = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(group["eps"])
                        _add_scaled(p, m_hat * adaptive, -lr * math.sqrt(rect_sq))
                    else:
                        _add_scaled(p, m_hat, -lr)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
