"""torch.backends: the flags scripts set up front (`torch.backends.cudnn.benchmark = True`).

The flags keep whatever is assigned, so scripts that set and read them run
unchanged; oar's plugins do not read them (their own settings are OAR_* flags,
see docs/flags.md). The is_available() queries answer for oar's loaded plugins.
"""
from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401  PyTorch imports these eagerly too
