"""oar.utils.data._utils (torch.utils.data._utils): collation and worker info, for code that imports them from
PyTorch's private paths."""
from . import collate, worker  # noqa: F401
