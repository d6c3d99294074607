"""oar.compat on a RealNVP-style normalizing flow (compat_scripts/realnvp_flow.py): coupling layers with
torch.chunk, a custom autograd.Function (straight-through clamp with save_for_backward/needs_input_grad),
torch.distributions MultivariateNormal / Independent(Normal) and Adam. On every oar device it must learn and
invert exactly; its losses must equal the CPU's to 1e-4 and, where an interpreter here imports the real
PyTorch, PyTorch's."""
import re

import oar
import pytest

from test_compat import (assert_same_losses, device_runs, losses, ok, run_compat, run_torch, script,  # noqa: F401
                         torch_python)

DEVICES = oar._C.info()["devices"]
NAME = "realnvp_flow.py"


@pytest.fixture(scope="module")
def on_oar():
    run = device_runs()
    return lambda device: run(NAME, device)


def _number(label, out):
    return float(re.search(re.escape(label) + r"\s+(-?[\d.e+-]+)", out).group(1))


@pytest.mark.parametrize("device", DEVICES)
def test_flow_learns_and_inverts(on_oar, device):
    out = on_oar(device)
    nll = losses(out)
    assert len(nll) == 8 and nll[-1] < 0.4 * nll[0], out  # initial, 6 logged steps, final
    assert _number("log_prob gap:", out) < 1e-5, out
    assert _number("round trip error:", out) < 1e-4, out
    assert "straight-through gradient: -0.4000 -2.0000 1.0000 0.4000" in out, out
    if not device.startswith("cpu"):
        assert_same_losses(out, on_oar(DEVICES[0]))


def test_flow_matches_pytorch(on_oar, torch_python):
    assert_same_losses(on_oar(DEVICES[0]), ok(run_torch(torch_python, script(NAME))))
