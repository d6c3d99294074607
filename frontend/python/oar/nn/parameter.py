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


_UNINIT_USE = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
               "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When "
               "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
               "torch functions")
_UNINIT_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                 "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                 "`forward` to initialize the parameters before accessing their attributes.")


def _refuse(name):
    def method(self, *args, **kwargs):
        raise ValueError(_UNINIT_USE.format(f"Tensor.{name}"))
    method.__name__ = name
    return method


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet (PyTorch's lazy modules): device, dtype, requires_grad,
    .to()/.cpu() and materialize() work; its shape and the common tensor methods raise (shape: RuntimeError,
    the others ValueError, as PyTorch). materialize(shape) gives it memory of that shape (uninitialised)
    and turns it, the same object, into cls_to_become."""
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        from .._creation import empty
        if isinstance(shape, int):
            shape = (shape,)
        data = empty(tuple(int(s) for s in shape), device=device if device is not None else self.device,
                     dtype=dtype if dtype is not None else self.dtype)
        self.data = data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_SHAPE)

    @property
    def ndim(self):
        raise ValueError(_UNINIT_USE.format("Tensor.ndim"))

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (_rebuild_uninitialized, (type(self), self.requires_grad, str(self.device), self.dtype))


for _name in ("numel", "dim", "ndimension", "detach", "clone", "tolist", "numpy", "item", "view", "reshape",
              "__getitem__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__matmul__", "__rmatmul__", "__neg__", "sum", "mean", "t", "flatten", "norm", "abs"):
    setattr(UninitializedTensorMixin, _name, _refuse(_name))
del _name


def _rebuild_uninitialized(cls, requires_grad, device, dtype):
    return cls(requires_grad, device, dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module before its first forward (see UninitializedTensorMixin);
    isinstance(p, Parameter) holds, and materialize() makes it a plain Parameter."""
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        from .._creation import empty
        super().__init__(empty(0, device=device, dtype=dtype), requires_grad)


def is_lazy(param):
    """Whether param is an UninitializedParameter (not materialized yet)."""
    return isinstance(param, UninitializedTensorMixin)
