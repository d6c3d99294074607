"""torch.backends.mkldnn: a flag that keeps what is assigned, and is_available().

The flag is not forwarded: whether oar's CPU plugin uses oneDNN is fixed when it is built.
"""
from oar import _C

enabled = True


def is_available():
    """Whether the loaded CPU plugin is the oneDNN (mkldnn) one."""
    return any(p["device_type"] == "cpu" and "mkldnn" in p["name"] for p in _C.info()["plugins"])
