"""torch._foreach_*: PyTorch's multi-tensor ops (what EMA helpers, hand-written optimizers and gradient code
call on lists of parameters), as loops over oar's per-tensor ops, with torch 1.13's signatures.

    _foreach_<unary>(tensors) -> list           _foreach_<unary>_(tensors) -> None (in place)
    _foreach_add / sub(tensors, scalar | scalars | tensors, alpha=1)        (and their in-place forms)
    _foreach_mul / div(tensors, scalar | scalars | tensors)
    _foreach_maximum / minimum(tensors, tensors)
    _foreach_addcmul / addcdiv(tensors, tensors1, tensors2, value=1 | scalars)
    _foreach_lerp(tensors, ends, weight | weights)   (PyTorch 2.x, used by EMA code when present)
    _foreach_norm(tensors, ord=2) -> list of 0-d tensors;  _foreach_zero_(tensors)

They compute what the per-tensor ops compute (oar fuses nothing here), so gradients and in-place checks are
those of the per-tensor ops.
"""
import numbers

from ._C import Tensor

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sin", "sinh", "sqrt",
          "tan", "tanh", "trunc")


def _list(tensors, name):
    tensors = list(tensors)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{name}: expects a list of tensors, got {[type(t).__name__ for t in tensors]}")
    return tensors


def _others(other, n, name):
    """The right operands, one per tensor: a number repeated, or a list of numbers or tensors of length n."""
    if isinstance(other, (numbers.Number, Tensor)) and not (isinstance(other, Tensor) and other.ndim > 0):
        return [other] * n
    other = list(other)
    if len(other) != n:
        raise RuntimeError(f"{name}: tensor lists must have the same number of tensors, got {n} and {len(other)}.")
    return other


def _unary(op):
    def out_of_place(self):
        return [getattr(t, op)() for t in _list(self, f"_foreach_{op}")]

    def in_place(self):
        for t in _list(self, f"_foreach_{op}_"):
            getattr(t, op + "_")()
    out_of_place.__name__, in_place.__name__ = f"_foreach_{op}", f"_foreach_{op}_"
    return out_of_place, in_place


def _binary(op, with_alpha):
    name = f"_foreach_{op}"

    def out_of_place(self, other, *, alpha=1):
        self = _list(self, name)
        if with_alpha and alpha != 1:
            return [getattr(t, op)(o, alpha=alpha) for t, o in zip(self, _others(other, len(self), name))]
        return [getattr(t, op)(o) for t, o in zip(self, _others(other, len(self), name))]

    def in_place(self, other, *, alpha=1):
        self = _list(self, name + "_")
        for t, o in zip(self, _others(other, len(self), name + "_")):
            if with_alpha and alpha != 1:
                getattr(t, op + "_")(o, alpha=alpha)
            else:
                getattr(t, op + "_")(o)
    out_of_place.__name__, in_place.__name__ = name, name + "_"
    return out_of_place, in_place


def _pointwise(op):
    name = f"_foreach_{op}"

    def out_of_place(self, tensor1, tensor2, value=1):
        self = _list(self, name)
        values = _others(value, len(self), name)
        return [getattr(t, op)(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, values)]

    def in_place(self, tensor1, tensor2, value=1):
        self = _list(self, name + "_")
        for t, a, b, v in zip(self, tensor1, tensor2, _others(value, len(self), name + "_")):
            getattr(t, op + "_")(a, b, value=v)
    out_of_place.__name__, in_place.__name__ = name, name + "_"
    return out_of_place, in_place


def _extreme(op):
    name = f"_foreach_{op}"

    def out_of_place(self, other):
        self = _list(self, name)
        return [getattr(t, op)(o) for t, o in zip(self, _others(other, len(self), name))]

    def in_place(self, other):
        self = _list(self, name + "_")
        for t, o in zip(self, _others(other, len(self), name + "_")):
            t.copy_(getattr(t, op)(o))
    out_of_place.__name__, in_place.__name__ = name, name + "_"
    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight):
    self = _list(self, "_foreach_lerp")
    return [t.lerp(e, w) for t, e, w in zip(self, tensors1, _others(weight, len(self), "_foreach_lerp"))]


def _foreach_lerp_(self, tensors1, weight):
    self = _list(self, "_foreach_lerp_")
    for t, e, w in zip(self, tensors1, _others(weight, len(self), "_foreach_lerp_")):
        t.lerp_(e, w)


def _foreach_norm(self, ord=2):
    """Each tensor's vector norm (a 0-d tensor each)."""
    from . import linalg
    return [linalg.vector_norm(t, ord) for t in _list(self, "_foreach_norm")]


def _foreach_zero_(self):
    for t in _list(self, "_foreach_zero_"):
        t.zero_()


__all__ = ["_foreach_lerp", "_foreach_lerp_", "_foreach_norm", "_foreach_zero_"]
for _op in _UNARY:
    globals()[f"_foreach_{_op}"], globals()[f"_foreach_{_op}_"] = _unary(_op)
    __all__ += [f"_foreach_{_op}", f"_foreach_{_op}_"]
for _op, _maker in (("add", lambda o: _binary(o, True)), ("sub", lambda o: _binary(o, True)),
                    ("mul", lambda o: _binary(o, False)), ("div", lambda o: _binary(o, False)),
                    ("addcmul", _pointwise), ("addcdiv", _pointwise), ("maximum", _extreme),
                    ("minimum", _extreme)):
    globals()[f"_foreach_{_op}"], globals()[f"_foreach_{_op}_"] = _maker(_op)
    __all__ += [f"_foreach_{_op}", f"_foreach_{_op}_"]
del _op, _maker
