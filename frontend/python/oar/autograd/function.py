"""torch.autograd.Function: an op whose forward and backward the user writes.

`forward` runs with grad mode off; its tensor outputs are then connected to one
graph node (the C++ engine's custom node) whose backward calls the class's
`backward` with one gradient per output and expects one gradient (or None) per
forward argument. Both styles PyTorch accepts work: `forward(ctx, *args)`, and
`forward(*args)` with a separate `setup_context(ctx, inputs, output)`.
"""
import functools

from .. import _C


class FunctionCtx:
    """The `ctx` a Function's forward and backward share."""

    def __init__(self):
        self._saved = ()
        self._non_differentiable = set()
        self._dirty = ()
        self._versions = ()
        self.materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save tensors or None, got {type(t).__name__}")
        self._saved = tuple(tensors)
        # A second reference to each memory: an in-place write then writes that memory (bumping
        # its version, which saved_tensors checks) instead of taking over a fresh buffer.
        self._pins = tuple(t.detach() for t in tensors if t is not None)
        # Versions at save time: backward refuses tensors changed in place since (as PyTorch does).
        self._versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self):
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v:
                raise RuntimeError(f"one of the variables needed for gradient computation has been modified by an "
                                   f"inplace operation: saved tensor {i} is at version {t._version}; expected "
                                   f"version {v} instead")
        return self._saved

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class Function:
    """Subclass with static `forward` and `backward`; call with `MyFn.apply(*args)`."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("autograd.Function is not instantiated: call the class's apply() (MyFn.apply(x))")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden")

    @classmethod
    def _uses_setup_context(cls):
        return "setup_context" in _overrides(cls)

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        prev = _C.is_grad_enabled()
        _C.set_grad_enabled(False)
        try:
            if cls._uses_setup_context():
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _C.set_grad_enabled(prev)
        if ctx._dirty:
            raise NotImplementedError(f"{cls.__name__}: ctx.mark_dirty (in-place custom functions) is not supported "
                                      "by oar; return a new tensor instead")
        return _connect(cls, ctx, args, output)


def _overrides(cls):
    names = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(klass.__dict__)
    return names


def _connect(cls, ctx, args, output):
    """Hands forward's tensor outputs to the engine as one node; other outputs pass through."""
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    positions = [i for i, o in enumerate(outputs) if isinstance(o, _C.Tensor)]
    inputs = [a for a in args if isinstance(a, _C.Tensor)]
    if not positions or not any(t.requires_grad for t in inputs) or not _C.is_grad_enabled():
        return output
    tensors = [outputs[i] for i in positions]
    differentiable = [0 if id(t) in ctx._non_differentiable else 1 for t in tensors]
    arg_is_tensor = [isinstance(a, _C.Tensor) for a in args]

    def backward(grads):
        grads = list(grads)
        full = [None] * len(outputs)
        for p, g in zip(positions, grads):
            full[p] = g
        result = cls.backward(ctx, *full)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(args):
            # PyTorch allows trailing Nones to be dropped only when they stand for non-tensor args.
            if len(result) < len(args) and not any(arg_is_tensor[len(result):]):
                result = result + (None,) * (len(args) - len(result))
            else:
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(result)})")
        out = []
        for i, (a, g) in enumerate(zip(args, result)):
            if not isinstance(a, _C.Tensor):
                if g is not None:
                    raise RuntimeError(f"function {cls.__name__}Backward returned a gradient different than None at "
                                       f"position {i + 1}, but the corresponding forward input was not a Tensor")
                continue
            if g is not None:
                if not isinstance(g, _C.Tensor):
                    raise TypeError(f"function {cls.__name__}Backward returned a {type(g).__name__} as gradient "
                                    f"{i + 1}; expected a Tensor or None")
                _check_grad_shape(cls, i, g, a)
            out.append(g)
        return out

    connected = _C._record_custom(cls.__name__, inputs, tensors, differentiable, ctx.materialize_grads, backward)
    outputs = list(outputs)
    for p, t in zip(positions, connected):
        outputs[p] = t
    return outputs[0] if single else tuple(outputs)


def _check_grad_shape(cls, i, g, a):
    gs, s = tuple(g.shape), tuple(a.shape)
    if gs == s:
        return
    # The engine sums a broadcast gradient down to the input's shape; anything else is an error.
    ok = len(gs) >= len(s) and all(d == e or d == 1 for d, e in zip(s[::-1], gs[::-1]))
    if not ok:
        raise RuntimeError(f"Function {cls.__name__}Backward returned an invalid gradient at index {i} - got "
                           f"{list(gs)} but expected shape compatible with {list(s)}")


def once_differentiable(fn):
    """Marks a backward that is not itself differentiable: it runs with grad mode off."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _C.is_grad_enabled()
        _C.set_grad_enabled(False)
        try:
            return fn(ctx, *args)
        finally:
            _C.set_grad_enabled(prev)
    return wrapper
