"""nn.utils.stateless (torch.nn.utils.stateless): functional_call, a module called with other tensors in place
of its parameters and buffers.

For the call, the given tensors are put into the module's parameter / buffer slots as they are (any tensor,
not only leaves), so the output's graph reaches them: gradients flow to the tensors passed in, as
meta-learning code (MAML and friends) needs. The module's own tensors come back afterwards, also when
the call raises.
"""
from ..._C import Tensor

__all__ = ["functional_call"]


def _merge(parameters_and_buffers):
    if isinstance(parameters_and_buffers, (tuple, list)):
        merged = {}
        for d in parameters_and_buffers:
            repeated = sorted(set(merged) & set(d))
            if repeated:
                raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged.update(d)
        return merged
    return dict(parameters_and_buffers)


def _slot(module, name):
    """(owning module, attribute name, kind) for a dotted name; kind: 'p'arameter, 'b'uffer or 'a'ttribute."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    if attr in owner._parameters:
        return owner, attr, "p"
    if attr in owner._buffers:
        return owner, attr, "b"
    return owner, attr, "a"


_MISSING = object()


def _get(owner, attr, kind):
    if kind == "p":
        return owner._parameters[attr]
    if kind == "b":
        return owner._buffers[attr]
    return owner.__dict__.get(attr, _MISSING)


def _put(owner, attr, kind, value):
    if kind == "p":
        owner._parameters[attr] = value  # bypasses register_parameter's leaf check, on purpose
    elif kind == "b":
        owner._buffers[attr] = value
    elif value is _MISSING:
        owner.__dict__.pop(attr, None)
    else:
        object.__setattr__(owner, attr, value)


def _tied_names(module):
    """{id(tensor): [every dotted name it is registered under]} for tensors registered more than once."""
    names = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), []).append(n)
    return {k: v for k, v in names.items() if len(v) > 1}


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named tensors of `parameters_and_buffers` (a dict, or a tuple of
    dicts without common keys) in place of the parameters and buffers of those names ("layer.weight").

    args: a tuple of positional arguments, or a single one. tie_weights: a tensor registered under
    several names (tied weights) is replaced under all of them when one name is given (giving different
    tensors for tied names is an error). strict: every parameter and buffer must be given, and nothing
    else. Names that are neither set plain attributes of the owning module for the call."""
    values = _merge(parameters_and_buffers)
    if tie_weights:
        for names in _tied_names(module).values():
            given = [n for n in names if n in values]
            if not given:
                continue
            first = values[given[0]]
            if any(values[n] is not first for n in given[1:]):
                raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider "
                                 "using tie_weights=False")
            for n in names:
                values.setdefault(n, first)
    if strict:
        own = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        own |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(own - set(values)), sorted(set(values) - own)
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                msg.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msg))
    for name, value in values.items():
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"functional_call expects tensors, got {type(value).__name__} for {name!r}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs

    saved = []
    try:
        for name, value in values.items():
            owner, attr, kind = _slot(module, name)
            saved.append((owner, attr, kind, _get(owner, attr, kind)))
            _put(owner, attr, kind, value)
        return module(*args, **kwargs)
    finally:
        for owner, attr, kind, original in reversed(saved):
            _put(owner, attr, kind, original)
