"""Small helpers the element-wise optimizers (RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD,
and LBFGS's checks) share. They are written with plain tensor ops, so the updates run on any device and
trace into an oar.jit.TrainGraph like Adam's fused op does."""
from .._C import Tensor, is_tracing
from .._creation import full
from .._dtypes import float32


def _check(ok, what, value):
    """PyTorch's argument checks: ValueError('Invalid <what>: <value>')."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    _check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])


def _grad(p, group, decay=True):
    """The gradient the update uses: negated for maximize, plus weight_decay * p (L2) when `decay`."""
    g = p.grad
    if group["maximize"]:
        g = -g
    if decay and group["weight_decay"] != 0:
        g = g.add(p, alpha=group["weight_decay"])
    return g


def _count_step(state):
    """Advances state["step"] and returns it: a Python int eagerly; while tracing the 0-d float32 tensor
    made by _tensor_scalar_state, incremented in place so each graph run advances it (a Python number
    would be frozen into the graph)."""
    if is_tracing():
        step = state["step"]
        step.copy_(step + 1)
        return step
    state["step"] = int(state["step"]) + 1
    return state["step"]


def _add_scaled(t, x, scale):
    """t += scale * x in place; `scale` is a Python number, or a 0-d tensor while tracing."""
    if isinstance(scale, Tensor):
        t.add_(x * scale)
    else:
        t.add_(x, alpha=scale)
    return t


def _tensor_scalar_state(optimizer, keys=("step",)):
    """For _prepare_graph_state: the per-parameter scalars in `keys` become 0-d float32 tensors on the
    parameter's device (as Adam does for its step), so a traced step reads and updates them in the graph."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            if not state:
                continue
            for key in keys:
                v = state.get(key)
                if v is not None and not (isinstance(v, Tensor) and v.dtype == float32 and v.dim() == 0
                                          and v.device == p.device):
                    state[key] = full((), float(v), dtype=float32, device=p.device)
