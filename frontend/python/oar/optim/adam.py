"""Adam and AdamW with PyTorch's update rules (bias-corrected moments, optional AMSGrad).

    Adam:  g = grad + weight_decay * p        AdamW: p *= 1 - lr * weight_decay
    m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2;  (AMSGrad: v_max = max(v_max, v), used for v)
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

One fused adam_step op per device and dtype updates the parameters and moments in place.
"""
from .. import _C
from .._C import Tensor, is_tracing
from .._creation import zeros_like
from .._dtypes import float32
from ..autograd import no_grad
from .optimizer import Optimizer


class Adam(Optimizer):
    _graph_hypers = ("betas",)  # read from the hyperparameter tensor in training graphs
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
        tracing = is_tracing()
        with no_grad():
            for group in self.param_groups:
                (b1, b2), amsgrad = group["betas"], group["amsgrad"]
                params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, step_tensors = [], [], [], [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    if amsgrad and "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = zeros_like(p)
                    if tracing:
                        # A training graph: the step count is a tensor the graph increments
                        # (see _prepare_graph_state), so the bias corrections follow it.
                        step = state["step"]
                        step.copy_(step + 1)
                        step_tensors.append(step)
                    else:
                        state["step"] = int(state["step"]) + 1
                        steps.append(float(state["step"]))
                    params.append(p)
                    grads.append(p.grad)
                    exp_avgs.append(state["exp_avg"])
                    exp_avg_sqs.append(state["exp_avg_sq"])
                    if amsgrad:
                        max_exp_avg_sqs.append(state["max_exp_avg_sq"])
                if params:
                    _C.adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, step_tensors,
                                   float(group["lr"]), b1, b2, group["eps"], group["weight_decay"], amsgrad,
                                   group["maximize"], self._decoupled, self._hyper_tensors(group, params))
        return loss

    def _prepare_graph_state(self):
        super()._prepare_graph_state()
        from .._creation import full
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state.get(p)
                step = state.get("step") if state else None
                if step is not None and not (isinstance(step, Tensor) and step.dtype == float32 and step.dim() == 0
                                             and step.device == p.device):
                    state["step"] = full((), float(step), dtype=float32, device=p.device)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
