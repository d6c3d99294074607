"""torch.autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp written with
autograd.grad (reverse mode; jvp uses the double-backward trick)."""
from .. import _C


def _tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs, create_graph):
    # Fresh leaves (or graph-connected aliases when create_graph) so grads are w.r.t. these inputs only.
    return tuple(x if create_graph and x.requires_grad else x.detach().requires_grad_() for x in inputs)


def _grad(outputs, inputs, grad_outputs, create_graph):
    from . import grad
    gs = grad(list(outputs), list(inputs), list(grad_outputs), retain_graph=True, create_graph=create_graph,
              allow_unused=True)
    return tuple(g if g is not None else _zeros_like(x) for g, x in zip(gs, inputs))


def _zeros_like(x):
    from .. import zeros_like
    return zeros_like(x)


def _ones_like(x):
    from .. import ones_like
    return ones_like(x)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, multi = _tuple(inputs)
    with _C_grad(True):
        xs = _prepare(inputs, create_graph)
        out, out_multi = _tuple(func(*xs))
        if v is None:
            if any(o.numel() != 1 for o in out):
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = tuple(_ones_like(o) for o in out)
        else:
            vs, _ = _tuple(v)
        g = _grad(out, xs, vs, create_graph)
    out = tuple(o if create_graph else o.detach() for o in out)
    return (out if out_multi else out[0]), (g if multi else g[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by differentiating the vjp w.r.t. its cotangent."""
    inputs, multi = _tuple(inputs)
    with _C_grad(True):
        xs = _prepare(inputs, True)
        out, out_multi = _tuple(func(*xs))
        us = tuple(_zeros_like(o).requires_grad_() for o in out)
        g = _grad(out, xs, us, True)
        if v is None:
            if any(x.numel() != 1 for x in inputs):
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs = tuple(_ones_like(x) for x in inputs)
        else:
            vs, _ = _tuple(v)
        jv = _grad(g, us, vs, create_graph)
    out = tuple(o if create_graph else o.detach() for o in out)
    return (out if out_multi else out[0]), (jv if out_multi else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """J[i][j] = d out_i / d in_j, shaped out_i.shape + in_j.shape (nested like PyTorch's)."""
    from .. import stack
    inputs, multi = _tuple(inputs)
    with _C_grad(True):
        xs = _prepare(inputs, create_graph)
        out, out_multi = _tuple(func(*xs))
        rows = []
        for o in out:
            flat = o.reshape(-1)
            per_input = [[] for _ in xs]
            for k in range(flat.numel()):
                gs = _grad([flat[k]], xs, [_ones_like(flat[k])], create_graph)
                for j, g in enumerate(gs):
                    per_input[j].append(g)
            row = []
            for j, x in enumerate(xs):
                if per_input[j]:
                    jac = stack(per_input[j]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    from .. import zeros
                    jac = zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
                row.append(jac if create_graph else jac.detach())
            rows.append(tuple(row) if multi else row[0])
    return tuple(rows) if out_multi else rows[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Jacobian of the gradient of a scalar function."""
    inputs, multi = _tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, _C.Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        g = _grad([out], xs, [_ones_like(out)], True)
        return g if multi else g[0]

    return jacobian(gradient, inputs if multi else inputs[0], create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    inputs, multi = _tuple(inputs)
    with _C_grad(True):
        xs = _prepare(inputs, True)
        out = func(*xs)
        g = _grad([out], xs, [_ones_like(out)], True)
        vs, _ = _tuple(v)
        r = _grad(g, xs, vs, create_graph)
    out = out if create_graph else out.detach()
    return out, (r if multi else r[0])


hvp = vhp  # the Hessian is symmetric


class _C_grad:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
