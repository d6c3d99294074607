"""torch.autograd.gradcheck / gradgradcheck: compare the gradients autograd computes with
central finite differences, element by element (use float64 inputs: float32 differences are
too coarse for the default tolerances)."""
import numpy as np

from .. import _C


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, _C.Tensor)]


def _differentiable(t):
    return isinstance(t, _C.Tensor) and t.requires_grad and t.dtype.is_floating_point


def _replace(inputs, i, value):
    out = list(inputs)
    out[i] = value
    return tuple(out)


def _numerical_jacobian(func, inputs, i, eps):
    """d(outputs)/d(inputs[i]) by central differences: one [numel(out), numel(in)] array per output."""
    x = inputs[i]
    base = x.detach().cpu().numpy().astype(np.float64)
    columns = []
    for k in range(base.size):
        sides = []
        for sign in (1.0, -1.0):
            p = base.copy().reshape(-1)
            p[k] += sign * eps
            # Grad mode stays on and the input keeps requires_grad: func may differentiate
            # internally (gradgradcheck's func is itself a gradient).
            px = _tensor_like(p.reshape(base.shape), x).requires_grad_(x.requires_grad)
            sides.append([o.detach().cpu().numpy().astype(np.float64).reshape(-1)
                          for o in _outputs(func, _replace(inputs, i, px))])
        columns.append([(a - b) / (2 * eps) for a, b in zip(*sides)])
    if not columns:
        outs = _outputs(func, inputs)
        return [np.zeros((o.numel(), 0)) for o in outs]
    return [np.stack([c[j] for c in columns], axis=1) for j in range(len(columns[0]))]


def _analytical_jacobian(outputs, inputs, i):
    """d(outputs)/d(inputs[i]) row by row, one backward per output element."""
    from . import grad
    x = inputs[i]
    result = []
    for o in outputs:
        jac = np.zeros((o.numel(), x.numel()))
        if o.requires_grad:
            flat = np.zeros(o.numel())
            for r in range(o.numel()):
                flat[:] = 0
                flat[r] = 1
                g = _tensor_like(flat.reshape(tuple(o.shape)), o)
                (gx,) = grad([o], [x], [g], retain_graph=True, allow_unused=True)
                if gx is not None:
                    jac[r] = gx.detach().cpu().numpy().astype(np.float64).reshape(-1)
        result.append(jac)
    return result


def _tensor_like(array, like):
    from .. import tensor
    return tensor(array, dtype=like.dtype, device=like.device)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when every output's Jacobian w.r.t. every input that requires grad matches finite
    differences within atol + rtol * |numerical|; otherwise GradcheckError (or False when
    raise_exception is False)."""
    inputs = _as_tuple(inputs)
    if not any(_differentiable(t) for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    outputs = _outputs(func, inputs)
    for i, x in enumerate(inputs):
        if not _differentiable(x):
            continue
        numerical = _numerical_jacobian(func, inputs, i, eps)
        analytical = _analytical_jacobian(outputs, inputs, i)
        for j, (a, n) in enumerate(zip(analytical, numerical)):
            if a.shape != n.shape or not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                     f"numerical:{n}\nanalytical:{a}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradient: checks second derivatives (the backward pass must itself be
    differentiable). grad_outputs default to fixed random tensors that require grad."""
    from . import grad
    inputs = _as_tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_tensor_like(rng.standard_normal(tuple(o.shape)), o).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    diff_positions = [i for i, x in enumerate(inputs) if _differentiable(x)]

    def first_derivatives(*args):
        xs, gs = args[:n], args[n:]
        ys = _outputs(func, xs)
        wrt = [xs[i] for i in diff_positions]
        return tuple(g for g in grad(ys, wrt, list(gs), create_graph=True, allow_unused=True) if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
