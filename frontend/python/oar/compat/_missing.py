"""The errors for PyTorch APIs oar lacks, and the module hooks that raise them.

`torch` *is* the `oar` package in compat mode, so a missing `torch.foo` is a
missing `oar.foo`, whose plain message ("module 'oar' has no attribute 'foo'")
names neither torch nor the reason. While compat mode is on, every mapped oar
module gets a module-level __getattr__ (PEP 562), and oar.Tensor a
__getattr__, that name the PyTorch API and say oar does not implement it.
Only lookups that already failed reach them, so found attributes cost
nothing; disable() removes them, leaving oar exactly as it was.
"""
import dis
import importlib
import sys

_DOC = "see docs/compat.md"
OAR = "oar"

# Submodules of PyTorch oar may lack, so `torch.fx` (attribute, no import) can
# say "module" rather than "API". Not exhaustive: anything else is an "API".
_TORCH_MODULES = frozenset("""
torch.fx torch.distributed torch.linalg torch.fft torch.special torch.distributions torch.hub
torch.quantization torch.ao torch.sparse torch.profiler torch.func
torch.export torch.compiler torch.masked torch.nested torch.package torch.overrides torch.library
torch.futures torch.monitor torch.signal torch.mps torch.xpu torch.cpu torch.random torch.storage
torch.nn.quantized torch.nn.intrinsic torch.nn.qat torch.nn.attention torch.nn.utils.rnn
torch.nn.utils.parametrize torch.nn.utils.prune torch.nn.utils.parametrizations
torch.utils.checkpoint torch.utils.tensorboard torch.utils.cpp_extension torch.utils.benchmark
torch.utils.hooks torch.utils.dlpack torch.utils.model_zoo torch.autograd.functional
torch.autograd.profiler torch.autograd.forward_ad
""".split())


class MissingTorchAPIError(Exception):
    """Mixed into the AttributeError / ModuleNotFoundError raised for a PyTorch API oar lacks.

    `except oar.compat.MissingTorchAPIError` tells "oar lacks this" apart from
    other failures; `api` is the PyTorch name (e.g. "torch.fx").
    """

    api = None


class MissingTorchAttributeError(MissingTorchAPIError, AttributeError):
    pass


class MissingTorchModuleError(MissingTorchAPIError, ModuleNotFoundError):
    pass


class MissingTorchImportError(MissingTorchAPIError, ImportError):
    pass


for _cls in (MissingTorchAPIError, MissingTorchAttributeError, MissingTorchModuleError, MissingTorchImportError):
    _cls.__module__ = "oar.compat"  # where they are public; tracebacks print this name
del _cls


def missing_attribute(api):
    kind = "module" if api in _TORCH_MODULES else "API"
    err = MissingTorchAttributeError(f"{api} is a PyTorch {kind} that oar does not implement "
                                     f"(oar.compat runs `torch` as oar; {_DOC})")
    err.api = api
    return err


def missing_module(api):
    err = MissingTorchModuleError(f"No module named {api!r}: {api} is a PyTorch module that oar does not provide "
                                  f"(oar.compat runs `torch` as oar; {_DOC})", name=api)
    err.api = api
    return err


def missing_import(module_tname, attr):
    """`from torch.nn import Foo`: ImportError, as Python raises, but naming torch.nn.Foo and why."""
    api = f"{module_tname}.{attr}"
    err = MissingTorchImportError(f"cannot import name {attr!r} from {module_tname!r}: "
                                  f"{missing_attribute(api)}", name=module_tname)
    err.api = api
    return err


_IMPORT_FROM = dis.opmap.get("IMPORT_FROM")


def _looked_up_by_from_import(frame):
    """Whether `frame` is running `from module import name` (CPython's IMPORT_FROM) right now.

    There the interpreter swallows an AttributeError and raises its own ImportError naming `oar`, not torch;
    an ImportError raised by the hook comes through instead.
    """
    try:
        return frame is not None and frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM
    except (AttributeError, IndexError, TypeError):  # not CPython's frames
        return False


def torch_name(module_name):
    """'oar.nn.functional' -> 'torch.nn.functional'; a shim's name likewise; None for other modules."""
    from ._finder import SHIMS
    for prefix in (SHIMS, OAR):  # SHIMS first: it is itself under oar
        if module_name == prefix or module_name.startswith(prefix + "."):
            return "torch" + module_name[len(prefix):]
    return None


_shim_names = {}  # (torch module, attribute) -> shim module name or None; the shims never change


def _shim_module(torch_mod_name, attr):
    """The shim module standing in for PyTorch's `<torch_mod_name>.<attr>`, or None."""
    key = (torch_mod_name, attr)
    if key not in _shim_names:
        from ._finder import SHIMS, find_module
        _shim_names[key] = find_module(SHIMS + torch_mod_name[len("torch"):] + "." + attr)
    return _shim_names[key]


def _submodule(module, attr):
    """`module.attr` as a submodule not imported yet (PyTorch imports most of its own eagerly), or None."""
    if "__path__" not in module.__dict__:
        return None  # not a package: asking importlib would only recurse into this hook for __path__
    from ._finder import find_module
    return find_module(module.__name__ + "." + attr)


def _make_hook(module, tname, previous):
    def __getattr__(attr):
        if previous is not None:
            try:
                return previous(attr)
            except AttributeError:
                pass
        if attr.startswith("__") and attr.endswith("__"):
            # Protocol probes (__path__, __wrapped__, ...): the plain error, as importlib and inspect expect.
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
        found = _submodule(module, attr) or _shim_module(tname, attr)
        if found is not None:
            return importlib.import_module(found)
        if _looked_up_by_from_import(sys._getframe(1) if hasattr(sys, "_getframe") else None):
            raise missing_import(tname, attr)
        raise missing_attribute(f"{tname}.{attr}")

    __getattr__.__oar_compat_hook__ = previous  # marks ours; keeps what to restore
    return __getattr__


def hook_code():
    """The code object of every hook (they are closures of one function): how tracebacks spot it."""
    return _make_hook(None, "", None).__code__


_hooked = []  # the modules holding our hook, for uninstall_all()


def install(module):
    """Gives one mapped public module the hook (once)."""
    current = module.__dict__.get("__getattr__")
    if current is not None and hasattr(current, "__oar_compat_hook__"):
        return
    tname = torch_name(module.__name__)
    if tname is None or _is_private(module.__name__):
        return
    module.__getattr__ = _make_hook(module, tname, current)
    _hooked.append(module)


def install_all():
    """Hooks every public oar module loaded so far (those loaded later get theirs from the finder)."""
    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None) or ""  # extensions (oar._C) and namespace packages take none
        if module is not None and source.endswith(".py"):
            install(module)


def uninstall_all():
    """Puts every hooked module's own __getattr__ (or none) back."""
    while _hooked:
        module = _hooked.pop()
        hook = module.__dict__.get("__getattr__")
        if hook is None or not hasattr(hook, "__oar_compat_hook__"):
            continue  # someone replaced it since; theirs stays
        if hook.__oar_compat_hook__ is None:
            del module.__getattr__
        else:
            module.__getattr__ = hook.__oar_compat_hook__


def _tensor_getattr(self, attr):
    """Tensor.__getattr__ while compat mode is on: `t.foo` that oar lacks names torch.Tensor.foo."""
    cls = type(self)
    known = any(attr in vars(k) for k in cls.__mro__)
    if known or (attr.startswith("__") and attr.endswith("__")) or not _is_oar_class(cls):
        # A property whose getter raised, a protocol probe, or a user's subclass: the real lookup's own error.
        return object.__getattribute__(self, attr)
    raise missing_attribute(f"torch.Tensor.{attr}")


def _is_oar_class(cls):
    return cls.__module__ == OAR or cls.__module__.startswith(OAR + ".")


def install_tensor():
    """Gives oar.Tensor the hook, unless it has a __getattr__ of its own."""
    from oar import Tensor
    if "__getattr__" not in vars(Tensor):
        Tensor.__getattr__ = _tensor_getattr


def uninstall_tensor():
    from oar import Tensor
    if vars(Tensor).get("__getattr__") is _tensor_getattr:
        del Tensor.__getattr__


def _is_private(name):
    """oar._C, oar._ops, oar.compat itself ...: not stand-ins for PyTorch APIs (and _C, an extension, takes no hook)."""
    if any(part.startswith("_") for part in name.split(".")):
        return True
    return name.startswith("oar.compat") and not name.startswith("oar.compat.shims")

