"""Containers: Sequential, ModuleList, ModuleDict (PyTorch behaviour and naming "0", "1", ...)."""
from collections import OrderedDict
import operator

from .module import Module
from .parameter import Parameter


def _index(idx, n, what):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for {what} of length {n}")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    """Sequential(*modules) or Sequential(OrderedDict); forward chains the modules."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]
        for k in targets:
            del self._modules[k]
        # keep the numbering contiguous, as PyTorch does
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        n = len(self)
        index = max(0, min(n, index + n if index < 0 else index))
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)
        return self

    def forward(self, input):
        for m in self:
            input = m(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children "0", "1", ...; it has no forward()."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(idx, len(self), "ModuleList")]
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError("ModuleList.extend should be called with an iterable of modules, got a "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(); iterate over it and call the modules")


class _MemberDict:
    """The dict interface that ModuleDict and ParameterDict share: keys, items and values of the module's
    own _modules / _parameters (named by _members), so the entries are the registered children / parameters."""
    _members = None

    def __getitem__(self, key):
        return getattr(self, self._members)[key]

    def __delitem__(self, key):
        del getattr(self, self._members)[key]

    def __len__(self):
        return len(getattr(self, self._members))

    def __iter__(self):
        return iter(getattr(self, self._members))

    def __contains__(self, key):
        return key in getattr(self, self._members)

    def keys(self):
        return getattr(self, self._members).keys()

    def items(self):
        return getattr(self, self._members).items()

    def values(self):
        return getattr(self, self._members).values()


class ModuleDict(_MemberDict, Module):
    """An ordered dict of modules, registered as children under their keys."""
    _members = "_modules"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for entry in items:
            if not isinstance(entry, (tuple, list)) or len(entry) != 2:
                raise ValueError(f"ModuleDict.update expects (key, module) pairs, got {entry!r}")
            self[entry[0]] = entry[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(); index it and call the modules")


def _as_param(value):
    from .._C import Tensor
    if isinstance(value, Tensor) and not (value.is_leaf and value.requires_grad):
        return Parameter(value)  # PyTorch wraps plain tensors into Parameters
    return value


def _parameter_lines(items, kind):
    """torch's ParameterList / ParameterDict extra_repr: one '  (key): Parameter containing: [...]' line each."""
    from .._C import Tensor
    lines = []
    for k, p in items:
        if isinstance(p, Tensor):
            size = "x".join(str(s) for s in p.size())
            on = f" (GPU {p.get_device()})" if p.device.type == "cuda" else ""
            lines.append(f"  ({k}): {'Parameter' if isinstance(p, Parameter) else 'Tensor'} containing: "
                         f"[{kind(p)} of size {size}{on}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ..."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def __setitem__(self, idx, value):
        self.register_parameter(str(_index(idx, len(self), "ParameterList")), _as_param(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        self.register_parameter(str(len(self)), _as_param(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return _parameter_lines(enumerate(self), lambda p: p.dtype)


class ParameterDict(_MemberDict, Module):
    """An ordered dict of parameters registered under their keys."""
    _members = "_parameters"

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_param(value))

    def extra_repr(self):
        from .._torch_aliases import typename
        return _parameter_lines(self.items(), typename)

    def update(self, parameters):
        for k, v in (parameters.items() if hasattr(parameters, "items") else parameters):
            self[k] = v
