"""Adagrad with PyTorch's update rule.

    g = grad (-grad if maximize) + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g^2                              (state "sum", starting at initial_accumulator_value)
    p -= clr * g / (sqrt(s) + eps)

As in PyTorch the state ("step", "sum") is created when the optimizer is, so a state_dict taken before
the first step already holds it.
"""
from .._creation import full_like
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _add_scaled, _check, _count_step, _grad, _tensor_scalar_state


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= lr_decay, "lr_decay value", lr_decay)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= initial_accumulator_value, "initial_accumulator_value value", initial_accumulator_value)
        _check(0.0 <= eps, "epsilon value", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p)

    def _init_state(self, group, p):
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["sum"] = full_like(p, group["initial_accumulator_value"])
        return state

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self._init_state(group, p)  # a group added after construction starts here
                    step = _count_step(state)
                    g = _grad(p, group)
                    clr = self._lr(group, p)
                    if group["lr_decay"] != 0:
                        clr = clr / ((step - 1) * group["lr_decay"] + 1)
                    s = state["sum"]
                    s.add_(g * g)
                    _add_scaled(p, g / s.sqrt().add_(group["eps"]), -clr)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
