"""SGD with momentum, dampening, Nesterov and (coupled) weight decay: PyTorch's update rule.

    g = grad (+ weight_decay * p);  buf = g on the first step, else momentum * buf + (1 - dampening) * g
    g = g + momentum * buf if nesterov else buf;  p -= lr * g
"""
from ..autograd import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
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
                momentum, dampening = group["momentum"], group["dampening"]
                wd, nesterov = group["weight_decay"], group["nesterov"]
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if group["maximize"]:
                        g = -g
                    if wd != 0:
                        g = g + p * wd
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = g.detach().clone()
                            state["momentum_buffer"] = buf
                        else:
                            buf.copy_(buf * momentum + g * (1 - dampening) if dampening else buf * momentum + g)
                        g = g + buf * momentum if nesterov else buf
                    p.copy_(p - g * self._lr(group, p))
        return loss
