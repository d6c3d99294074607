"""The digits demo runs unchanged on every non-CPU device (OpenCL in CI, CUDA
where a GPU is): the same script with OAR_DEVICE=<type> reaches >= 97%
held-out accuracy with no op leaving the device (OAR_FALLBACK=error), and its
first-epoch loss matches the CPU run with the same seed to 1e-3 relative
(same Philox dropout masks, same shuffles, kernels from the same functors).
A device type that is absent skips, saying why."""
import os
import re
import subprocess
import sys

import pytest

import oar

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DEMO = os.path.join(ROOT, "examples", "train_digits.py")


# What to do about a missing device, per type.
_HINTS = {
    "opencl": "install pocl-opencl-icd, see scripts/install_deps.sh",
    "cuda": "no NVIDIA GPU or driver on this machine; oar.info() gives the CUDA runtime's reason",
}


def _present(device_type):
    return any(d.startswith(device_type + ":") for d in oar._C.info()["devices"])


def _require_or_skip(device_type):
    if _present(device_type):
        return
    required = os.environ.get("TEST_OAR_REQUIRE_DEVICES", "")
    if device_type in required.split(","):
        pytest.fail(f"TEST_OAR_REQUIRE_DEVICES names {device_type} but no such device is loaded; see oar.info()")
    pytest.skip(f"no {device_type} device is loaded ({_HINTS[device_type]})")


def _run_demo(device, epochs, tmp_path):
    env = dict(os.environ, OAR_DEVICE=device, OAR_FALLBACK="error")
    # The demo imports the oar package this test imported (not whatever a .pth file names).
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.environ.get("TEST_OAR_PYTHONPATH", ""), package_root] if p)
    out = subprocess.run([sys.executable, DEMO, "--epochs", str(epochs), "--seed", "0",
                          "--checkpoint", str(tmp_path / f"digits_{device}.oar")],
                         env=env, capture_output=True, text=True, timeout=1200)
    assert out.returncode in (0, 1), out.stderr[-4000:]
    loss = float(re.search(r"first-epoch loss ([0-9.]+)", out.stdout).group(1))
    acc = float(re.search(r"test accuracy ([0-9.]+)%", out.stdout).group(1)) / 100
    return loss, acc, out


@pytest.mark.parametrize("device_type", ["opencl", "cuda"])
def test_digits_demo_matches_cpu(device_type, tmp_path):
    _require_or_skip(device_type)
    dev_loss, dev_acc, out = _run_demo(device_type, 15, tmp_path)
    assert f"on {device_type}:0" in out.stdout, out.stdout
    assert "predicts the same: True" in out.stdout
    assert dev_acc >= 0.97, out.stdout
    print(out.stdout)
    cpu_loss, _, _ = _run_demo("cpu", 1, tmp_path)
    assert abs(dev_loss - cpu_loss) <= 1e-3 * abs(cpu_loss), (dev_loss, cpu_loss)
