"""oar.cuda: the torch.cuda queries and controls scripts use.

`device = "cuda" if oar.cuda.is_available() else "cpu"` works unchanged; the
answer comes from the loaded plugins (a cuda plugin with at least one GPU).
Where there is no CUDA device, the calls a CPU run of a CUDA-ready script
makes anyway (manual_seed, synchronize, empty_cache) do nothing, as torch's
do; the ones that need a device (current_device, get_device_name, set_device)
raise a DeviceError saying there is none.
"""
from .. import _C
from . import amp  # noqa: F401  torch.cuda.amp


def device_count():
    return sum(p["device_count"] for p in _C.info()["plugins"] if p["device_type"] == "cuda")


def is_available():
    return device_count() > 0


def _require(what):
    if not is_available():
        raise _C.DeviceError(f"torch.cuda.{what}: no CUDA device is available (oar found no cuda plugin with a GPU)")


def manual_seed(seed):
    """Seeds the generator the CUDA devices draw from: oar's one counter-based generator, so only where a
    CUDA device exists (torch's call is a no-op without CUDA too)."""
    if is_available():
        _C.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed():
    pass


seed_all = seed


def synchronize(device=None):
    """Waits for the device's queued work: oar's eager ops complete before their results are read, so
    there is nothing left to wait for here."""
    if device is not None:
        _require("synchronize")


def empty_cache():
    """Releases cached device memory; oar's allocators keep no cache a script needs to release by hand."""


def current_device():
    _require("current_device")
    return 0


def set_device(device):
    _require("set_device")


def get_device_name(device=None):
    _require("get_device_name")
    for p in _C.info()["plugins"]:
        if p["device_type"] == "cuda":
            return p.get("name", "cuda")
    return "cuda"


def is_bf16_supported():
    return is_available()
