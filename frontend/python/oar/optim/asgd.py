"""ASGD (averaged stochastic gradient descent) with PyTorch's update rule.

    g = grad (-grad if maximize) + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g                   (state "eta": lr before the first step)
    ax = p if mu == 1 else ax + mu * (p - ax)             (state "ax": the running average of p)
    eta = lr / (1 + lambd * lr * t)^alpha;  mu = 1 / max(1, t - t0)    (t: state "step", after counting)

Averaging starts once t passes t0; read the averaged parameters from state["ax"]. Eagerly eta and mu
are Python floats; while tracing (oar.jit.TrainGraph) they, and the step, are 0-d float32 tensors
updated in the graph, and eta follows the group's lr tensor.
"""
from .._C import Tensor, is_tracing
from .._creation import zeros_like
from .._functions import where
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _count_step, _grad, _tensor_scalar_state


def _scalar(v):
    """A state scalar as a Python float (a loaded state_dict, PyTorch's included, holds 0-d tensors)."""
    return float(v.item()) if isinstance(v, Tensor) else float(v)


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        tracing = is_tracing()
        with no_grad():
            for group in self.param_groups:
                lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["eta"] = float(group["lr"])
                        state["mu"] = 1.0
                        state["ax"] = zeros_like(p)
                    step = _count_step(state)
                    g = _grad(p, group)
                    ax = state["ax"]
                    if tracing:  # eta, mu, step: 0-d tensors the graph reads and updates
                        eta, mu = state["eta"], state["mu"]
                        p.mul_(1 - lambd * eta)
                        _add_scaled(p, g, -eta)
                        ax.copy_(where(mu == 1, p, ax + (p - ax) * mu))
                        lr = self._lr(group, p)
                        eta.copy_(lr / (1 + lambd * lr * step) ** alpha)
                        mu.copy_(1 / (step - t0).clamp_min(1))
                        continue
                    eta, mu = _scalar(state["eta"]), _scalar(state["mu"])
                    p.mul_(1 - lambd * eta)
                    p.add_(g, alpha=-eta)
                    if mu != 1:
                        ax.add_((p - ax) * mu)
                    else:
                        ax.copy_(p)
                    lr = float(group["lr"])
                    state["eta"] = lr / ((1 + lambd * lr * step) ** alpha)
                    state["mu"] = 1 / max(1, step - t0)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self, keys=("step", "eta", "mu"))
