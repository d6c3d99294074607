"""oar.compat on ordinary PyTorch generative-model programs: a DCGAN, a DDPM with a small attention UNet and an
EMA model, a VQ-VAE, a PixelCNN with masked convolutions and a Glow flow (compat_scripts/{dcgan, ddpm, vqvae,
pixelcnn, glow}.py).

Each runs unchanged under `python -m oar.compat` on every oar device (its --device flag) and must learn; the
losses it prints on another device must equal the CPU's to 1e-4, and where an interpreter here imports the
real PyTorch, so must PyTorch's (relative). Data, initial weights and all training noise come from NumPy, so
nothing but the framework differs between the runs.
"""
import re
import subprocess

import oar
import pytest

from test_compat import (floats_after, same_as_cpu,  # noqa: F401
                         TIMEOUT_S, _no_oar_env, assert_same_losses, device_runs, losses, ok, script,  # noqa: F401
                         torch_python)

DEVICES = oar._C.info()["devices"]


@pytest.fixture(scope="module")
def on_oar():
    return device_runs()


@pytest.fixture(scope="module")
def on_torch(torch_python):
    """on_torch(script name) -> its stdout under the real PyTorch, on one thread (the reference numbers; two
    OpenMP threads on a shared 2-core machine make PyTorch's run up to 10x slower)."""
    runs = {}

    def run(name):
        if name not in runs:
            env = dict(_no_oar_env(), OMP_NUM_THREADS="1")
            runs[name] = ok(subprocess.run([torch_python, script(name)], env=env, capture_output=True, text=True,
                                           timeout=TIMEOUT_S))
        return runs[name]
    return run


# -- DCGAN ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_dcgan_trains(on_oar, device):
    out = same_as_cpu(on_oar, "dcgan.py", device)
    assert "weights_init conv std ~0.02 True bn weight mean ~1 True bn bias zero True" in out, out
    d_loss = floats_after("loss_D loss:", out)
    d_real = floats_after("D(x)", out)
    assert len(d_loss) == 11 and d_loss[-1] < d_loss[0] and d_real[-1] > d_real[0] + 0.1, out
    assert "grid shape (1, 72, 72)" in out and f"device {oar.device(device).type}" in out, out


def test_dcgan_matches_pytorch(on_oar, on_torch):
    assert_same_losses(on_oar("dcgan.py", DEVICES[0]), on_torch("dcgan.py"))


# -- DDPM ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_ddpm_learns_to_denoise(on_oar, device):
    out = same_as_cpu(on_oar, "ddpm.py", device)
    step_losses = floats_after("loss:", out)  # training steps, then the sample statistics
    assert step_losses[5] < 0.5 * step_losses[0], out
    assert floats_after("ema lerp vs mul/add max diff", out)[0] < 1e-6, out
    assert all(g > 0 for g in floats_after("grad_norm", out)), out


def test_ddpm_matches_pytorch(on_oar, on_torch):
    ours, theirs = on_oar("ddpm.py", DEVICES[0]), on_torch("ddpm.py")
    assert_same_losses(ours, theirs)
    assert re.search(r"params (\d+)", ours).group(1) == re.search(r"params (\d+)", theirs).group(1)


# -- VQ-VAE --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_vqvae_learns_and_uses_codes(on_oar, device):
    out = same_as_cpu(on_oar, "vqvae.py", device)
    recon = floats_after("recon loss:", out)
    assert recon[-1] < 0.4 * recon[0], out
    assert min(floats_after("perplexity", out)) > 3, out  # no codebook collapse
    assert "counts sum 128" in out, out


def test_vqvae_matches_pytorch(on_oar, on_torch):
    ours, theirs = on_oar("vqvae.py", DEVICES[0]), on_torch("vqvae.py")
    assert_same_losses(ours, theirs)
    assert re.findall(r"codes used (\d+)", ours) == re.findall(r"codes used (\d+)", theirs)
    assert re.search(r"hist (\[.*\])", ours).group(1) == re.search(r"hist (\[.*\])", theirs).group(1)


# -- PixelCNN ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_pixelcnn_learns_and_is_causal(on_oar, device):
    out = same_as_cpu(on_oar, "pixelcnn.py", device)
    epoch_losses = floats_after("loss:", out)[:2]
    assert epoch_losses[1] < 0.8 * epoch_losses[0], out
    assert "receptive field ok True" in out, out
    assert "sample shape (4, 1, 8, 8) values [0.0, 1.0]" in out, out


def test_pixelcnn_matches_pytorch(on_oar, on_torch):
    assert_same_losses(on_oar("pixelcnn.py", DEVICES[0]), on_torch("pixelcnn.py"))


# -- Glow ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)  # on other devices too: Normal(0., 1.)'s 0-d CPU loc/scale join them
def test_glow_learns_and_inverts(on_oar, device):
    out = same_as_cpu(on_oar, "glow.py", device)
    nll = losses(out)
    assert nll[4] < 0.8 * nll[0], out
    assert "actnorm initialized [1, 1, 1]" in out, out
    assert floats_after("round trip error:", out)[0] < 1e-4, out
    lu, slogdet = map(float, re.search(r"lu logdet vs slogdet (\S+) (\S+)", out).groups())
    assert abs(lu - slogdet) < 1e-5, out


def test_glow_matches_pytorch(on_oar, on_torch):
    assert_same_losses(on_oar("glow.py", DEVICES[0]), on_torch("glow.py"))
