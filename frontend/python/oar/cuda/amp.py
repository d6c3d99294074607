"""torch.cuda.amp: GradScaler and autocast for CUDA. Without a CUDA device both disable themselves
with a warning, as torch's do (the script then trains in float32); oar.amp has the device-generic forms."""
import warnings

from .. import amp as _amp


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        from . import is_available
        if enabled and not is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            enabled = False
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, **kwargs):
    return fwd if fwd is not None else (lambda f: f)


def custom_bwd(bwd):
    return bwd
