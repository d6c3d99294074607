"""PyTorch-1.13 behaviours that generative-model scripts (GANs, diffusion models, VQ-VAEs, flows) rely on, found
by running such scripts under oar.compat (tests/python/compat_scripts/{dcgan,ddpm,vqvae,pixelcnn,glow}.py):

- autograd.grad takes torch's full signature, positions included: the WGAN-GP penalty's only_inputs=True,
  and is_grads_batched (a batch of vector-Jacobian products);
- torch.autograd.set_detect_anomaly / detect_anomaly exist (GAN scripts switch them on while debugging),
  with a nan check of the gradients a backward pass produces; torch.autograd.Variable is the pre-0.4 wrapper;
- F.one_hot refuses class values outside [0, num_classes) instead of returning all-zero rows;
- BCELoss / BCEWithLogitsLoss refuse a target whose size differs from the input's (a (B, 1) discriminator
  output against (B,) labels broadcast to (B, B) and gave a wrong loss), and BCELoss refuses inputs outside
  [0, 1] (a forgotten sigmoid);
- Module.to(memory_format=torch.channels_last) and a positional non_blocking flag.

The strict xfails at the end pin numerical differences whose fix is in C++ (kernel_primitives/, runtime/); Adam's
(1 - beta) in double and the compensated cross-entropy sum were fixed that way and are plain tests now."""
import math
import warnings

import numpy as np
import oar
import oar.nn as nn
import oar.nn.functional as F
import pytest
from torch_ref import from_torch, import_torch, to_torch


def _np(t):
    return t.detach().cpu().numpy()


# -- autograd.grad ---------------------------------------------------------------------------------------------------

def _critic(seed=1):
    rng = np.random.RandomState(seed)
    weights = {"c.w": rng.uniform(-0.5, 0.5, (4, 3, 3, 3)), "c.b": rng.uniform(-0.5, 0.5, 4),
               "l.w": rng.uniform(-0.5, 0.5, (1, 16)), "l.b": rng.uniform(-0.5, 0.5, 1)}
    x = rng.standard_normal((2, 3, 4, 4))
    return {k: v.astype(np.float32) for k, v in weights.items()}, x.astype(np.float32)


def _gradient_penalty(lib, F_, weights, x, tensor):
    w = {k: tensor(v).requires_grad_() for k, v in weights.items()}
    xi = tensor(x).requires_grad_()
    h = F_.leaky_relu(F_.conv2d(xi, w["c.w"], w["c.b"], stride=2, padding=1), 0.2)
    out = F_.linear(h.reshape(2, -1), w["l.w"], w["l.b"])
    # the WGAN-GP reference code's call, positional grad_outputs and only_inputs included
    g, = lib.autograd.grad(out, xi, lib.ones_like(out), True, True, True)
    penalty = ((g.reshape(2, -1).norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    return penalty, {k: v.grad for k, v in w.items()}


def test_gradient_penalty_with_only_inputs_matches_torch():
    torch = import_torch()
    weights, x = _critic()
    ours, our_grads = _gradient_penalty(oar, F, weights, x, lambda a: oar.tensor(a))
    theirs, their_grads = _gradient_penalty(torch, torch.nn.functional, weights, x, lambda a: to_torch(a))
    np.testing.assert_allclose(_np(ours), from_torch(theirs), rtol=1e-5)
    for k in ("c.w", "l.w"):  # the biases' penalty gradients are zero (torch: a zero tensor, here None)
        np.testing.assert_allclose(_np(our_grads[k]), from_torch(their_grads[k]), rtol=1e-4, atol=1e-6)
    # torch.autograd.grad(..., only_inputs=True) by keyword; False warns as torch's
    a = oar.tensor([1.0, 2.0], requires_grad=True)
    assert oar.autograd.grad((a * a).sum(), a, only_inputs=True)[0].tolist() == [2.0, 4.0]
    with pytest.warns(UserWarning, match="only_inputs argument is deprecated"):
        oar.autograd.grad((a * 3).sum(), [a], only_inputs=False)


def test_is_grads_batched_gives_the_jacobian_rows():
    torch = import_torch()
    x_np = np.array([1.0, 2.0, 3.0], np.float32)
    x = oar.tensor(x_np, requires_grad=True)
    unused = oar.zeros(2, requires_grad=True)
    jac, none = oar.autograd.grad(x ** 2 * x.sum(), [x, unused], oar.eye(3), is_grads_batched=True,
                                  allow_unused=True)
    tx = to_torch(x_np).requires_grad_()
    expected, = torch.autograd.grad(tx ** 2 * tx.sum(), tx, torch.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(_np(jac), from_torch(expected), rtol=1e-6)
    assert none is None
    with pytest.raises(RuntimeError, match="first dimension of each grad_output as the batch dimension"):
        oar.autograd.grad(x * 2, x, oar.ones(3), is_grads_batched=True)


# -- anomaly mode and Variable ---------------------------------------------------------------------------------------

def test_detect_anomaly_reports_nan_gradients():
    assert not oar.autograd.anomaly_mode.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = oar.autograd.detect_anomaly()
    with ctx:
        assert oar.autograd.anomaly_mode.is_anomaly_enabled()
        b = oar.tensor([0.0, 1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="returned nan values"):
            (oar.sqrt(b) * 0).sum().backward()  # 0 * inf in the backward pass
        c = oar.tensor([0.0, 1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="returned nan values"):
            oar.autograd.grad((oar.sqrt(c) * 0).sum(), c)
        d = oar.tensor([0.0, 1.0], requires_grad=True)
        oar.sqrt(d).sum().backward()  # inf is not nan: no error, as torch
        assert math.isinf(d.grad[0].item())
    assert not oar.autograd.anomaly_mode.is_anomaly_enabled()
    e = oar.tensor([0.0, 1.0], requires_grad=True)
    (oar.sqrt(e) * 0).sum().backward()  # off again: the nan reaches .grad quietly
    assert math.isnan(e.grad[0].item())


def test_set_detect_anomaly_as_function_and_context():
    oar.autograd.set_detect_anomaly(True)
    try:
        assert oar.autograd.anomaly_mode.is_anomaly_enabled()
        a = oar.tensor([1.0, 2.0], requires_grad=True)
        (a * 2).sum().backward()  # a clean backward is untouched
        assert a.grad.tolist() == [2.0, 2.0]
    finally:
        oar.autograd.set_detect_anomaly(False)
    with oar.autograd.set_detect_anomaly(True, check_nan=False):
        b = oar.tensor([0.0], requires_grad=True)
        (oar.sqrt(b) * 0).sum().backward()  # check_nan=False: no error
    assert not oar.autograd.anomaly_mode.is_anomaly_enabled()


def test_variable_is_the_legacy_tensor_wrapper():
    from oar.autograd import Variable
    t = oar.ones(2)
    v = Variable(t, requires_grad=True)
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    assert v is not t and v.requires_grad and v.is_leaf and not t.requires_grad
    v.data.add_(1)  # shares t's memory, as torch's
    assert t.tolist() == [2.0, 2.0]
    y = oar.ones(2, requires_grad=True) * 3
    assert Variable(y).grad_fn is None and not Variable(y).requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(t, volatile=True)


# -- one_hot, BCE -----------------------------------------------------------------------------------------------------

def test_one_hot_refuses_out_of_range_classes():
    assert F.one_hot(oar.tensor([0, 2, 1])).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert tuple(F.one_hot(oar.tensor([], dtype=oar.int64), 3).shape) == (0, 3)
    for bad, message in [((oar.tensor([0, 3]), 3), "smaller than num_classes"),
                         ((oar.tensor([-1, 1]), 3), "non-negative"),
                         ((oar.tensor([0, 1]), 0), "smaller than num_classes"),
                         ((oar.tensor([], dtype=oar.int64),), "empty tensor")]:
        with pytest.raises(RuntimeError, match=message):  # torch: RuntimeError
            F.one_hot(*bad)
    with pytest.raises(RuntimeError, match="index tensors"):
        F.one_hot(oar.tensor([1.0]))


def test_one_hot_traces_with_num_classes():
    traced = oar.jit.trace(lambda x, w: (F.one_hot(x, 4).float() @ w).sum(), (oar.tensor([0, 3, 1]), oar.ones(4, 2)))
    assert traced(oar.tensor([1, 1, 2]), oar.ones(4, 2)).item() == 6.0


def test_bce_losses_refuse_mismatched_sizes_as_torch():
    torch = import_torch()
    logits, labels = np.zeros((4, 1), np.float32), np.ones(4, np.float32)
    for ours, theirs, inp in [(nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), logits),
                              (nn.BCELoss(), torch.nn.BCELoss(), logits + 0.5)]:
        with pytest.raises(ValueError) as torch_error:
            theirs(to_torch(inp), to_torch(labels))
        with pytest.raises(ValueError) as our_error:
            ours(oar.tensor(inp), oar.tensor(labels))
        assert str(our_error.value).replace("oar.", "") == str(torch_error.value).replace("torch.", "")
    # same sizes: unchanged, and equal to torch's
    x = np.array([[0.2], [0.9], [0.5], [0.01]], np.float32)
    y = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)
    np.testing.assert_allclose(_np(F.binary_cross_entropy(oar.tensor(x), oar.tensor(y))),
                               from_torch(torch.nn.functional.binary_cross_entropy(to_torch(x), to_torch(y))),
                               rtol=1e-6)


def test_bce_refuses_inputs_outside_0_1():
    for bad in ([0.5, 1.5], [-0.1, 0.5], [float("nan"), 0.5]):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            F.binary_cross_entropy(oar.tensor(bad), oar.tensor([1.0, 0.0]))
    # the ends are valid: log(0) is clamped to -100, as torch
    assert F.binary_cross_entropy(oar.tensor([0.0, 1.0]), oar.tensor([1.0, 1.0])).item() == pytest.approx(50.0)


# -- Module.to --------------------------------------------------------------------------------------------------------

def test_module_to_channels_last_keeps_the_parameters():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Linear(2, 2))
    w = m[0].weight
    opt = oar.optim.SGD(m.parameters(), lr=0.1)
    assert m.to(memory_format=oar.channels_last) is m
    assert m[0].weight is w and w.is_contiguous(memory_format=oar.channels_last) and w.stride() == (27, 1, 9, 3)
    assert m[2].weight.stride() == (2, 1)  # 2-D parameters keep their layout
    m[0](oar.ones(2, 3, 5, 5)).sum().backward()
    opt.step()
    m.to("cpu", oar.float64, True)  # torch's positional non_blocking
    assert m[0].weight.dtype == oar.float64
    with pytest.raises(RuntimeError, match="rank 4"):
        nn.Conv3d(1, 1, 1).to(memory_format=oar.channels_last)


# -- numerical differences whose fix is in C++ -------------------------------------------------------------------------

def test_adam_second_moment_is_float32_exact():
    g = np.random.RandomState(0).standard_normal(64).astype(np.float32)
    p = oar.nn.Parameter(oar.zeros(64))
    opt = oar.optim.Adam([p], lr=1e-3, betas=(0.9, 0.999))
    p.grad = oar.tensor(g)
    opt.step()
    expected = (1 - 0.999) * g.astype(np.float64) ** 2
    np.testing.assert_allclose(_np(opt.state[p]["exp_avg_sq"]), expected, rtol=1e-6)


def test_cross_entropy_mean_over_many_positions_is_accurate():
    rng = np.random.RandomState(0)
    logits = rng.standard_normal((32, 2, 8, 8)).astype(np.float32)
    target = rng.randint(0, 2, (32, 8, 8))
    lp = logits.astype(np.float64) - np.log(np.exp(logits.astype(np.float64)).sum(1, keepdims=True))
    expected = -np.take_along_axis(lp, target[:, None], 1).mean()
    ours = F.cross_entropy(oar.tensor(logits), oar.tensor(target)).item()
    assert abs(ours - expected) / expected < 2e-7


def test_batch_norm_statistics_are_accurate_with_an_offset(device):
    # An input mean of 10 and std 0.1: float32 sums of x lose the spread (torch is 3.9e-6 off).
    x = (np.random.RandomState(0).standard_normal((32, 4, 8, 8)) * 0.1 + 10.0).astype(np.float32)
    y = _np(nn.BatchNorm2d(4).to(device)(oar.tensor(x, device=device)))
    x64 = x.astype(np.float64)
    mean, var = x64.mean((0, 2, 3), keepdims=True), x64.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y, (x64 - mean) / np.sqrt(var + 1e-5), atol=1.5e-5)


@pytest.mark.skipif(len(oar._C.info()["devices"]) < 2, reason="needs a second device")
def test_zero_dim_cpu_tensor_combines_with_another_device():
    device = oar._C.info()["devices"][1]
    z = oar.ones(3, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert (z - oar.tensor(2.0)).tolist() == [-1.0, -1.0, -1.0]
