"""Rprop (resilient backpropagation) with PyTorch's update rule.

Each element has its own step size (state "step_size", lr at the first step; the group's lr is not read
again) and remembers its last gradient (state "prev"):

    g = grad (-grad if maximize)
    g * prev > 0:  step_size = min(step_size * etaplus, step_size_max)
    g * prev < 0:  step_size = max(step_size * etaminus, step_size_min);  g = 0 (no move; prev becomes 0)
    otherwise:     step_size unchanged
    p -= sign(g) * step_size;  prev = g

Written with element-wise tensor ops (no data-dependent control flow), so it runs on any device and
inside oar.jit.TrainGraph.
"""
from .._creation import full_like, ones_like, zeros_like
from .._functions import where
from ..autograd import no_grad
from .optimizer import Optimizer
from ._elementwise import _check, _count_step, _tensor_scalar_state


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                etaminus, etaplus = group["etas"]
                step_min, step_max = group["step_sizes"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["prev"] = zeros_like(p)
                        state["step_size"] = full_like(p, float(group["lr"]))
                    _count_step(state)
                    g = -p.grad if group["maximize"] else p.grad
                    prev, step_size = state["prev"], state["step_size"]
                    agree = g * prev
                    flipped = agree < 0
                    # a Python number beside a tensor takes the tensor's dtype: etas stay exact in float64
                    factor = where(agree > 0, etaplus, where(flipped, etaminus, ones_like(step_size)))
                    step_size.mul_(factor).clamp_(step_min, step_max)
                    g = where(flipped, 0.0, g)
                    p.sub_(g.sign() * step_size)
                    prev.copy_(g)
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        _tensor_scalar_state(self)
