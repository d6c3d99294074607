"""oar.adapter: subgraph offload to vendor drivers (liboar_adapter, docs/adapter.md).

    oar.adapter.drivers()   # drivers found: name, vendor, version, options; skipped ones with the reason
    oar.adapter.stats()     # compiles, cache_hits, cache_rebuilds, compile_failures (process-wide)

Offloading itself goes through ``oar.inference.Predictor(..., adapter="openvino")``, or any
``oar.jit.load`` / ``oar.onnx.load`` with ``adapter=`` or ``OAR_ADAPTER`` set.
"""
from . import _C

__all__ = ["drivers", "stats"]


def drivers():
    """The adapter drivers found in OAR_ADAPTER_PATH and beside liboar_core (loaded and skipped)."""
    return list(_C.adapter_drivers())


def stats():
    """Process-wide counters: programs compiled, loaded from the cache, cache entries rebuilt, failed compiles."""
    return dict(_C.adapter_stats())
