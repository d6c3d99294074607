"""NAdam (Adam with Nesterov momentum) with PyTorch's update rule.

    g = grad (-grad if maximize);  weight decay: g += wd * p, or decoupled: p *= 1 - lr * wd
    mu_t = b1 * (1 - 0.5 * 0.96^(t * momentum_decay))        (and mu_{t+1} likewise)
    mu_prod = mu_1 * ... * mu_t                                 (state "mu_product")
    m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2   (state "exp_avg", "exp_avg_sq")
    denom = sqrt(v / (1 - b2^t)) + eps
    p -= lr * (1 - mu_t) / (1 - mu_prod) * g / denom + lr * mu_{t+1} / (1 - mu_prod * mu_{t+1}) * m / denom

mu_product is a Python float eagerly (a 0-d tensor while tracing, or as loaded from a PyTorch
checkpoint). PyTorch before 2.0 multiplied mu_t into mu_prod * mu_{t+1} a second time; this follows
the fixed rule.
"""
from .._C import is_tracing
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _check_betas, _count_step, _grad, _tensor_scalar_state


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= momentum_decay, "momentum_decay value", momentum_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        tracing = is_tracing()
        with no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                wd, decay = group["weight_decay"], group["momentum_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["mu_product"] = 1.0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    step = _count_step(state)
                    lr = self._lr(group, p)
                    decoupled = group["decoupled_weight_decay"]
                    g = _grad(p, group, decay=not decoupled)
                    if decoupled and wd != 0:
                        p.mul_(1 - lr * wd)
                    mu = b1 * (1.0 - 0.5 * 0.96 ** (step * decay))
                    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
                    if tracing:  # the graph updates the tensor in place
                        mu_product = state["mu_product"]
                        mu_product.mul_(mu)
                    else:
                        state["mu_product"] = mu_product = float(state["mu_product"]) * mu
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.mul_(b1).add_(g, alpha=1 - b1)
                    exp_avg_sq.mul_(b2).add_(g * g, alpha=1 - b2)
                    denom = exp_avg_sq.div(1 - b2 ** step).sqrt().add_(group["eps"])
                    _add_scaled(p, g / denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                    _add_scaled(p, exp_avg / denom, -lr * mu_next / (1.0 - mu_product * mu_next))
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self, ("step", "mu_product"))
