"""nn.Parameter: a leaf tensor that requires grad.

oar.Tensor is a C++ class that cannot be subclassed from Python, so
`Parameter(t)` returns a plain Tensor: a detached alias of `t` (same memory, as
in PyTorch) with requires_grad set. Module.__setattr__ registers such leaf
tensors as parameters, and `isinstance(x, nn.Parameter)` is True for every leaf
tensor that requires grad, which is what a PyTorch user checks for.
"""
from .._C import Tensor


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.is_leaf and obj.requires_grad


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data=None, requires_grad=True) -> leaf Tensor with requires_grad."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)  # raises DTypeError (a TypeError) for integer tensors, as PyTorch does
        return t


class Buffer:
    """Buffer(data, persistent=True): marks a tensor to be registered as a buffer when assigned to a Module."""

    def __init__(self, data, persistent=True):
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer expects a Tensor, got {type(data).__name__}")
        self.data = data
        self.persistent = persistent
