"""PyTorch-style functions and Tensor methods over the generated ops."""
import numbers

from . import _C
from ._C import Tensor
from ._ops import ops


def _dims(dim):
    if dim is None:
        return []
    if isinstance(dim, numbers.Integral):
        return [int(dim)]
    return [int(d) for d in dim]


def add(a, b, alpha=1):
    return a + (b * alpha if alpha != 1 else b)


def sub(a, b, alpha=1):
    return a - (b * alpha if alpha != 1 else b)


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def matmul(a, b):
    """torch.matmul: 1-D operands act as a row (left) or column (right) and their dim is dropped."""
    return a @ b


mm = bmm = matmul


def sum(x, dim=None, keepdim=False, dtype=None):
    y = ops.sum(x, dims=_dims(dim), keepdim=keepdim)
    return y if dtype is None else y.to(dtype=dtype)


def mean(x, dim=None, keepdim=False):
    return ops.mean(x, dims=_dims(dim), keepdim=keepdim)


def prod(x, dim=None, keepdim=False):
    return ops.prod(x, dims=_dims(dim), keepdim=keepdim)


def var(x, dim=None, unbiased=True, keepdim=False, correction=None):
    c = (1 if unbiased else 0) if correction is None else correction
    return ops.var(x, dims=_dims(dim), keepdim=keepdim, correction=int(c))


def std(x, dim=None, unbiased=True, keepdim=False, correction=None):
    return ops.sqrt(var(x, dim, unbiased, keepdim, correction))


class _ValuesIndices(tuple):
    """(values, indices), as torch.max(x, dim) returns."""
    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _extreme(op, argop, x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return ops.maximum(x, dim) if op == "max" else ops.minimum(x, dim)
    if dim is None:
        return getattr(ops, op)(x)
    values = getattr(ops, op)(x, dims=[dim], keepdim=keepdim)
    indices = getattr(ops, argop)(x, dims=[dim], keepdim=keepdim)
    return _ValuesIndices((values, indices))


def max(x, dim=None, keepdim=False):
    return _extreme("max", "argmax", x, dim, keepdim)


def min(x, dim=None, keepdim=False):
    return _extreme("min", "argmin", x, dim, keepdim)


def amax(x, dim=None, keepdim=False):
    return ops.max(x, dims=_dims(dim), keepdim=keepdim)


def amin(x, dim=None, keepdim=False):
    return ops.min(x, dims=_dims(dim), keepdim=keepdim)


def argmax(x, dim=None, keepdim=False):
    return ops.argmax(x, dims=_dims(dim), keepdim=keepdim)


def argmin(x, dim=None, keepdim=False):
    return ops.argmin(x, dims=_dims(dim), keepdim=keepdim)


def cat(tensors, dim=0):
    return ops.concat(list(tensors), dim=dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    return ops.stack(list(tensors), dim=dim)


def split(x, split_size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(split_size_or_sections, numbers.Integral):
        s = int(split_size_or_sections)
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
    out = ops.split(x, sizes=sizes, dim=dim)
    return out if isinstance(out, tuple) else (out,)


def chunk(x, chunks, dim=0):
    n = x.shape[dim]
    return split(x, -(-n // chunks), dim)


def where(condition, a, b):
    a = a if isinstance(a, Tensor) else _C.tensor(a, b.dtype if isinstance(b, Tensor) else None, condition.device)
    b = b if isinstance(b, Tensor) else _C.tensor(b, a.dtype, condition.device)
    return ops.where(condition, a, b)


def clamp(x, min=None, max=None):
    attrs = {}
    if min is not None:
        attrs["min"] = float(min)
    if max is not None:
        attrs["max"] = float(max)
    return ops.clamp(x, **attrs)


clip = clamp


def softmax(x, dim=-1):
    return ops.softmax(x, dim=dim)


def log_softmax(x, dim=-1):
    return ops.log_softmax(x, dim=dim)


def gather(x, dim, index):
    return ops.gather(x, index, dim=dim)


def index_select(x, dim, index):
    return ops.index_select(x, index, dim=dim)


def flatten(x, start_dim=0, end_dim=-1):
    return x.flatten(start_dim, end_dim)


def allclose(a, b, rtol=1e-5, atol=1e-8):
    import numpy as np
    return bool(np.allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=rtol, atol=atol))


def _unary(name):
    f = getattr(ops, name)
    return lambda x: f(x)


exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, abs, neg, square = (
    _unary(n) for n in ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg",
                        "square"))


def pow(a, b):
    return a ** b


def maximum(a, b):
    return ops.maximum(a, b)


def minimum(a, b):
    return ops.minimum(a, b)


def eq(a, b):
    return a == b


def logical_not(x):
    return ops.logical_not(x)


__all__ = ["add", "sub", "mul", "div", "matmul", "mm", "bmm", "sum", "mean", "prod", "var", "std", "max", "min",
           "amax", "amin", "argmax", "argmin", "cat", "concat", "concatenate", "stack", "split", "chunk", "where",
           "clamp", "clip", "softmax", "log_softmax", "gather", "index_select", "flatten", "allclose", "exp", "log",
           "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "square", "pow", "maximum",
           "minimum", "eq", "logical_not"]

# Tensor methods with PyTorch names.
_methods = {
    "sum": sum, "mean": mean, "prod": prod, "var": var, "std": std, "max": max, "min": min, "amax": amax,
    "amin": amin, "argmax": argmax, "argmin": argmin, "softmax": softmax, "log_softmax": log_softmax,
    "exp": exp, "log": log, "sqrt": sqrt, "rsqrt": rsqrt, "sin": sin, "cos": cos, "tanh": tanh,
    "sigmoid": sigmoid, "relu": relu, "abs": abs, "neg": neg, "square": square, "pow": pow, "clamp": clamp,
    "clip": clamp, "matmul": matmul, "mm": matmul, "split": split, "chunk": chunk,
    "gather": gather, "index_select": index_select, "maximum": maximum, "minimum": minimum,
    "logical_not": logical_not, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "add": add, "sub": sub, "mul": mul, "div": div,
}
for _name, _fn in _methods.items():
    setattr(Tensor, _name, _fn)


# ---- more Tensor methods PyTorch code relies on ----
def _clamp_(self, min=None, max=None):
    return self.copy_(clamp(self, min, max))


def _masked_fill(self, mask, value):
    v = value if isinstance(value, Tensor) else _C.tensor(value, self.dtype, self.device)
    return ops.where(mask, v.to(self.dtype), self)


def _unbind(self, dim=0):
    return tuple(self.select(dim, i) for i in range(self.shape[dim]))


_more_methods = {
    "clamp_": _clamp_, "clip_": _clamp_,
    "relu_": lambda self: self.copy_(ops.relu(self)),
    "masked_fill": _masked_fill,
    "masked_fill_": lambda self, mask, value: self.copy_(_masked_fill(self, mask, value)),
    "unbind": _unbind,
    "expand_as": lambda self, other: self.expand(*other.shape),
    "view_as": lambda self, other: self.view(*other.shape),
    "reshape_as": lambda self, other: self.reshape(*other.shape),
    "type_as": lambda self, other: self.to(other.dtype),
    "mT": property(lambda self: self.transpose(-2, -1)),
}
for _name, _fn in _more_methods.items():
    setattr(Tensor, _name, _fn)
