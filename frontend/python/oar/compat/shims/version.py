"""torch.version: which build this is. Here it is oar, and says so (`oar`, `git_version`)."""
import oar as _oar

__version__ = _oar.__version__
oar = _oar.__version__  # a script can tell it runs on oar: getattr(torch.version, "oar", None)
git_version = "oar-" + _oar.__version__
debug = False
cuda = None  # no CUDA toolkit version: oar's devices are plugins, not a CUDA build
hip = None
