"""oar.compat on three ordinary PyTorch 1.13 programs: a timm-style Vision Transformer (vit_tiny.py), GCN /
GraphSAGE / GAT in plain PyTorch with edge_index tensors and a sparse adjacency (gnn_plain.py), and training-loop
utilities: hooks, a WGAN-GP gradient penalty, clipping, accumulation, torch.utils.data with workers, early
stopping and ReduceLROnPlateau (loop_utils.py).

Each runs unchanged under `python -m oar.compat` on every oar device (its --device flag) and must learn; the
losses it prints on another device must equal the CPU's to 1e-4, and where an interpreter here imports the real
PyTorch, so must PyTorch's (relative). Weights, data and the random draws whose values matter come from NumPy.
"""
import re

import numpy as np
import oar
import pytest

from test_compat import floats_after, same_as_cpu  # noqa: F401
from test_compat import assert_same_losses, device_runs, losses, ok, run_torch, script, torch_python  # noqa: F401

DEVICES = oar._C.info()["devices"]


@pytest.fixture(scope="module")
def on_oar():
    return device_runs()


# -- Vision Transformer ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_vit_trains_and_round_trips(on_oar, device):
    out = same_as_cpu(on_oar, "vit_tiny.py", device)
    step_losses = losses(out)
    assert len(step_losses) == 11, out  # 10 steps, then the eval loss
    assert step_losses[-1] < 0.9 * step_losses[0], out
    assert "parameter groups: [26, 10]" in out and "buffer saved: False" in out, out
    lr = floats_after("lr", out)
    assert lr[0] < lr[2] and lr[-1] == 0.0, out  # warmup, then cosine to zero
    assert "(ls1): LayerScale()" in out and "(drop_path1): Identity()" in out, out
    assert "drop path keeps about half: True, values [0.0, 2.0]" in out, out
    assert "missing: ['head.weight'] unexpected: ['extra.thing']" in out, out
    assert "reloaded model equal: True" in out and "optimizer lr restored: True" in out, out
    assert "checkpoint args: 10 3" in out, out  # argparse.Namespace saved in the checkpoint
    assert "strict load: Error(s) in loading state_dict for VisionTransformer:" in out, out


def test_vit_matches_pytorch(on_oar, torch_python):
    ours = on_oar("vit_tiny.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("vit_tiny.py")))
    assert_same_losses(ours, theirs)
    np.testing.assert_allclose(floats_after("grad norm", ours), floats_after("grad norm", theirs), rtol=1e-4)
    for label in ("top1", "top3"):
        assert floats_after(label, ours) == floats_after(label, theirs), label
    assert re.search(r"correct: \d+", ours).group(0) == re.search(r"correct: \d+", theirs).group(0)
    assert ours.split("buffer saved")[0] == theirs.split("buffer saved")[0]  # print(model), line for line
    tail = lambda text: text.split("correct:")[1]  # noqa: E731  DropPath, checkpoint and load_state_dict lines
    assert tail(ours) == tail(theirs)


# -- graph networks ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_gnns_learn(on_oar, device):
    out = same_as_cpu(on_oar, "gnn_plain.py", device)
    for check in ("inverse in range: True", "degrees agree: True", "adjacency: True (200, 200) 2400 True",
                  "sparse row sums agree: True", "neighbour means agree: True",
                  "segment softmax = sparse softmax: True", "with dropout, finite: True",
                  "negative samples in range: True reproducible: True"):
        assert check in out, (check, out)
    for kind in ("gcn", "sage", "gat"):
        epoch_losses = [float(v) for v in re.findall(kind + r" epoch \d+ loss (\d+\.\d+)", out)]
        assert len(epoch_losses) == 4 and epoch_losses[-1] < 0.3 * epoch_losses[0], (kind, out)
        train, val, test = (floats_after(f"{kind} accuracy: train", out)[0], floats_after("val", out.split(
            f"{kind} accuracy:")[1])[0], floats_after("test", out.split(f"{kind} accuracy:")[1])[0])
        assert train > 0.9 and val > 0.7 and test > 0.7, (kind, out)
    link = [float(v) for v in re.findall(r"link prediction step \d+ loss (\d+\.\d+)", out)]
    assert len(link) == 8, out
    assert link[-1] < 0.3 * link[0], out


def test_gnns_match_pytorch(on_oar, torch_python):
    ours = on_oar("gnn_plain.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("gnn_plain.py")))
    assert_same_losses(ours, theirs)
    for kind in ("gcn", "sage", "gat"):
        line = kind + r" accuracy: .*"
        assert re.search(line, ours).group(0) == re.search(line, theirs).group(0), kind
    assert re.search(r"highest degrees: .*", ours).group(0) == re.search(r"highest degrees: .*", theirs).group(0)


# -- training-loop utilities -------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_loop_utilities(on_oar, device):
    out = same_as_cpu(on_oar, "loop_utils.py", device)
    assert "pre-hook saw [(16, 8)]" in out and "gradient after zero_grad(set_to_none=True): None" in out, out
    penalties = floats_after("penalty", out)
    assert len(penalties) == 4 and penalties[-1] < penalties[0], out
    assert "gradients clipped: True" in out, out
    assert "backward(inputs=) reached only the chosen weight: True True" in out, out
    assert "split: 200 40 reproducible: True" in out and "concat: 12 21 [10, 12]" in out, out
    assert "batches: 12 balanced classes: True batch keys: ['idx', 'x', 'y'] (16, 8) list" in out, out
    val = floats_after("validation loss", out)
    assert val[-1] < 0.3 * val[0], out
    lr = floats_after("lr", out)
    assert lr[0] == 0.1 and lr[-1] < 0.01, out  # ReduceLROnPlateau halved it several times
    assert "kept state is a copy: True batches tracked:" in out, out
    assert "reproducible: True True True 7" in out, out
    assert "(temperature): ParameterList(  (0): Parameter containing: [" in out, out


def test_loop_utilities_match_pytorch(on_oar, torch_python):
    ours = on_oar("loop_utils.py", DEVICES[0])
    theirs = ok(run_torch(torch_python, script("loop_utils.py")))
    assert_same_losses(ours, theirs)
    for label in ("penalty", "weight norm", "validation loss", "lr", "restored best: validation loss",
                  "halved weights:", "activation sum", "grad_input sum", "grad_output sum"):
        np.testing.assert_allclose(floats_after(label, ours), floats_after(label, theirs), rtol=1e-4,
                                   err_msg=label)
    # the printed tensors and modules, except the dtype name inside ParameterList's line (oar's dtype repr)
    f32 = repr(oar.float32)
    strip = (lambda text: [line.replace(f32, "torch.float32") for line in text.splitlines()
                           if not re.search(r"\d+\.\d{4,}", line)])
    assert strip(ours) == strip(theirs)
