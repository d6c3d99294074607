"""oar.compat on a GPT-2 decoder written in HuggingFace's modeling style (compat_scripts/hf_gpt2.py): it loads
its weights through transformers' module-by-module _load_from_state_dict loader, learns, and its greedy
(cached and uncached), repetition-penalty, top-k/top-p and beam-search generations are the same tokens as
PyTorch 1.13's, with the same losses to 1e-4 relative, where an interpreter here imports the real PyTorch."""
import re

import pytest

from test_compat import assert_same_losses, losses, ok, run_compat, run_torch, script, torch_python  # noqa: F401

GENERATIONS = ("greedy:", "greedy no-cache same:", "greedy penalty:", "topk/topp sample:", "kept per row:",
               "topk filt:", "beam:")


@pytest.fixture(scope="module")
def on_oar():
    return ok(run_compat(script("hf_gpt2.py")))


def _line(label, output):
    found = re.findall(r"^" + re.escape(label) + r" (.*)$", output, re.M)
    assert len(found) == 1, f"{label!r} printed {len(found)} times:\n{output}"
    return found[0]


def test_hf_gpt2_loads_and_learns(on_oar):
    assert _line("load errors:", on_oar) == "[]" and _line("tied after load:", on_oar) == "True"
    assert _line("cache consistency max diff < 1e-5:", on_oar) == "True"
    assert _line("greedy no-cache same:", on_oar) == "True"
    steps = losses(on_oar)
    assert len(steps) == 6 and steps[-1] < steps[0] - 0.3, on_oar


def test_hf_gpt2_matches_pytorch(on_oar, torch_python):
    theirs = ok(run_torch(torch_python, script("hf_gpt2.py")))
    assert_same_losses(on_oar, theirs)
    for label in GENERATIONS:
        assert _line(label, on_oar) == _line(label, theirs), label
