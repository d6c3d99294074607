"""oar.compat: run unchanged PyTorch scripts on oar.

    python -m oar.compat train.py --epochs 2      # like `python train.py --epochs 2`
    python -m oar.compat -m mypackage.train       # like `python -m mypackage.train`

or, from Python, before the first `import torch`:

    import oar.compat
    oar.compat.enable()
    import torch            # this is oar

While enabled, `import torch` gives the `oar` package itself and `torch.X.Y`
gives `oar.X.Y` (the same module objects, so `torch.nn is oar.nn` and
`isinstance(t, torch.Tensor)` holds for every oar tensor). A few PyTorch
modules oar has no counterpart for but scripts touch in passing
(torch.backends.*, torch.version) come from small shims in oar.compat.shims.
A PyTorch API oar lacks fails where it is used, with an error naming it
(`import torch.fx`: ModuleNotFoundError; `torch.nn.FooLayer`: AttributeError).

enable() refuses to run once a real PyTorch is imported (mixing the two would
leave objects of both in one program); disable() undoes everything, after
which a real PyTorch installation imports normally again. See docs/compat.md.
"""
from ._mode import enable, disable, is_enabled  # noqa: F401
from ._missing import (MissingTorchAPIError, MissingTorchAttributeError, MissingTorchImportError,  # noqa: F401
                       MissingTorchModuleError)

__all__ = ["enable", "disable", "is_enabled", "MissingTorchAPIError", "MissingTorchAttributeError",
           "MissingTorchModuleError", "MissingTorchImportError"]
