"""The CPU plugin's oneDNN convolutions in both memory layouts (OAR_CPU_MKLDNN_CONV_LAYOUT): blocked (the
primitive's own nChw16c-style layouts, reordered in and out), plain (NCHW, im2col + GEMM) and auto (picked per
shape). Forward and both gradients must agree with each other within f32 rounding and with float64 convolution,
which runs the plugin's reference loops (no oneDNN), on the shapes each rule of `auto` covers."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import oar
import oar.nn.functional as F

FLAG = "OAR_CPU_MKLDNN_CONV_LAYOUT"

# (N, C, H, OC, kernel, stride, padding, dilation, groups): which rule of `auto` each one exercises.
CASES = {
    "3x3, 16 channels (blocked)": (2, 16, 9, 24, 3, 1, 1, 1, 1),
    "strided, dilated": (2, 16, 11, 32, 3, 2, 2, 2, 1),
    "depthwise (blocked)": (2, 32, 8, 32, 3, 1, 1, 1, 32),
    "grouped 1x1": (2, 32, 6, 64, 1, 1, 0, 1, 4),
    "1x1 (plain)": (3, 24, 7, 40, 1, 1, 0, 1, 1),
    "image input, 3 channels (plain but its weight gradient)": (4, 3, 12, 16, 3, 1, 1, 1, 1),
    "batch 1, weights outweigh activations (plain)": (1, 64, 3, 128, 3, 1, 1, 1, 1),
    "5x5 with bias, odd sizes": (3, 17, 13, 19, 5, 2, 2, 1, 1),
}


@pytest.fixture(autouse=True)
def restore_flag():
    yield
    oar.set_flag(FLAG, "auto")


def conv_all(case, layout, dtype):
    n, c, h, oc, k, s, p, d, g = case
    rng = np.random.default_rng(sum(case))
    x = oar.tensor(rng.standard_normal((n, c, h, h + 1)), dtype=dtype, requires_grad=True)
    w = oar.tensor(rng.standard_normal((oc, c // g, k, k)) / np.sqrt(c * k * k), dtype=dtype, requires_grad=True)
    b = oar.tensor(rng.standard_normal(oc), dtype=dtype, requires_grad=True)
    if layout is not None:
        oar.set_flag(FLAG, layout)
    y = F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g)
    gy = oar.tensor(rng.standard_normal(tuple(y.shape)), dtype=dtype)
    y.backward(gy)
    return [t.detach().numpy().astype(np.float64) for t in (y, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("name", list(CASES))
def test_layouts_agree_with_float64_reference(name):
    if oar.get_default_device().type != "cpu":
        pytest.skip("the flag belongs to the CPU plugin")
    case = CASES[name]
    want = conv_all(case, None, oar.float64)
    results = {layout: conv_all(case, layout, oar.float32) for layout in ("blocked", "plain", "auto")}
    for layout, got in results.items():
        for what, a, b in zip(("y", "dx", "dw", "db"), got, want):
            scale = max(1.0, np.abs(b).max())
            np.testing.assert_allclose(a, b, rtol=0, atol=2e-5 * scale, err_msg=f"{layout} {what} ({name})")
    for what, a, b in zip(("y", "dx", "dw", "db"), results["blocked"], results["plain"]):
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-5 * max(1.0, np.abs(b).max()), err_msg=f"blocked vs plain {what}")


def test_flag_is_validated_and_read_per_call():
    with pytest.raises(ValueError, match=FLAG):
        oar.set_flag(FLAG, "nchw16c")
    assert oar.get_flag(FLAG) == "auto"
    oar.set_flag(FLAG, "BLOCKED")  # case-insensitive, stored lower case
    assert oar.get_flag(FLAG) == "blocked"


def test_a_model_trains_the_same_in_both_layouts():
    if oar.get_default_device().type != "cpu":
        pytest.skip("the flag belongs to the CPU plugin")
    oar.set_flag(FLAG, "blocked")
    oar.manual_seed(3)
    model = oar.nn.Sequential(oar.nn.Conv2d(3, 16, 3, padding=1), oar.nn.ReLU(), oar.nn.Conv2d(16, 8, 3, groups=2))
    x = oar.randn(2, 3, 10, 10)
    y_blocked = model(x)
    y_blocked.sum().backward()
    grads_blocked = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    oar.set_flag(FLAG, "plain")
    y_plain = model(x)
    y_plain.sum().backward()
    np.testing.assert_allclose(y_blocked.detach().numpy(), y_plain.detach().numpy(), atol=2e-5)
    for gb, p in zip(grads_blocked, model.parameters()):
        np.testing.assert_allclose(gb, p.grad.numpy(), rtol=1e-4, atol=1e-4)


def _onednn_convolutions(layout):
    """The source layouts oneDNN's verbose log shows for a 16-channel 3x3 convolution run under `layout`."""
    code = ("import oar, oar.nn.functional as F\n"
            "F.conv2d(oar.randn(2, 16, 9, 9), oar.randn(24, 16, 3, 3), padding=1)\n")
    env = dict(os.environ, ONEDNN_VERBOSE="1", OAR_CPU_MKLDNN_CONV_LAYOUT=layout, OAR_DEVICE="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return re.findall(r"exec,cpu,convolution,([^,]+),forward_training,src_f32::blocked:(\w+)", out.stdout)


def test_the_flag_picks_the_primitive_layout():
    # plain: NCHW memory (abcd) through the GEMM implementation; blocked: a channel-blocked source (aBcd8b,
    # aBcd16b, ...) through a direct kernel; auto takes blocked at this shape
    plain, blocked, auto = (_onednn_convolutions(layout) for layout in ("plain", "blocked", "auto"))
    assert plain and all(src == "abcd" and "gemm" in impl for impl, src in plain), plain
    assert blocked and all(re.fullmatch(r"aBcd\d+b", src) and "gemm" not in impl for impl, src in blocked), blocked
    assert auto == blocked
