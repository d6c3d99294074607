"""nn.Module: the base of every layer, with PyTorch's registration rules.

Attributes assigned on a Module are sorted by type: a Module becomes a child,
a leaf Tensor that requires grad (what nn.Parameter returns) a parameter, a
Tensor assigned under an existing buffer name (or via register_buffer / Buffer)
a buffer; anything else is a plain attribute. Parameters and buffers can't be
retyped in place across devices/dtypes (oar tensors are C++ values), so to()
replaces them and keeps requires_grad; a no-op to() keeps the same objects.
"""
from collections import OrderedDict

from .. import _C
from .._C import Tensor
from ..autograd import no_grad
from .parameter import Parameter, Buffer
from ._state_dict import RemovableHandle, load_state_dict as _load_state_dict


def _addindent(s, n):
    lines = s.split("\n")
    return lines[0] + "".join("\n" + " " * n + line for line in lines[1:])


_MISSING = object()


class _Members(OrderedDict):
    """A module's parameters, buffers or children, mirrored into the instance __dict__.

    Reading `self.weight` then finds the tensor by normal attribute lookup instead of
    the __getattr__ fallback (an AttributeError raised and caught per read, ~0.75 us).
    Every mutation, including direct `module._parameters[name] = p`, keeps the mirror.
    """

    def __init__(self, mirror=None):
        super().__init__()
        self._mirror = mirror

    def _bind(self, mirror):
        self._mirror = mirror
        for k, v in self.items():
            mirror[k] = v

    def _unmirror(self, key):
        m = self.__dict__.get("_mirror")
        if m is not None:
            m.pop(key, None)

    def __setitem__(self, key, value):
        OrderedDict.__setitem__(self, key, value)
        m = self.__dict__.get("_mirror")
        if m is not None:
            m[key] = value

    def __delitem__(self, key):
        OrderedDict.__delitem__(self, key)
        self._unmirror(key)

    def pop(self, key, default=_MISSING):
        if key in self:
            self._unmirror(key)
            return OrderedDict.pop(self, key)
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self, last=True):
        key, value = OrderedDict.popitem(self, last)
        self._unmirror(key)
        return key, value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self):
            self._unmirror(key)
        OrderedDict.clear(self)

    def update(self, *args, **kwargs):
        for k, v in OrderedDict(*args, **kwargs).items():
            self[k] = v

    def __reduce__(self):  # copies and pickles carry the items, not the mirror (rebound by the module)
        return (type(self), (), None, None, iter(list(self.items())))


_MEMBER_DICTS = ("_parameters", "_buffers", "_modules")


class Module:
    """Base class for all neural network modules; subclasses define forward()."""
    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"Module.__init__() got unexpected arguments {args} {kwargs}")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Members(d)
        d["_buffers"] = _Members(d)
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _Members(d)
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- registration ----
    def _check_init(self, what):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")

    def register_parameter(self, name, param):
        self._check_init("parameters")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'parameter name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Tensor):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(oar.Tensor or None required)")
        if param is not None and not param.is_leaf:
            raise ValueError(f"cannot assign non-leaf Tensor to parameter '{name}'; use .detach() or nn.Parameter")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_init("buffers")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'buffer name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(oar.Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'module name can\'t contain "." or be empty, got {name!r}')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")

        def drop(*dicts):
            for x in dicts:
                if x is not None:
                    x.pop(name, None)
            d.pop(name, None)

        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            drop(params, buffers)
            modules[name] = value
        elif isinstance(value, Buffer):
            self._check_init("buffers")
            drop(params, modules)
            self.register_buffer(name, value.data, value.persistent)
        elif isinstance(value, Tensor):
            if buffers is not None and name in buffers:
                buffers[name] = value
            elif (params is not None and name in params) or (value.requires_grad and value.is_leaf):
                self._check_init("parameters")
                drop(buffers, modules)
                self.register_parameter(name, value)
            else:
                drop(params, buffers, modules)
                object.__setattr__(self, name, value)
        elif value is None and any(x is not None and name in x for x in (params, buffers, modules)):
            for x in (params, buffers, modules):
                if name in x:
                    x[name] = None
        else:
            drop(params, buffers, modules)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        p = d.get("_parameters")
        if p is not None and name in p:
            return p[name]
        for key in ("_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(key, {}):
                del self.__dict__[key][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ---- traversal ----
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for k, v in get(m).items():
                if v is None:
                    continue
                if remove_duplicate:  # a tensor shared by two modules is listed once
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters, prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers, prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        m = self
        for item in target.split(".") if target else []:
            if item not in m._modules or m._modules[item] is None:
                raise AttributeError(f"{type(m).__name__} has no submodule '{item}' (looking up '{target}')")
            m = m._modules[item]
        return m

    def get_parameter(self, target):
        mod, _, name = target.rpartition(".")
        m = self.get_submodule(mod)
        if name not in m._parameters:
            raise AttributeError(f"{type(m).__name__} has no parameter '{name}'")
        return m._parameters[name]

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.zero_()

    # ---- device / dtype ----
    def _apply_tensors(self, fn):
        with no_grad():
            for m in self.modules():
                for store in (m._parameters, m._buffers):
                    for k, t in store.items():
                        if t is None:
                            continue
                        new = fn(t)
                        if new is t:
                            continue
                        new = new.detach()
                        if t.requires_grad:
                            new.requires_grad_(True)
                        g = t.grad
                        if g is not None:
                            new.grad = fn(g).detach()
                        store[k] = new
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor); floating tensors alone change dtype."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {list(kwargs)}")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, _C.device)):
                device = a
            else:
                raise TypeError(f"to() received an invalid argument {a!r}: expected a device, dtype or Tensor")
        if dtype is not None and not _C.to_dtype(dtype).is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
        dev = None if device is None else _C.to_device(device)

        def move(t):
            r = t
            if dev is not None and r.device != dev:
                r = r.to(dev)
            if dtype is not None and r.is_floating_point() and r.dtype != dtype:
                r = r.to(dtype=dtype)
            return r
        return self._apply_tensors(move)

    def cpu(self):
        return self.to("cpu")

    def type(self, dst_type):
        return self.to(dtype=dst_type)

    def float(self):
        return self.to(dtype=_C.dtype.float32)

    def double(self):
        return self.to(dtype=_C.dtype.float64)

    def half(self):
        return self.to(dtype=_C.dtype.float16)

    def bfloat16(self):
        return self.to(dtype=_C.dtype.bfloat16)

    # ---- state dict ----
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies tensors from state_dict into this module's parameters and persistent buffers.

        Shape mismatches are always errors; with strict=True missing or unexpected
        keys are errors too (RuntimeError naming every key), as in PyTorch.
        """
        return _load_state_dict(self, state_dict, strict, assign)

    # ---- calling and hooks ----
    def register_forward_pre_hook(self, hook, *, prepend=False):
        """hook(module, args) -> None or new args (a non-tuple result is wrapped in a tuple)."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False):
        """hook(module, args, output) -> None or a replacement output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        if not self._forward_pre_hooks and not self._forward_hooks:  # the common case, kept cheap
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    # ---- printing ----
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        for key in _MEMBER_DICTS:
            members = self.__dict__.get(key)
            if isinstance(members, _Members):
                members._bind(self.__dict__)


# `isinstance(p, Parameter)` works through Parameter's metaclass; re-exported for convenience.
__all__ = ["Module", "RemovableHandle", "Parameter"]
