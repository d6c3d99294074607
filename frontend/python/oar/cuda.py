"""oar.cuda: the torch.cuda queries scripts use to pick a device.

`device = "cuda" if oar.cuda.is_available() else "cpu"` works unchanged; the
answer comes from the loaded plugins (a cuda plugin with at least one GPU).
"""
from . import _C


def device_count():
    return sum(p["device_count"] for p in _C.info()["plugins"] if p["device_type"] == "cuda")


def is_available():
    return device_count() > 0
