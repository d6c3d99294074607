"""oar.jit: run eager Python code as a static graph.

`to_static` (a decorator for functions and `Module.forward`, or a call on a
Module) traces the function on its first call into a graph (oar._C.Graph) and
runs that graph on later calls with a C++ executor, skipping Python, the
autograd tape and per-op dispatch. The graph is specialized on a guard key:
the shapes, dtypes, devices and requires_grad of the tensor arguments, the
values of the other arguments and the modules' training flags. A call whose
key differs traces again (one graph per key, see `StaticFunction.graphs`).

Python control flow that depends on tensor *values* (`if x.sum() > 0`,
`x.item()`, `x.numpy()` on a traced tensor) raises oar.GraphError while
tracing instead of silently freezing one branch. Control flow on shapes or
on plain Python arguments is safe: it is part of the guard key.

Parameters and buffers of a module are captured by reference, so eager
training of the module is seen by the graph, and in-place writes the traced
code makes (batch-norm running statistics) are replayed on every run.
"""
import functools
import typing
import warnings

from . import _C
from ._C import Graph, Executor, GraphError, is_tracing  # noqa: F401
from .autograd import no_grad as _no_grad
from .nn.module import Module

__all__ = ["to_static", "trace", "trace_module", "TracedModule", "freeze", "optimize_for_inference", "save", "load", "TrainGraph", "StaticFunction", "LoadedFunction", "Graph", "Executor", "GraphError",
           "is_tracing", "not_to_static", "script", "is_scripting", "ignore", "unused", "export", "annotate",
           "interface", "Final"]


def _flatten(value, tensors):
    """The structure of `value` with each tensor replaced by its index in `tensors`."""
    if isinstance(value, _C.Tensor):
        tensors.append(value)
        return ("t", len(tensors) - 1)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_flatten(v, tensors) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _flatten(v, tensors)) for k, v in value.items()))
    return ("v", value)


def _unflatten(spec, tensors):
    kind, body = spec
    if kind == "t":
        return tensors[body]
    if kind in ("tuple", "list"):
        items = [_unflatten(s, tensors) for s in body]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: _unflatten(s, tensors) for k, s in body}
    return body


def _guard_key(spec, tensors, module):
    try:
        hash(spec)
    except TypeError:
        raise TypeError("to_static: arguments must be tensors, numbers, strings, None, or tuples/lists/dicts "
                        "of them (the non-tensor values are part of the graph's guard key)") from None
    metas = tuple((tuple(t.shape), str(t.dtype), str(t.device), t.requires_grad) for t in tensors)
    training = tuple(m.training for m in module.modules()) if module is not None else ()
    return (spec, metas, training)


def _device_of(tensors):
    return str(tensors[0].device) if tensors else str(_C.default_device())


def _module_names(module):
    """(tensor, qualified name) for a module's parameters and buffers, to name captured values."""
    if module is None:
        return []
    return [(t, name) for name, t in list(module.named_parameters()) + list(module.named_buffers())]


def _record(fn, spec, tensors, names=(), input_prefix="arg", input_names=()):
    """Runs fn on detached aliases of `tensors` (arguments laid out by `spec`) under a tracer.

    Returns (graph, output spec, output count). `names` is (tensor, name) pairs for captured values.
    The tracer is closed on any error, so no exception leaves it recording.
    """
    inputs = [t.detach() for t in tensors]  # the graph starts at the arguments
    given = list(input_names)[:len(inputs)]
    tracer = _C.Tracer(inputs, given + [f"{input_prefix}{i}" for i in range(len(given), len(inputs))])
    try:
        for t, name in names:
            tracer.name_tensor(t, name)
        args, kwargs = _unflatten(spec, inputs)
        out = fn(*args, **kwargs)
        out_tensors = []
        out_spec = _flatten(out, out_tensors)
        graph = tracer.finish(out_tensors)
    except BaseException:
        tracer.close()
        raise
    return graph, out_spec, len(out_tensors)


def _run_graph(executors, graph, tensors):
    """Runs `graph` on `tensors` with the executor for their device (made on first use)."""
    device = _device_of(tensors)
    executor = executors.get(device)
    if executor is None:
        executor = executors[device] = Executor(graph, device)
    return executor.run(list(tensors))


class _Compiled:
    def __init__(self, graph, out_spec, n_outputs):
        self.graph = graph
        self.out_spec = out_spec
        self.n_outputs = n_outputs
        self.executors = {}


class StaticFunction:
    """A function run as a static graph (see the module docstring)."""

    def __init__(self, fn, module=None):
        self._fn = fn
        self._module = module
        self._compiled = {}
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        # `@to_static` on a method: one StaticFunction (and cache) per instance, kept in the
        # instance's __dict__ so it lives and dies with the instance.
        if instance is None:
            return self
        key = f"_oar_static_{self._fn.__name__}_{id(self)}"
        bound = instance.__dict__.get(key)
        if bound is None:
            bound = StaticFunction(self._fn.__get__(instance, owner),
                                   module=instance if isinstance(instance, Module) else None)
            instance.__dict__[key] = bound
        return bound

    @property
    def graphs(self):
        """The graphs traced so far, one per guard key."""
        return [c.graph for c in self._compiled.values()]

    def graph_for(self, *args, **kwargs):
        """The graph these arguments run (traced now if their guard key is new)."""
        return self._compiled_for(args, kwargs)[0].graph

    def _compiled_for(self, args, kwargs):
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        key = _guard_key(spec, tensors, self._module)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._trace(spec, tensors)
            self._compiled[key] = compiled
        return compiled, tensors

    def _trace(self, spec, tensors):
        graph, out_spec, n = _record(self._fn, spec, tensors, _module_names(self._module))
        graph.optimize(_device_of(tensors))
        return _Compiled(graph, out_spec, n)

    def __call__(self, *args, **kwargs):
        if is_tracing():  # inside another trace: become part of it
            return self._fn(*args, **kwargs)
        compiled, tensors = self._compiled_for(args, kwargs)
        return _unflatten(compiled.out_spec, _run_graph(compiled.executors, compiled.graph, tensors))


def to_static(function=None, **options):
    """Runs `function` (a function, a method such as `Module.forward`, or a Module) as a static graph.

    As a decorator: `@oar.jit.to_static`. On a Module: `model = oar.jit.to_static(model)` replaces the
    instance's forward and returns the module.
    """
    if options:
        raise TypeError(f"to_static: unknown options {sorted(options)}")
    if function is None:
        return to_static
    if isinstance(function, Module):
        function.forward = StaticFunction(function.forward, module=function)
        return function
    if getattr(function, "_oar_not_to_static", False):
        return function
    self_obj = getattr(function, "__self__", None)
    return StaticFunction(function, module=self_obj if isinstance(self_obj, Module) else None)


def _as_args(example_inputs):
    return tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)


def trace(function, example_inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True):
    """Traces `function` on `example_inputs` (a tensor or tuple of tensors) now, as torch.jit.trace.

    A function gives its StaticFunction; a Module gives a TracedModule, a Module sharing its parameters,
    buffers and submodules whose forward is the graph, while the module itself stays eager (as PyTorch's).
    Each of `check_inputs` (tuples of arguments) is traced too, getting its own graph. There is no
    check_trace comparison to make: oar's tracer refuses control flow on tensor values (GraphError) where
    torch's check warns about it; `optimize`, `check_tolerance` and `strict` are accepted for PyTorch's sake.
    """
    if isinstance(function, Module):
        return trace_module(function, {"forward": example_inputs}, check_inputs=(
            None if check_inputs is None else [{"forward": c} for c in check_inputs]))
    static = to_static(function)
    for args in [example_inputs, *(check_inputs or ())]:
        static.graph_for(*_as_args(args))
    return static


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True):
    """torch.jit.trace_module: a TracedModule whose methods named in `inputs` ({name: example inputs}) are
    traced graphs of `mod`'s methods (see trace)."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    traced = TracedModule(mod)
    for name, example in inputs.items():
        static = StaticFunction(getattr(mod, name), module=mod)
        for args in [example, *(c[name] for c in check_inputs or () if name in c)]:
            static.graph_for(*_as_args(args))
        object.__setattr__(traced, name, static)
    return traced


class TracedModule(Module):
    """torch.jit.trace's result for a Module: the same parameters, buffers and submodules (so the same
    state_dict, and training either one trains both), with `forward` replaced by the traced graph."""

    def __init__(self, module):
        super().__init__()
        object.__setattr__(self, "_oar_original", module)  # not a submodule: its members are ours already
        self.original_name = type(module).__name__
        for name, p in module._parameters.items():
            self.register_parameter(name, p)
        for name, b in module._buffers.items():
            self.register_buffer(name, b, persistent=name not in module._non_persistent_buffers_set)
        for name, m in module._modules.items():
            self.add_module(name, m)
        self.training = module.training

    def train(self, mode=True):
        super().train(mode)
        self._oar_original.training = mode  # the graph's guard key reads the traced module's flags
        return self

    @property
    def graph(self):
        """forward's graph for the example inputs it was traced with (the first of its graphs)."""
        return self.forward.graphs[0]

    def save(self, path):
        """ScriptModule.save: oar.jit.save of `graph`, whatever other input signatures were traced since."""
        save(self.graph, path)

    def extra_repr(self):
        return f"original_name={self.original_name}"


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: `mod` itself, which must be in eval mode as PyTorch requires. oar's graphs already
    read parameters by reference, so there is nothing to inline."""
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: freeze(mod.eval())."""
    return freeze(mod.eval() if mod.training else mod)


def _key_difference(old, new):
    """Names of the optimizer hyperparameters that differ between two _hyper_key values."""
    names = []
    for g, (a, b) in enumerate(zip(old, new)):
        a, b = dict(a), dict(b)
        for name in sorted(a.keys() | b.keys()):
            if a.get(name) != b.get(name):
                names.append(f"param_groups[{g}][{name!r}] ({a.get(name)!r} -> {b.get(name)!r})")
    return names


class TrainGraph:
    """One training step (forward, loss, backward and optimizer update) as one graph, like OneFlow's nn.Graph.

        def step(x, y):
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss

        train_step = oar.jit.TrainGraph(step, optimizer, model=model)
        for x, y in loader:
            loss = train_step(x, y)

    Per guard key (as to_static's, plus the optimizers' hyperparameters other than lr -- and, once a
    schedule has changed them, other than SGD's momentum and Adam's betas, which the fused updates then
    read from a tensor -- and the model's
    train/eval flags), the first call runs eagerly so the optimizers create their state; the second and
    third trace the step and compare the two graphs. A step whose graph differs between two steps
    depends on Python values that change (a counter, a schedule computed in Python) and raises GraphError
    instead of being frozen. From then on a call runs the graph: parameters, buffers and optimizer state
    are updated in place, and the learning rate (and momentum or betas for SGD and Adam) is read from each
    group on every call, so schedulers work, cycle_momentum included.
    Gradients live inside the graph: `.grad` is None after a graph step.
    """

    def __init__(self, step, optimizers, model=None):
        self._step = step
        self._optimizers = list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]
        self._model = model
        self._states = {}
        self._warned = False

    @property
    def graph(self):
        """The graph of the most recent key that has one (None before the second call)."""
        graphs = [st["graph"] for st in self._states.values() if st.get("graph") is not None]
        return graphs[-1] if graphs else None

    def _params(self):
        for opt in self._optimizers:
            for group in opt.param_groups:
                yield from group["params"]

    def _clear_grads(self):
        for p in self._params():
            p.grad = None

    def _hyper_key(self):
        """The optimizers' hyperparameters that a graph freezes: not lr, nor, once a schedule changes them,
        what the fused updates read from their hyperparameter tensor (SGD's momentum, Adam's betas; then
        only whether SGD has momentum at all)."""
        key = []
        for opt in self._optimizers:
            for group in opt.param_groups:
                live = opt._graph_hypers if opt._hypers_live(group) else ()
                items = [("hypers_from_tensor", True)] if live else []
                for k, v in sorted(group.items()):
                    if k in ("params", "lr"):
                        continue
                    if k in live:
                        if k == "momentum":
                            items.append(("has_momentum", v != 0))
                        continue
                    items.append((k, tuple(v) if isinstance(v, list) else v))
                key.append(tuple(items))
        return tuple(key)

    # At most this many keys are kept; a step whose key is new every time (a
    # hyperparameter changed per step that the graph cannot read from a
    # tensor) runs eagerly, with one warning naming what changed.
    _MAX_KEYS = 16

    def _make_room(self, key):
        if len(self._states) < self._MAX_KEYS:
            return
        victim = next((k for k, st in self._states.items() if st["graph"] is None), next(iter(self._states)))
        if not self._warned:
            self._warned = True
            last = next(reversed(self._states))
            changed = _key_difference(last[1], key[1]) or ["the inputs' shapes or dtypes, or train/eval"]
            warnings.warn(f"TrainGraph: {len(self._states) + 1} different step signatures; what changed last: "
                          f"{', '.join(changed)}. A step runs as a graph from its third call with one signature, "
                          "so values that change on every step keep it eager: change them less often, or use "
                          "an optimizer whose update reads them from tensors (SGD's momentum, Adam's betas)",
                          RuntimeWarning, stacklevel=3)
        del self._states[victim]

    def _trace(self, spec, tensors):
        self._clear_grads()
        for opt in self._optimizers:
            opt._prepare_graph_state()
        names = _module_names(self._model)
        param_names = {id(t): name for t, name in names}
        # Optimizer tensors by name: dumps say what they are, and the two-trace
        # comparison does not mistake a changed learning rate for a changed graph.
        for i, opt in enumerate(self._optimizers):
            for name, t in opt._graph_tensors():
                names.append((t, f"optimizer{i}.{name}"))
            for k, (p, state) in enumerate(opt.state.items()):
                for field, value in state.items():
                    if isinstance(value, _C.Tensor):
                        names.append((value, f"optimizer{i}.{param_names.get(id(p), k)}.{field}"))
        try:
            graph, out_spec, n = _record(self._step, spec, tensors, names)
        finally:
            self._clear_grads()
        fingerprint = graph.fingerprint()  # before folding turns the traced Python numbers into constants
        graph.optimize(_device_of(tensors))
        compiled = _Compiled(graph, out_spec, n)
        compiled.fingerprint = fingerprint
        return compiled

    def _run(self, compiled, tensors):
        for opt in self._optimizers:
            opt._refresh_graph_state()
        with _no_grad():
            outputs = _run_graph(compiled.executors, compiled.graph, tensors)
        return _unflatten(compiled.out_spec, outputs)

    def __call__(self, *args, **kwargs):
        if is_tracing():
            return self._step(*args, **kwargs)
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        key = (_guard_key(spec, tensors, self._model), self._hyper_key())
        if key not in self._states:
            self._make_room(key)
        st = self._states.setdefault(key, {"calls": 0, "graph": None})
        st["calls"] += 1
        if st["calls"] == 1:  # eager: optimizers create their state
            return self._step(*args, **kwargs)
        compiled = self._trace(spec, tensors) if st["calls"] <= 3 else st["compiled"]
        if st["calls"] == 3 and compiled.fingerprint != st["compiled"].fingerprint:
            raise GraphError(
                "TrainGraph: the step recorded a different graph on two consecutive steps, so it depends on "
                "Python values that change between steps (a step counter, a schedule computed in Python, "
                "random choices in Python); make them tensors, or run the step eagerly")
        st["compiled"], st["graph"] = compiled, compiled.graph
        return self._run(compiled, tensors)


class LoadedFunction:
    """A graph loaded with `oar.jit.load` (or `oar.onnx.load`): call it with tensors of the saved shapes
    and dtypes. With an adapter driver selected (`adapter=` or OAR_ADAPTER) it runs as an
    `oar.inference.Predictor` that offloads subgraphs to the driver; `.placement` then says where each
    node ran and why."""

    _ADAPTER_KEYS = ("adapter_options", "deny", "min_nodes", "min_macs", "cache_dir")

    def __init__(self, graph, adapter=None, **adapter_options):
        unknown = sorted(set(adapter_options) - set(self._ADAPTER_KEYS))
        if unknown:
            raise TypeError(f"unknown keyword arguments {unknown}; the adapter takes {list(self._ADAPTER_KEYS)}")
        self.graph = graph
        self._executors = {}
        self._adapter = dict(adapter_options, adapter=adapter)
        self._predictors = {}
        self._last = None

    def __call__(self, *inputs):
        from .inference import _offloading_predictor
        predictor = _offloading_predictor(self.graph, inputs, self._adapter, self._predictors)
        if predictor is not None:
            self._last = predictor
            outputs = predictor._p.run(list(inputs))
        else:
            outputs = _run_graph(self._executors, self.graph, inputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @property
    def placement(self):
        """The adapter placement of the last offloaded run (None before one, or without an adapter)."""
        return self._last.placement if self._last is not None else None


def save(function, path, example_inputs=None):
    """Saves the graph of a StaticFunction, a to_static Module or a Graph, with its weights, to `path`.

    The file (docs/serialization.md) is written atomically and loads with `oar.jit.load` or the C++
    `oar::inference::Predictor`. A function traced for several input signatures needs `example_inputs`
    to say which graph to save.
    """
    if isinstance(function, Module):
        if not isinstance(function.forward, StaticFunction):
            function = to_static(function)
        function = function.forward
    if isinstance(function, StaticFunction):
        if example_inputs is not None:
            if not isinstance(example_inputs, (tuple, list)):
                example_inputs = (example_inputs,)
            graph = function.graph_for(*example_inputs)
        elif len(function.graphs) == 1:
            graph = function.graphs[0]
        else:
            raise ValueError(f"oar.jit.save: the function has {len(function.graphs)} traced graphs; "
                             "pass example_inputs to choose one (or call it once first)")
    elif isinstance(function, Graph):
        graph = function
    else:
        raise TypeError(f"oar.jit.save: expected a to_static function or Module or a Graph, got {type(function)}")
    _C.save_graph(graph, str(path))


def load(path, device="cpu", adapter=None, **adapter_options):
    """Loads a graph saved with `oar.jit.save`; returns a callable LoadedFunction.

    `adapter` (or OAR_ADAPTER) offloads subgraphs to that adapter driver; `adapter_options` are the
    keyword arguments of `oar.inference.Predictor` (adapter_options, deny, min_nodes, min_macs, cache_dir)."""
    return LoadedFunction(_C.load_graph(str(path), device), adapter=adapter, **adapter_options)


def not_to_static(function):
    """Marks a function that to_static leaves eager."""
    function._oar_not_to_static = True
    return function


# ---- torch.jit's TorchScript entry points ----
# TorchScript compiles a subset of Python whose meaning is Python's; oar runs such code eagerly (its
# static graphs come from to_static / trace instead), so these keep the program's meaning unchanged.

def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: the function or module itself, run eagerly (the same results TorchScript gives).
    Use oar.jit.to_static for a static graph."""
    return obj


def is_scripting():
    """False: oar never runs code as TorchScript."""
    return False


def ignore(drop=False, **kwargs):
    """@torch.jit.ignore / @torch.jit.ignore(drop=True): the function unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    """torch.jit.annotate(type, value): the value."""
    return the_value


Final = typing.Final
