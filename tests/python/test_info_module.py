"""`python -m oar.info` prints what `oar-info` prints (one report, the
core's oar/info_report.h), and `oar.info()` stays the dict-returning
function even after `import oar.info` binds the module."""
import json
import os
import subprocess
import sys

import pytest

import oar

_PY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__)))
_OAR_INFO = os.path.join(os.path.dirname(_PY_DIR), "bin", "oar-info")


def _run(cmd):
    env = dict(os.environ, PYTHONPATH=_PY_DIR)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.skipif(not os.path.exists(_OAR_INFO), reason="no build/bin/oar-info beside this oar package")
@pytest.mark.parametrize("args", [[], ["--json"]])
def test_module_prints_what_oar_info_prints(args):
    py = _run([sys.executable, "-m", "oar.info"] + args)
    tool = _run([_OAR_INFO] + args)
    assert py.returncode == 0 and tool.returncode == 0, py.stderr + tool.stderr
    assert py.stdout == tool.stdout
    if args:
        report = json.loads(py.stdout)
        assert any(p["device_type"] == "cpu" for p in report["plugins"])


def test_bad_argument_is_a_usage_error():
    r = _run([sys.executable, "-m", "oar.info", "--bogus"])
    assert r.returncode == 2 and "usage: python -m oar.info" in r.stderr


def test_info_stays_callable_after_importing_the_module():
    import oar.info  # noqa: F401  binds the module as oar.info
    report = oar.info()
    assert isinstance(report, dict)
    assert any(p["device_type"] == "cpu" for p in report["plugins"])
