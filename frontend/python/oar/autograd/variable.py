"""torch.autograd.Variable, the pre-0.4 wrapper: since PyTorch 0.4 a Variable is a Tensor. Variable(t) returns a
new tensor sharing t's memory, detached from t's graph, with requires_grad as given; isinstance(x, Variable)
holds for every tensor."""
import warnings

from .. import _C

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            data = _C.Tensor()  # torch: Variable() is an empty float tensor
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
