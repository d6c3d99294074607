"""nn.Parameter: a leaf tensor that requires grad, of its own type.

`Parameter(t)` is a Tensor subclass sharing t's memory (as in PyTorch), with no
history and requires_grad set, so `type(p) is nn.Parameter` and
`isinstance(p, nn.Parameter)` hold for the parameters of every layer.
"""
from .._C import Tensor


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True) -> a leaf Tensor registered by Module as a parameter."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        super().__init__(data)
        if requires_grad:
            self.requires_grad_(True)  # raises DTypeError (a TypeError) for integer tensors, as PyTorch does

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        copied = Tensor.__deepcopy__(self, memo)
        result = Parameter(copied, self.requires_grad)
        if copied.grad is not None:
            result.grad = copied.grad
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor(self.detach()), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer:
    """Buffer(data, persistent=True): marks a tensor to be registered as a buffer when assigned to a Module."""

    def __init__(self, data, persistent=True):
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer expects a Tensor, got {type(data).__name__}")
        self.data = data
        self.persistent = persistent
