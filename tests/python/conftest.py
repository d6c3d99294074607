"""Puts the built oar package on sys.path ($TEST_OAR_PYTHONPATH if set, else <repo>/build/python) and gives
the suites their shared fixtures: `device` (each device present) and `torch` (PyTorch as a reference)."""
import os
import sys

import pytest

_path = os.environ.get("TEST_OAR_PYTHONPATH") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
sys.path.insert(0, os.path.abspath(_path))
os.environ.setdefault("OAR_FALLBACK", "error")

import oar  # noqa: E402  (from the path above)
from torch_ref import import_torch  # noqa: E402


@pytest.fixture(params=oar._C.info()["devices"])
def device(request):
    """Each device present (a module may define its own `device`, or parametrize it)."""
    return request.param


@pytest.fixture
def torch():
    """PyTorch as a reference; the test skips, saying why, where it can't be imported."""
    return import_torch()


def pytest_collection_modifyitems(config, items):
    """TEST_OAR_ONLY_DEVICE=hipcpu (the HipCpu.PythonSuites run) keeps the tests parametrised on that device
    type, and the check that it loaded: the plain pytest run already covers the others, so CI runs them once."""
    only = os.environ.get("TEST_OAR_ONLY_DEVICE")
    if not only:
        return
    keep, drop = [], []
    for item in items:
        (keep if only in item.nodeid or "test_required_devices" in item.nodeid else drop).append(item)
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
