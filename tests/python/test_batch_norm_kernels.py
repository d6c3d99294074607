"""Batch norm forward and backward against a float64 NumPy reference on every device, over the shapes that
pick different CPU kernels: a spatial extent of 16 or more (plugins/cpu_mkldnn/ops/batch_norm.cpp, one
channel per thread, chunks of 2048), below 16 and [N, C] (oneDNN), runs longer than one chunk, strided
inputs, no affine parameters, eval mode, and a mean far from zero against a small spread."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F


def reference(x, w, b, gy, eps, mean=None, var=None):
    """y, batch mean, biased batch variance and the gradients of sum(y * gy), in float64."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    xd = x.astype(np.float64)
    m = xd.mean(axes) if mean is None else mean.astype(np.float64)
    v = xd.var(axes) if var is None else var.astype(np.float64)
    inv = 1 / np.sqrt(v + eps)
    xhat = (xd - m.reshape(shape)) * inv.reshape(shape)
    wd = np.ones(x.shape[1]) if w is None else w.astype(np.float64)
    bd = np.zeros(x.shape[1]) if b is None else b.astype(np.float64)
    y = xhat * wd.reshape(shape) + bd.reshape(shape)
    g = gy.astype(np.float64)
    n = x.size // x.shape[1]
    db = g.sum(axes)
    dw = (g * xhat).sum(axes)
    if mean is None:  # batch statistics: the gradient flows through them
        dx = (wd * inv).reshape(shape) * (g - db.reshape(shape) / n - xhat * dw.reshape(shape) / n)
    else:
        dx = (wd * inv).reshape(shape) * g
    return y, m, v, dx, dw, db


SHAPES = [
    (32, 64, 8, 8),     # S = 64: the channel kernel
    (4, 3, 50, 50),     # S = 2500: two chunks per block
    (2, 5, 4, 4),       # S = 16: the smallest the channel kernel takes
    (3, 6, 3, 5),       # S = 15: oneDNN
    (16, 12),           # BatchNorm1d on [N, C]
    (2, 4, 3, 4, 5),    # BatchNorm3d
    (5, 7, 33),         # BatchNorm1d over a sequence
]


def _t(a, device, grad=False):
    return oar.tensor(a, device=device, requires_grad=grad)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("affine", [True, False])
def test_training_forward_and_backward(device, shape, affine):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    gy = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(shape[1]).astype(np.float32) if affine else None
    b = rng.standard_normal(shape[1]).astype(np.float32) if affine else None
    xt = _t(x, device, True)
    wt = _t(w, device, True) if affine else None
    bt = _t(b, device, True) if affine else None
    rm, rv = oar.zeros(shape[1], device=device), oar.ones(shape[1], device=device)
    y = F.batch_norm(xt, rm, rv, wt, bt, training=True, momentum=0.5, eps=1e-5)
    (y * _t(gy, device)).sum().backward()
    ry, m, v, dx, dw, db = reference(x, w, b, gy, 1e-5)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ry, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(xt.grad.cpu().numpy(), dx, rtol=1e-4, atol=1e-5 * np.abs(dx).max())
    if affine:
        np.testing.assert_allclose(wt.grad.cpu().numpy(), dw, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bt.grad.cpu().numpy(), db, rtol=1e-4, atol=1e-4)
    # running statistics: momentum 0.5 of the batch mean and the unbiased variance
    n = x.size // shape[1]
    np.testing.assert_allclose(rm.cpu().numpy(), 0.5 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.cpu().numpy(), 0.5 + 0.5 * v * n / (n - 1), rtol=1e-5)


@pytest.mark.parametrize("shape", [(8, 4, 6, 6), (3, 5, 40, 70)], ids=lambda s: "x".join(map(str, s)))
def test_eval_mode_uses_running_statistics(device, shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    gy = rng.standard_normal(shape).astype(np.float32)
    w, b = rng.standard_normal(shape[1]).astype(np.float32), rng.standard_normal(shape[1]).astype(np.float32)
    mean, var = rng.standard_normal(shape[1]).astype(np.float32), rng.uniform(0.5, 2, shape[1]).astype(np.float32)
    xt = _t(x, device, True)
    y = F.batch_norm(xt, _t(mean, device), _t(var, device), _t(w, device), _t(b, device), training=False, eps=1e-3)
    (y * _t(gy, device)).sum().backward()
    ry, _, _, dx, _, _ = reference(x, w, b, gy, 1e-3, mean, var)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ry, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xt.grad.cpu().numpy(), dx, rtol=1e-5, atol=1e-5)


def test_strided_input_and_gradient(device):
    """A channels-last tensor seen as NCHW (no dense NCHW copy exists) and a strided output gradient."""
    rng = np.random.default_rng(3)
    nhwc = rng.standard_normal((4, 20, 20, 8)).astype(np.float32)
    x = nhwc.transpose(0, 3, 1, 2)
    gy = rng.standard_normal((4, 8, 20, 40)).astype(np.float32)
    xt = _t(nhwc, device, True)
    y = F.batch_norm(xt.permute(0, 3, 1, 2), None, None, training=True)
    (y * _t(gy, device)[..., ::2]).sum().backward()
    ry, _, _, dx, _, _ = reference(x, None, None, gy[..., ::2], 1e-5)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ry, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(xt.grad.cpu().numpy().transpose(0, 3, 1, 2), dx, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(16, 3, 8, 8), (16, 3, 3, 3), (64, 3)], ids=lambda s: "x".join(map(str, s)))
def test_large_mean_small_spread(device, shape):
    """Mean 1000, std 0.01: the statistics must not come from float32 sums of x."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 0.01 + 1000).astype(np.float32)
    y = F.batch_norm(_t(x, device), None, None, training=True)
    ry = reference(x, None, None, np.zeros_like(x), 1e-5)[0]
    np.testing.assert_allclose(y.cpu().numpy(), ry, atol=5e-3)


def test_float64_goes_through_the_same_api(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5, 5))
    y = F.batch_norm(oar.tensor(x, device=device), None, None, training=True)
    assert y.dtype == oar.float64
    np.testing.assert_allclose(y.cpu().numpy(), reference(x, None, None, x, 1e-5)[0], rtol=1e-12, atol=1e-12)


def test_matches_torch(torch):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 16, 12, 12)).astype(np.float32)
    ours, theirs = oar.nn.BatchNorm2d(16), torch.nn.BatchNorm2d(16)
    xo = oar.tensor(x, requires_grad=True)
    xt = torch.tensor(x.tolist(), requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(yo.detach().numpy(), np.array(yt.detach().tolist()), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xo.grad.numpy(), np.array(xt.grad.tolist()), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.running_var.numpy(), np.array(theirs.running_var.tolist()), rtol=1e-5)
