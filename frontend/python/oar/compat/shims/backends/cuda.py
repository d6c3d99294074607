"""torch.backends.cuda: stored matmul precision flags (oar's CUDA plugin does not read them) and is_built()."""
from oar import _C


class _MatmulFlags:
    """torch.backends.cuda.matmul: attributes that keep what is assigned."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built():
    """Whether a CUDA plugin is loaded (PyTorch: built with CUDA); torch.cuda.is_available() also wants a GPU."""
    return any(p["device_type"] == "cuda" for p in _C.info()["plugins"])
