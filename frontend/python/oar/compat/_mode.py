"""Turning compat mode on and off: the import hook, the missing-API hooks, the spawn-child path.

enable() refuses once a real PyTorch is imported rather than swapping it out
of sys.modules: modules and objects that already hold real torch classes
would keep them, and a program mixing both fails in ways far from the cause.
"""
import importlib
import sys

from . import _children, _finder, _missing

_finder_installed = None


def is_enabled():
    return _finder_installed is not None


def _torch_modules():
    return [name for name in list(sys.modules) if _finder.is_torch_name(name)]


def _is_ours(module):
    name = getattr(module, "__name__", None) or ""
    return name == _finder.OAR or name.startswith(_finder.OAR + ".") or _children.is_stand_in(module)


def _refuse_real_torch():
    for name in _torch_modules():
        module = sys.modules.get(name)
        if module is not None and not _is_ours(module):
            where = getattr(module, "__file__", None) or "?"
            raise RuntimeError(
                f"oar.compat.enable(): the real PyTorch is already imported ({name} from {where}); compat mode "
                "must be on before the first `import torch` (run the script with `python -m oar.compat script.py`, "
                "or call oar.compat.enable() before anything imports torch)")


def enable():
    """Makes `import torch` (and torch.X.Y) resolve to oar in this process and its DataLoader workers.

    Idempotent. Raises RuntimeError if a real PyTorch is already imported.
    """
    global _finder_installed
    if _finder_installed is not None:
        return
    _refuse_real_torch()
    oar = importlib.import_module(_finder.OAR)
    _finder_installed = _finder.TorchFinder()
    sys.meta_path.insert(0, _finder_installed)
    for name in _torch_modules():
        # None entries (an import someone blocked) and the spawn-child stand-in give way to oar.
        if name == _finder.TORCH:
            sys.modules[name] = oar
        elif sys.modules.get(name) is None:
            del sys.modules[name]
    _missing.install_all()
    _missing.install_tensor()
    _children.add()


def disable():
    """Undoes enable(): `import torch` finds a real PyTorch again (if installed); oar is left as it was.

    Names already bound to oar through `torch` (e.g. a module-level `import torch`) stay bound to oar.
    """
    global _finder_installed
    if _finder_installed is None:
        return
    if _finder_installed in sys.meta_path:
        sys.meta_path.remove(_finder_installed)
    _finder_installed = None
    for name in _torch_modules():
        del sys.modules[name]
    _missing.uninstall_all()
    _missing.uninstall_tensor()
    _children.remove()
    importlib.invalidate_caches()
