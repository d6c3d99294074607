"""The import hook: `torch` and `torch.X.Y` resolve to `oar` and `oar.X.Y`.

A meta-path finder placed first on sys.meta_path, so a real PyTorch on
sys.path is never reached while compat mode is on. Its loader hands back the
oar module object itself (not a copy or a proxy): `torch.nn is oar.nn`, and
classes, isinstance checks and pickles are shared between the two names.
Where oar has no `oar.X.Y`, a shim `oar.compat.shims.X.Y` may stand in
(torch.backends, torch.version); failing both, the import fails naming the
PyTorch module.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

from . import _missing
from ._missing import OAR

TORCH = "torch"
SHIMS = "oar.compat.shims"


def find_module(name):
    """`name` if that module is loaded or can be found, else None (a parent that fails otherwise still raises)."""
    if name in sys.modules:
        return name
    try:
        return name if importlib.util.find_spec(name) is not None else None
    except ModuleNotFoundError as e:
        # Only "this name or a parent doesn't exist" means absent; a broken oar module must show its own error.
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            return None
        raise


def is_torch_name(fullname):
    return fullname == TORCH or fullname.startswith(TORCH + ".")


def target_of(fullname):
    """The module that stands for PyTorch's `fullname`: oar's own, else a shim, else None."""
    suffix = fullname[len(TORCH):]
    return find_module(OAR + suffix) or find_module(SHIMS + suffix)


class _AliasLoader(importlib.abc.Loader):
    """Loads `torch.X` by importing its stand-in and returning that very module object."""

    def __init__(self, target):
        self.target = target
        self._own_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # importlib stamped the torch spec on the shared module (it always sets __spec__); the module stays
        # oar's for reload(), pickling and find_spec().
        module.__spec__ = self._own_spec
        _missing.install(module)


class TorchFinder(importlib.abc.MetaPathFinder):
    """Resolves every `torch` import to oar (or a shim), or fails it; never lets a real PyTorch load."""

    def find_spec(self, fullname, path=None, target=None):
        if not is_torch_name(fullname):
            return None
        stand_in = target_of(fullname)
        if stand_in is None:
            raise _missing.missing_module(fullname)
        loaded = sys.modules.get(stand_in)
        if loaded is not None:
            is_package = "__path__" in vars(loaded)
        else:
            is_package = importlib.util.find_spec(stand_in).submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(stand_in), is_package=is_package)

    def invalidate_caches(self):
        pass
