"""torch.backends.cudnn: flags that keep what is assigned, and is_available().

oar's CUDA plugin has its own cuDNN settings (OAR_CUDA_CUDNN_EXHAUSTIVE_SEARCH
is the counterpart of `benchmark`, OAR_CUDA_ALLOW_TF32 of `allow_tf32`); these
flags are not forwarded to it, so setting them changes nothing in oar.
"""
from oar import _C

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """Whether a CUDA plugin that uses cuDNN has a device."""
    return any(p["device_type"] == "cuda" and p["device_count"] > 0 and any("CUDNN" in f for f in p["flags"])
               for p in _C.info()["plugins"])


def version():
    return None  # oar does not report which cuDNN its plugin was built with
