"""Adam and AdamW with PyTorch's update rules (bias-corrected moments, optional AMSGrad).

    Adam:  g = grad + weight_decay * p        AdamW: p *= 1 - lr * weight_decay
    m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2;  (AMSGrad: v_max = max(v_max, v), used for v)
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
"""
import math

from .._C import Tensor, is_tracing
from .._creation import zeros_like
from .._dtypes import float32
from ..autograd import no_grad
from .._ops import ops
from .optimizer import Optimizer


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                (b1, b2), eps = group["betas"], group["eps"]
                wd, amsgrad = group["weight_decay"], group["amsgrad"]
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if group["maximize"]:
                        g = -g
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    if amsgrad and "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = zeros_like(p)
                    lr = self._lr(group, p)
                    if is_tracing():
                        # A training graph: the step count is a tensor the graph increments
                        # (see _prepare_graph_state), so the bias corrections follow it.
                        step = state["step"]
                        step.copy_(step + 1)
                        bias1, bias2 = 1 - b1 ** step, ops.sqrt(1 - b2 ** step)
                    else:
                        state["step"] = step = int(state["step"]) + 1
                        bias1, bias2 = 1 - b1 ** step, math.sqrt(1 - b2 ** step)
                    if wd != 0:
                        if self._decoupled:
                            p.copy_(p * (1 - lr * wd))
                        else:
                            g = g + p * wd
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.copy_(m * b1 + g * (1 - b1))
                    v.copy_(v * b2 + g * g * (1 - b2))
                    if amsgrad:
                        vmax = state["max_exp_avg_sq"]
                        vmax.copy_(ops.maximum(vmax, v))
                        v = vmax
                    step_size = lr / bias1
                    denom = ops.sqrt(v) / bias2 + eps
                    p.copy_(p - m / denom * step_size)
        return loss


    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        from .._creation import full
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state.get(p)
                if state and not isinstance(state["step"], Tensor):
                    state["step"] = full((), float(state["step"]), dtype=float32, device=p.device)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
