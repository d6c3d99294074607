"""oar.compat on an AG-news-style EmbeddingBag classifier (compat_scripts/news_embedding_bag.py): a custom
collate_fn with cumsum offsets, SGD + StepLR, and a torch.save / torch.load checkpoint dict from which
training resumes exactly. On every oar device it must learn and resume identically; its losses must equal
the CPU's to 1e-4 and, where an interpreter here imports the real PyTorch, PyTorch's."""
import re

import oar
import pytest

from test_compat import (assert_same_losses, device_runs, losses, ok, run_compat, run_torch, script,  # noqa: F401
                         torch_python)

DEVICES = oar._C.info()["devices"]
NAME = "news_embedding_bag.py"


@pytest.fixture(scope="module")
def on_oar():
    run = device_runs()
    return lambda device: run(NAME, device)


@pytest.mark.parametrize("device", DEVICES)
def test_news_classifier_learns_and_resumes_exactly(on_oar, device):
    out = on_oar(device)
    epoch_losses = losses(out)
    assert len(epoch_losses) == 6, out  # 4 epochs, then the 2 resumed ones
    assert epoch_losses[3] < 0.2 * epoch_losses[0], out
    assert epoch_losses[4:] == epoch_losses[2:4], out
    assert out.count("same as straight run: True") == 2 and "resumed weights equal: True" in out, out
    accuracy = [float(a) for a in re.findall(r"accuracy: (\d\.\d+)", out)]
    assert accuracy[-1] >= 0.9, out
    if not device.startswith("cpu"):
        assert_same_losses(out, on_oar(DEVICES[0]))


def test_news_classifier_matches_pytorch(on_oar, torch_python):
    assert_same_losses(on_oar(DEVICES[0]), ok(run_torch(torch_python, script(NAME))))
