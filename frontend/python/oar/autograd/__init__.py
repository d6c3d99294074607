"""oar.autograd: grad(), backward(), the grad-mode context managers, custom functions
(Function, in function.py) and numerical gradient checks (gradcheck.py)."""
import functools

from .. import _C


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Gradients of outputs w.r.t. inputs (a tuple); .grad is left untouched."""
    outputs = [outputs] if isinstance(outputs, _C.Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
    if grad_outputs is None:
        grad_outputs = []
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, _C.Tensor) else list(grad_outputs)
    retain = create_graph if retain_graph is None else retain_graph
    return _C.autograd_grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    tensors = [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = []
    else:
        grad_tensors = [grad_tensors] if isinstance(grad_tensors, _C.Tensor) else list(grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    _C.autograd_backward(tensors, grad_tensors, retain, create_graph)


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


class enable_grad(_GradMode):
    mode = True


from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402
from . import function, functional  # noqa: E402
