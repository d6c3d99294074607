"""What Python sees of the plugin boundary (ABI 1.2): DLPack device codes come from each plugin's device
description through the core, and a plugin's own flags are read, set and listed like the core's."""
import os
import subprocess
import sys

import pytest

import oar

# DLPack's DLDeviceType values (dlpack.h).
KDL_CPU, KDL_OPENCL = 1, 4


def _present(device_type):
    return any(d.startswith(device_type + ":") for d in oar.info()["devices"])


def _require_opencl():
    if not _present("opencl"):
        if "opencl" in os.environ.get("TEST_OAR_REQUIRE_DEVICES", "").split(","):
            pytest.fail("TEST_OAR_REQUIRE_DEVICES names opencl but no opencl device is loaded")
        pytest.skip("no opencl device is loaded")


def test_dlpack_device_of_cpu_tensor():
    assert oar.zeros(3).__dlpack_device__() == (KDL_CPU, 0)


def test_dlpack_device_of_opencl_tensor():
    _require_opencl()
    x = oar.ones(3, device="opencl")
    assert x.__dlpack_device__() == (KDL_OPENCL, 0)


def test_plugin_flag_is_listed_read_and_validated():
    _require_opencl()
    flags = {f["name"]: f for f in oar.info()["flags"]}
    cache = flags["OAR_OPENCL_CACHE_DIR"]
    assert cache["owner"] == "opencl" and cache["type"] == "string" and cache["default"] == ""
    assert flags["OAR_DEVICE"]["owner"] == ""
    opencl = next(p for p in oar.info()["plugins"] if p["name"] == "opencl")
    assert opencl["flags"] == ["OAR_OPENCL_CACHE_DIR"] and opencl["rejected_flags"] == []
    before = oar.get_flag("OAR_OPENCL_CACHE_DIR")
    oar.set_flag("OAR_OPENCL_CACHE_DIR", "/tmp/oar-test-cache")
    assert oar.get_flag("OAR_OPENCL_CACHE_DIR") == "/tmp/oar-test-cache"
    oar.set_flag("OAR_OPENCL_CACHE_DIR", before)
    with pytest.raises(ValueError):
        oar.get_flag("OAR_OPENCL_CACHE_DIRR")


def _flagdev_dir():
    # build/python/oar/__init__.py -> build/test_plugins/flags (built with the ABI tests)
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__))))
    path = os.path.join(build, "test_plugins", "flags")
    if not os.path.isdir(path):
        pytest.skip("the ABI test plugins are not built beside this oar package")
    return path


def _run(code, **env):
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__)))
    full = dict(os.environ, PYTHONPATH=package_root, OAR_PLUGIN_DEFAULT_DIR="0")
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)


def test_test_plugin_flags_from_python():
    # get_flag of a plugin flag loads the plugins first, so the name is known before any tensor exists.
    out = _run("import oar; print(oar.get_flag('OAR_FLAGDEV_MODE')); oar.set_flag('OAR_FLAGDEV_SCALE', '2.5');"
               "print(oar.get_flag('OAR_FLAGDEV_SCALE'))",
               OAR_PLUGIN_PATH=_flagdev_dir(), OAR_FLAGDEV_MODE="EXACT")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["exact", "2.5"]
    assert "unknown environment variable" not in out.stderr
    bad = _run("import oar\ntry:\n    oar.set_flag('OAR_FLAGDEV_SCALE', 'big')\nexcept ValueError as e:\n    print(e)",
               OAR_PLUGIN_PATH=_flagdev_dir())
    assert "OAR_FLAGDEV_SCALE expects a finite number, got 'big'" in bad.stdout, bad.stdout + bad.stderr


def test_typo_of_a_plugin_flag_warns():
    out = _run("import oar; oar.zeros(1)", OAR_PLUGIN_PATH=_flagdev_dir(), OAR_FLAGDEV_MODD="exact",
               OAR_PLUGIN_DEFAULT_DIR="1")
    assert out.returncode == 0, out.stderr
    assert "unknown environment variable OAR_FLAGDEV_MODD" in out.stderr
    assert "did you mean OAR_FLAGDEV_MODE?" in out.stderr
