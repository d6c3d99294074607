"""oar.autograd: grad(), backward(), the grad-mode context managers, custom functions
(Function, in function.py) and numerical gradient checks (gradcheck.py)."""
import functools
import threading

from .. import _C
from . import anomaly_mode as _anomaly
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .variable import Variable  # noqa: F401


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """Gradients of outputs w.r.t. inputs (a tuple); .grad is left untouched. PyTorch's signature, positions
    included: only_inputs is deprecated and ignored (a warning when False, as torch's); is_grads_batched treats
    the first dim of every grad_outputs tensor as a batch of vectors (one backward pass each, stacked)."""
    outputs = [outputs] if isinstance(outputs, _C.Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
    if not only_inputs:
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.")
    if grad_outputs is None:
        grad_outputs = []
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, _C.Tensor) else list(grad_outputs)
    retain = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        result = _batched_grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused)
    else:
        result = _C.autograd_grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused)
    if _anomaly._checking():
        _anomaly._check_grads(result, inputs)
    return result


def _batched_grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused):
    """grad(..., is_grads_batched=True) as a loop of vector-Jacobian products (torch vmaps it)."""
    if len(grad_outputs) != len(outputs) or any(g is None for g in grad_outputs):
        raise _C.ValueError("grad(is_grads_batched=True) needs a batched grad_outputs tensor for every output")
    sizes = {g.shape[0] if g.dim() else None for g in grad_outputs}
    if None in sizes or len(sizes) != 1:
        raise _C.ShapeError("grad(is_grads_batched=True): every grad_outputs tensor needs the same batch size in "
                            f"its first dim, got shapes {[tuple(g.shape) for g in grad_outputs]}")
    for i, (g, out) in enumerate(zip(grad_outputs, outputs)):
        if tuple(g.shape[1:]) != tuple(out.shape):
            raise _C.ShapeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {g.shape[1:]} and output[{i}] "
                f"has a shape of {out.shape}.")
    (batch,) = sizes
    per_sample = []
    for b in range(batch):
        keep = retain or b < batch - 1
        per_sample.append(_C.autograd_grad(outputs, inputs, [g[b] for g in grad_outputs], keep, create_graph,
                                           allow_unused))
    from .._functions import stack  # here: oar._functions imports oar.autograd
    result = []
    for i, x in enumerate(inputs):
        column = [row[i] for row in per_sample]
        if all(c is None for c in column):
            result.append(None)
        else:
            result.append(stack([c if c is not None else x.new_zeros(x.shape) for c in column], 0))
    return tuple(result)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates the gradients of tensors into the .grad of the leaves they depend on; with `inputs`
    (a tensor or a list), into those tensors' .grad only (leaves or not), as torch's."""
    if grad_variables is not None:  # torch's deprecated name for grad_tensors
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
        import warnings
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", stacklevel=2)
        grad_tensors = grad_variables
    tensors = [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = []
    else:
        grad_tensors = [grad_tensors] if isinstance(grad_tensors, _C.Tensor) else list(grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    watched = _anomaly._before_backward(tensors, inputs) if _anomaly._checking() else None
    if inputs is None:
        _C.autograd_backward(tensors, grad_tensors, retain, create_graph)
    else:
        _accumulate_into(tensors, grad_tensors, retain, create_graph, inputs)
    if watched:
        _anomaly._after_backward(watched)


def _accumulate_into(tensors, grad_tensors, retain, create_graph, inputs):
    """backward(inputs=...): the gradients w.r.t. `inputs` alone, added to their .grad (an input the
    outputs do not depend on keeps its .grad)."""
    inputs = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _C.autograd_grad(tensors, inputs, grad_tensors, retain, create_graph, True)
    with set_grad_enabled(create_graph):
        for t, g in zip(inputs, grads):
            if g is not None:
                t.grad = g if t.grad is None else t.grad + g


def is_grad_enabled():
    return _C.is_grad_enabled()


class set_grad_enabled:
    """Context manager (and function) setting grad mode for this thread."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C.set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _C.is_grad_enabled()
            _C.set_grad_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _C.set_grad_enabled(prev)
        return wrapper


class no_grad(_GradMode):
    """Disables gradient recording: `with oar.no_grad():` or `@oar.no_grad()`."""
    mode = False


class inference_mode(_GradMode):
    """torch.inference_mode: here the same as no_grad (nothing is recorded); `mode=False` records."""

    def __new__(cls, mode=True):
        if callable(mode):  # bare @oar.inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = not mode
        self.inference = bool(mode)

    def __enter__(self):
        self.prev_inference = is_inference_mode_enabled()
        _inference_state.on = self.inference
        return super().__enter__()

    def __exit__(self, *exc):
        _inference_state.on = self.prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.inference):
                return fn(*args, **kwargs)
        return wrapper


_inference_state = threading.local()


def is_inference_mode_enabled():
    """torch.is_inference_mode_enabled: inside `inference_mode()` (per thread)."""
    return getattr(_inference_state, "on", False)


class enable_grad(_GradMode):
    mode = True


_tensor_backward_c = _C.Tensor.backward


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward with torch's signature: retain_graph defaults to create_graph, and `inputs` limits
    which tensors' .grad receive gradients (see backward)."""
    retain = create_graph if retain_graph is None else retain_graph
    watched = _anomaly._before_backward([self], inputs) if _anomaly._checking() else None
    if inputs is None:
        _tensor_backward_c(self, gradient, retain, create_graph)
    else:
        _accumulate_into([self], [] if gradient is None else [gradient], retain, create_graph, inputs)
    if watched:
        _anomaly._after_backward(watched)


_tensor_backward.__doc__ = (_tensor_backward.__doc__ or "") + "\n" + (_tensor_backward_c.__doc__ or "")
_C.Tensor.backward = _tensor_backward

from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402
from . import function, functional  # noqa: E402
