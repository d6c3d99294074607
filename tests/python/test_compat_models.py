"""oar.compat on ordinary PyTorch model programs: an LSTM tagger, a Transformer classifier, a VAE, a minGPT-style
character model and a CNN + BiGRU + CRF tagger.

Each program in compat_scripts/ runs unchanged under `python -m oar.compat`
on every oar device (its --device flag) and must learn; the losses it prints
on another device must equal the CPU's to 1e-4, and where an interpreter here
imports the real PyTorch, so must PyTorch's (relative). The programs draw data,
initial weights and (the VAE) training noise from NumPy, so nothing but the
framework differs between the runs.
"""
import re

import numpy as np
import oar
import pytest

from test_compat import (floats_after, same_as_cpu,  # noqa: F401
                         assert_same_losses, device_runs, digits_npz, losses, ok, run_compat, run_torch,  # noqa: F401
                         script, torch_python)

DEVICES = oar._C.info()["devices"]


@pytest.fixture(scope="module")
def on_oar(digits_npz):
    """on_oar(script name, device) -> its stdout under oar.compat; each run once per module."""
    return device_runs(lambda name: ["--data", digits_npz] if name == "vae.py" else [])


# -- packed-sequence bidirectional LSTM tagger ---------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_lstm_tagger_learns(on_oar, device):
    out = same_as_cpu(on_oar, "lstm_tagger.py", device)
    epoch_losses = losses(out)
    assert len(epoch_losses) == 5 and epoch_losses[-1] < 0.8 * epoch_losses[0], out
    accuracy = floats_after("accuracy:", out)
    assert accuracy[-1] > accuracy[0] and accuracy[-1] > 0.5, out
    # Adam never moves the padding_idx row: its gradient is always zero
    assert "padding row still zero: True" in out


def test_lstm_tagger_matches_pytorch(on_oar, torch_python):
    ours = on_oar("lstm_tagger.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("lstm_tagger.py")))
    assert_same_losses(ours, theirs)
    np.testing.assert_allclose(floats_after("accuracy:", ours), floats_after("accuracy:", theirs), atol=0.01)


# -- Transformer encoder classifier ------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_transformer_classifier_learns(on_oar, device):
    out = same_as_cpu(on_oar, "transformer_classifier.py", device)
    epoch_losses = losses(out)
    assert len(epoch_losses) == 7, out  # 6 epochs, then the test loss
    assert epoch_losses[-2] < 0.5 * epoch_losses[0], out
    assert floats_after("accuracy:", out)[-1] >= 0.8, out
    # OneCycleLR: lr rises then anneals to ~max_lr / 25e4; beta1 falls to 0.85 then climbs back toward 0.95
    lr, beta1 = floats_after("lr", out), floats_after("beta1", out)
    assert max(lr) > 3e-3 and lr[-1] < 1e-4, out
    assert min(beta1) < 0.86 and beta1[-1] > 0.94, out
    assert all(g > 0 for g in floats_after("grad norm", out))


def test_transformer_classifier_matches_pytorch(on_oar, torch_python):
    ours = on_oar("transformer_classifier.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("transformer_classifier.py")))
    assert_same_losses(ours, theirs)
    for label in ("grad norm", "lr", "beta1"):
        np.testing.assert_allclose(floats_after(label, ours), floats_after(label, theirs), rtol=1e-3,
                                   err_msg=label)


# -- VAE with torch.distributions -----------------------------------------------------------------------------------

MC_LABEL = "Monte Carlo with rsample:"
POSTERIOR_MEAN_LABEL = "at the posterior mean:"


@pytest.mark.parametrize("device", DEVICES)
def test_vae_learns(on_oar, device):
    out = same_as_cpu(on_oar, "vae.py", device)
    epoch_losses = losses(out)
    assert len(epoch_losses) == 6 and epoch_losses[-1] < 0.7 * epoch_losses[0], out
    reconstruction, kl = floats_after("reconstruction", out), floats_after("kl", out)
    np.testing.assert_allclose(np.add(reconstruction, kl), epoch_losses, rtol=1e-5)
    assert all(k > 0 for k in kl), out
    # -ELBO of 64 binary pixels: above 0 and below 64*log(2), a fair coin per pixel
    for label in (MC_LABEL, POSTERIOR_MEAN_LABEL):
        assert 0 < floats_after(label, out)[0] < 64 * np.log(2), out


def test_vae_matches_pytorch(on_oar, digits_npz, torch_python):
    ours = on_oar("vae.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("vae.py"), "--data", digits_npz))
    assert_same_losses(ours, theirs)
    # after training, evaluated once on held-out data: float rounding through the ReLUs gives ~5e-5 here
    np.testing.assert_allclose(floats_after(POSTERIOR_MEAN_LABEL, ours), floats_after(POSTERIOR_MEAN_LABEL, theirs),
                               rtol=5e-4)
    # the Monte Carlo estimate uses each framework's own random stream: close, not equal
    np.testing.assert_allclose(floats_after(MC_LABEL, ours), floats_after(MC_LABEL, theirs), rtol=2e-2)


def test_vae_trains_with_rsample(digits_npz):
    """Training with q.rsample() itself (oar's random stream): it learns as it does with NumPy's noise."""
    out = ok(run_compat(script("vae.py"), "--data", digits_npz, "--noise", "framework", "--epochs", "3"))
    epoch_losses = losses(out)
    assert epoch_losses[2] < 0.8 * epoch_losses[0], out
    assert 0 < floats_after(MC_LABEL, out)[0] < 64 * np.log(2)


# -- minGPT-style character model -----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_char_gpt_learns(on_oar, device):
    out = same_as_cpu(on_oar, "char_gpt.py", device)
    step_losses = losses(out)
    assert len(step_losses) == 9 and step_losses[-1] < 0.3 * step_losses[0], out
    assert "weights tied: True" in out and "parameter groups: [8, 20]" in out, out
    assert "all in the vocabulary: True" in out, out
    assert all(0 < g for g in floats_after("grad norm", out)), out


def test_char_gpt_matches_pytorch(on_oar, torch_python):
    ours = on_oar("char_gpt.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("char_gpt.py")))
    assert_same_losses(ours, theirs)
    np.testing.assert_allclose(floats_after("grad norm", ours), floats_after("grad norm", theirs), rtol=1e-3)
    # generate(top_k=1): topk filtering leaves one candidate, which multinomial must draw
    greedy = [line for line in ours.splitlines() if line.startswith("greedy sample:")]
    assert greedy and greedy[0] in theirs.splitlines(), (ours, theirs)


# -- character CNN + BiGRU + CRF tagger -------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_crf_tagger_learns(on_oar, device):
    out = same_as_cpu(on_oar, "crf_tagger.py", device)
    epoch_losses = losses(out)
    assert len(epoch_losses) == 6 and epoch_losses[-1] < 0.8 * epoch_losses[0], out
    accuracy = floats_after("viterbi accuracy:", out)
    assert accuracy[-1] > accuracy[0] + 0.2, out


def test_crf_tagger_matches_pytorch(on_oar, torch_python):
    ours = on_oar("crf_tagger.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("crf_tagger.py")))
    assert_same_losses(ours, theirs)
    np.testing.assert_allclose(floats_after("viterbi accuracy:", ours), floats_after("viterbi accuracy:", theirs),
                               atol=0.01)
