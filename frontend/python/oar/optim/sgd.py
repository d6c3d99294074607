"""SGD with momentum, dampening, Nesterov and (coupled) weight decay: PyTorch's update rule.

    g = grad (+ weight_decay * p);  buf = g on the first step, else momentum * buf + (1 - dampening) * g
    g = g + momentum * buf if nesterov else buf;  p -= lr * g

One fused sgd_step op per device and dtype updates the parameters and buffers in place.
"""
from .. import _C
from .._creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    _graph_hypers = ("momentum",)  # read from the hyperparameter tensor in training graphs
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                momentum = group["momentum"]
                params, grads, buffers, fresh = [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    params.append(p)
                    grads.append(p.grad)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        fresh.append(buf is None)  # this step sets it to the gradient
                        if buf is None:
                            state["momentum_buffer"] = buf = zeros_like(p)
                        buffers.append(buf)
                if params:
                    _C.sgd_update(params, grads, buffers, fresh, float(group["lr"]), momentum, group["dampening"],
                                  group["weight_decay"], group["nesterov"], group["maximize"],
                                  self._hyper_tensors(group, params))
        return loss
