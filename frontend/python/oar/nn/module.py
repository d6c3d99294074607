"""nn.Module: the base of every layer, with PyTorch's registration rules.

Attributes assigned on a Module are sorted by type: a Module becomes a child,
a leaf Tensor that requires grad (what nn.Parameter returns) a parameter, a
Tensor assigned under an existing buffer name (or via register_buffer / Buffer)
a buffer; anything else is a plain attribute. Parameters and buffers can't be
retyped in place across devices/dtypes (oar tensors are C++ values), so to()
replaces them and keeps requires_grad; a no-op to() keeps the same objects.
"""
from collections import OrderedDict
import functools
import warnings

from .. import _C
from .._C import Tensor
from ..autograd import no_grad
from .parameter import Parameter, Buffer
from ._state_dict import (EXTRA_STATE_KEY_SUFFIX, RemovableHandle, load_from_state_dict as _load_from_state_dict,
                          load_state_dict as _load_state_dict, save_to_state_dict as _save_to_state_dict)


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
# Hook registries (PyTorch's names): handle id -> hook, or -> True for the flag dicts.
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_pre_hooks", "_backward_hooks", "_any_hooks",
               "_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")
_HOOK_KINDS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")


def _init_hook_dicts(d):
    for key in _HOOK_DICTS:
        d.setdefault(key, OrderedDict())
    # _any_hooks holds the id of every hook of the module, so a call checks one dict (the hot path).
    for kind in _HOOK_KINDS:
        d["_any_hooks"].update(dict.fromkeys(d[kind], True))


class _Handle(RemovableHandle):
    """A RemovableHandle that also clears the hook's flags (with_kwargs, always_call)."""

    def __init__(self, hooks_dict, *flag_dicts):
        super().__init__(hooks_dict)
        self._flag_dicts = flag_dicts

    def remove(self):
        super().remove()
        for d in self._flag_dicts:
            d.pop(self.id, None)


class _GlobalHandle(_Handle):
    def remove(self):
        super().remove()
        _refresh_global_hooks()


def _add_hook(hooks, hook, prepend, flags=(), handle_type=_Handle):
    """Registers hook in `hooks` (first if prepend), setting it in each flag dict of `flags` whose
    condition holds; the handle removes it from all."""
    handle = handle_type(hooks, *(d for d, _ in flags))
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    for d, on in flags:
        if on:
            d[handle.id] = True
    return handle


# ---- full backward hooks, from tensor hooks alone (oar has no custom autograd Function).
# The engine runs nodes in decreasing creation order (every node is created after the
# nodes it consumes), so a node made between two sets of nodes runs between them too.
def _gate(tensors, on_grads):
    """Identities of `tensors` whose backward calls on_grads(grads) once all their gradients are
    known and before any flows on; it returns a replacement per tensor (None keeps the gradient).

    Made of three layers: p_i = identity(t_i) (oldest), a meeting point s, then
    q_i = p_i + s (s is -0.0, so q_i equals p_i bit for bit). q_i's hooks see each
    gradient, s's hook runs after all of them (s feeds every q_i), and p_i's hooks,
    which run after s's, hand out the replacements.
    """
    from .._creation import full, zeros_like
    grads, new = [None] * len(tensors), [None]
    no_grad_marker = object()

    def capture(i, g):
        grads[i] = g

    def meet(_):
        res = on_grads(list(grads))
        grads[:] = [None] * len(grads)
        new[0] = None if res is None else [no_grad_marker if r is None else r for r in res]

    def release(i, g):
        r = new[0][i] if new[0] is not None else None
        if r is None:
            return None
        new[0][i] = None  # handed out once; the graph may outlive this backward
        return zeros_like(g) if r is no_grad_marker else r

    ps = [t.expand(*t.shape) for t in tensors]
    s = full((), -0.0, device=tensors[0].device, requires_grad=True) * 1.0
    s.register_hook(meet)
    out, cast = [], {}
    for i, p in enumerate(ps):
        p.register_hook(lambda g, i=i: release(i, g))
        key = (str(p.device), str(p.dtype))
        if key not in cast:
            cast[key] = s.to(p.device).to(p.dtype)
        q = p + cast[key]
        q.register_hook(lambda g, i=i: capture(i, g))
        out.append(q)
    return out


def _pack(index, grads, n):
    packed = [None] * n
    for i, g in zip(index, grads):
        packed[i] = g
    return tuple(packed)


class _BackwardHook:
    """One forward call's full backward (pre-)hooks, as torch.utils.hooks.BackwardHook: the
    outputs' gradients are gathered for the pre-hooks, then the inputs' for the hooks, whose
    replacements are what flows on. Limitation: a module whose inputs are reached in backward
    without passing through its outputs (autograd.grad of an inner value) calls no hook."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.n_inputs, self.input_index = 0, []
        self.n_outputs, self.output_index = 0, []
        self.grad_outputs = None

    @staticmethod
    def _needing_grad(values):
        return [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]

    def setup_inputs(self, args):
        self.n_inputs = len(args)
        self.input_index = self._needing_grad(args)
        if not self.input_index:
            return args
        args = list(args)
        for i, t in zip(self.input_index, _gate([args[i] for i in self.input_index], self._on_input_grads)):
            args[i] = t
        return tuple(args)

    def setup_outputs(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result  # like PyTorch, a list output is one non-tensor value
        self.n_outputs = len(outs)
        self.output_index = self._needing_grad(outs)
        if not self.output_index:
            return result
        outs = list(outs)
        for i, t in zip(self.output_index, _gate([outs[i] for i in self.output_index], self._on_output_grads)):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    @staticmethod
    def _checked(r, n, what):
        r = tuple(r)
        if len(r) != n:
            raise RuntimeError(f"Backward hook returned an invalid number of {what}, got {len(r)}, but expected {n}")
        return r

    def _on_output_grads(self, grads):
        grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            r = hook(self.module, grad_outputs)
            if r is not None:
                grad_outputs = self._checked(r, self.n_outputs, "grad_output")
        self.grad_outputs = grad_outputs
        if not self.input_index:  # no input gradient to wait for: the hooks run now, as in PyTorch
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                r = hook(self.module, grad_inputs, grad_outputs)
                if r is not None and any(g is not None for g in r):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return [grad_outputs[i] for i in self.output_index]

    def _on_input_grads(self, grads):
        if self.grad_outputs is None:  # reached without passing through the outputs
            return None
        res = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            r = hook(self.module, res, self.grad_outputs)
            if r is not None:
                res = self._checked(r, self.n_inputs, "grad_input")
        self.grad_outputs = None
        return [res[i] for i in self.input_index]


_warned_non_full_hook = False  # register_backward_hook's warning, once per process

# Hooks run for every module's call (torch.nn.modules.module.register_module_*_hook).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


_global_hooks_on = False  # any of the above non-empty: one check in Module.__call__'s fast path


def _refresh_global_hooks():
    global _global_hooks_on
    _global_hooks_on = bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_pre_hooks
                            or _global_backward_hooks)


def _add_global_hook(hooks, hook, flags=()):
    handle = _add_hook(hooks, hook, False, flags, _GlobalHandle)
    _refresh_global_hooks()
    return handle


def register_module_forward_pre_hook(hook):
    """A forward pre-hook, hook(module, args) -> None or new args, common to all modules (run first)."""
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook, hook(module, args, output) (or with kwargs before output), common to all modules."""
    return _add_global_hook(_global_forward_hooks, hook, ((_global_forward_hooks_with_kwargs, with_kwargs),
                                                          (_global_forward_hooks_always_called, always_call)))


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module, before the module's own backward pre-hooks."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before the module's own backward hooks."""
    return _add_global_hook(_global_backward_hooks, hook)


def _applied(t, fn, keep_object):
    """fn(t) for Module.to()/.double()/...: a parameter keeps its object (its memory, dtype and device
    replaced, as PyTorch's `param.data = ...`, so optimizers built before .to() still hold it), with its
    gradient converted the same way; a buffer is replaced by the new tensor."""
    new = fn(t)
    if new is t:
        return t
    if not keep_object:
        return new.detach()
    grad = t.grad
    if grad is not None:
        t.grad = None
    t.data = new.detach()
    if grad is not None:
        t.grad = fn(grad).detach()
    return t


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
        _init_hook_dicts(d)

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

    def share_memory(self):
        """Moves every parameter, buffer and existing gradient into shared memory (Tensor.share_memory_, in
        place: the same objects, so an optimizer built on them keeps working) for Hogwild-style training;
        tensors on non-CPU devices are left as they are. Returns self."""
        for t in (*self.parameters(), *self.buffers()):
            t.share_memory_()
            if t.grad is not None:  # torch's share_memory applies to the gradients as well
                t.grad.share_memory_()
        return self

    # ---- device / dtype ----
    def _apply_tensors(self, fn):
        moved = {}  # id -> new tensor: a tensor shared by several modules (tied weights) stays shared
        with no_grad():
            for m in self.modules():
                for store in (m._parameters, m._buffers):
                    for k, t in store.items():
                        if t is not None:
                            if id(t) not in moved:
                                moved[id(t)] = (t, _applied(t, fn, keep_object=store is m._parameters))
                            store[k] = moved[id(t)][1]
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor), each with non_blocking (positional or keyword);
        to(memory_format=...) lays out the 4-D (channels_last) or 5-D (channels_last_3d) parameters and
        buffers, as torch's. Floating tensors alone change dtype."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        memory_format = kwargs.pop("memory_format", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {list(kwargs)}")
        for a in args:
            if isinstance(a, bool):  # non_blocking, torch's last positional argument
                continue
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
            if memory_format is not None and r.dim() in (4, 5):
                r = r.to(memory_format=memory_format)
            return r
        return self._apply_tensors(move)

    def cpu(self):
        return self.to("cpu")

    def to_empty(self, *, device):
        """Moves the parameters and buffers to `device` as uninitialized tensors (for modules built on the
        meta device or about to be loaded from a checkpoint)."""
        from .._torch_aliases import empty_like  # oar's top level imports nn before the aliases
        return self._apply_tensors(lambda t: empty_like(t, device=device))

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
    _version = 1  # state_dict()._metadata records it; a subclass that changes its saved layout bumps it

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        _save_to_state_dict(self, destination, prefix, keep_vars)
        if self._has_extra_state():
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """The parameters and persistent buffers by dotted name; its `_metadata` attribute holds each
        module's version, by prefix, as PyTorch's does (read back by _load_from_state_dict)."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies tensors from state_dict into this module's parameters and persistent buffers.

        Shape mismatches are always errors; with strict=True missing or unexpected
        keys are errors too (RuntimeError naming every key), as in PyTorch.
        """
        return _load_state_dict(self, state_dict, strict, assign)

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None or a new state_dict, after state_dict()."""
        return _add_hook(self._state_dict_hooks, hook, False)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook([module,] state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs), before the module loads its own keys (it may rename or add keys in state_dict)."""
        return _add_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self) if with_module else hook,
                         False)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys), after the module and its children loaded; it may edit the key
        lists in place (strict=True then raises only for what is left)."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    def get_extra_state(self):
        """What a subclass saves beside its tensors (under '<prefix>_extra_state'); overriding it and
        set_extra_state adds that entry."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _has_extra_state(self, method="get_extra_state"):
        return getattr(type(self), method) is not getattr(Module, method)

    # ---- calling and hooks ----
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (a non-tuple result is wrapped in a tuple); with
        with_kwargs, hook(module, args, kwargs) -> None or a tuple (new_args, new_kwargs)."""
        return _add_hook(self._forward_pre_hooks, hook, prepend, ((self._forward_pre_hooks_with_kwargs, with_kwargs),
                                                                  (self._any_hooks, True)))

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a replacement output; with with_kwargs,
        hook(module, args, kwargs, output). always_call runs it even when forward raises."""
        return _add_hook(self._forward_hooks, hook, prepend, ((self._forward_hooks_with_kwargs, with_kwargs),
                                                              (self._forward_hooks_always_called, always_call),
                                                              (self._any_hooks, True)))

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a replacement grad_output tuple, called in backward
        once the gradients w.r.t. the module's outputs are known, before they flow into it."""
        return _add_hook(self._backward_pre_hooks, hook, prepend, ((self._any_hooks, True),))

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a replacement grad_input tuple, called once
        per backward with the gradients w.r.t. the module's positional tensor inputs (None where an
        input is not a tensor that requires grad) and outputs. See _BackwardHook for how."""
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        return _add_hook(self._backward_hooks, hook, prepend, ((self._any_hooks, True),))

    def register_backward_hook(self, hook):
        """PyTorch's deprecated non-full backward hook, hook(module, grad_input, grad_output). torch calls
        it with the gradients of the inputs of the module's last autograd node (all of the module's
        inputs only when its forward is one node); oar runs it as a full backward hook: grad_output as
        torch's, grad_input the gradients w.r.t. the module's inputs (a warning says so, once)."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        global _warned_non_full_hook
        if not _warned_non_full_hook:
            _warned_non_full_hook = True
            warnings.warn("register_backward_hook is deprecated (use register_full_backward_hook); oar runs it as "
                          "a full backward hook: grad_input holds the gradients w.r.t. the module's inputs, which "
                          "PyTorch 1.13 gives only when the module's forward is a single autograd node",
                          UserWarning, stacklevel=2)
        self.__dict__["_is_full_backward_hook"] = False
        return _add_hook(self._backward_hooks, hook, False, ((self._any_hooks, True),))

    def __call__(self, *args, **kwargs):
        if not (self._any_hooks or _global_hooks_on):  # the common case, kept cheap
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        args, kwargs = self._run_forward_pre_hooks(args, kwargs)
        bw = None
        backward_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
        backward_pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if (backward_hooks or backward_pre_hooks) and _C.is_grad_enabled():
            bw = _BackwardHook(self, backward_hooks, backward_pre_hooks)
            args = bw.setup_inputs(args)
        called = set()
        result = None
        try:
            result = self.forward(*args, **kwargs)
            result = self._run_forward_hooks(args, kwargs, result, called)
        except Exception:
            self._run_always_called_hooks(args, kwargs, result, called)
            raise
        return bw.setup_outputs(result) if bw is not None else result

    def _run_forward_pre_hooks(self, args, kwargs):
        for hook_id, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {r}.")
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        return args, kwargs

    def _forward_hook_list(self):
        return [(i, h, i in _global_forward_hooks_with_kwargs, i in _global_forward_hooks_always_called)
                for i, h in _global_forward_hooks.items()] + \
               [(i, h, i in self._forward_hooks_with_kwargs, i in self._forward_hooks_always_called)
                for i, h in self._forward_hooks.items()]

    def _run_forward_hooks(self, args, kwargs, result, called):
        for hook_id, hook, with_kwargs, always in self._forward_hook_list():
            if always:
                called.add(hook_id)
            r = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
            if r is not None:
                result = r
        return result

    def _run_always_called_hooks(self, args, kwargs, result, called):
        """After forward (or a hook) raised: the always_call hooks not yet run, their own errors
        only warned about so the original error propagates."""
        for hook_id, hook, with_kwargs, always in self._forward_hook_list():
            if not always or hook_id in called:
                continue
            try:
                r = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
                if r is not None:
                    result = r
            except Exception as e:  # noqa: BLE001 - the forward error is the one to raise
                warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced as "
                              f"another error was raised in forward: {e}")

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
        _init_hook_dicts(self.__dict__)  # modules pickled before a hook kind existed
        for key in _MEMBER_DICTS:
            members = self.__dict__.get(key)
            if isinstance(members, _Members):
                members._bind(self.__dict__)


# `isinstance(p, Parameter)` works through Parameter's metaclass; re-exported for convenience.
__all__ = ["Module", "RemovableHandle", "Parameter"]
