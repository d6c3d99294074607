"""oar.nn normalization layers, activations, losses and distances: forwards against NumPy references written
here, gradients against finite differences (float64, on every present device), reprs, state_dict keys and
error messages; and against torch where it is importable."""
import math
import warnings

import numpy as np
import pytest

import oar
from oar_testing import T, N, close
from torch_ref import import_torch, to_torch, from_torch
from oar import nn
import oar.nn.functional as F

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(1234)


def randn(*shape):
    return RNG.standard_normal(shape)


def check_grad(f, arrays, dev, eps=1e-6, tol=1e-6, directions=2, int_args=()):
    """autograd's gradient of sum(f(*inputs) * W) against central differences along random directions."""
    ts = [T(a, dev, requires_grad=True) for a in arrays]
    out = f(*ts, *int_args)
    W = RNG.standard_normal(tuple(out.shape))
    (out * T(W, dev)).sum().backward()

    def value(xs):
        with oar.no_grad():
            return float(np.sum(N(f(*[T(x, dev) for x in xs], *int_args)) * W))
    for i, a in enumerate(arrays):
        g = N(ts[i].grad)
        assert g.shape == a.shape
        for _ in range(directions):
            d = RNG.standard_normal(a.shape)
            plus = [x + eps * d if j == i else x for j, x in enumerate(arrays)]
            minus = [x - eps * d if j == i else x for j, x in enumerate(arrays)]
            num = (value(plus) - value(minus)) / (2 * eps)
            assert abs(num - float(np.sum(g * d))) <= tol * max(1.0, abs(num)), (i, num, float(np.sum(g * d)))


# ================================================================ NumPy references
def ref_group_norm(x, G, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    xr = x.reshape(n, G, -1)
    y = ((xr - xr.mean(-1, keepdims=True)) / np.sqrt(xr.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def ref_instance_norm(x, eps=1e-5):
    xr = x.reshape(x.shape[0], x.shape[1], -1)
    return ((xr - xr.mean(-1, keepdims=True)) / np.sqrt(xr.var(-1, keepdims=True) + eps)).reshape(x.shape)


def ref_rms_norm(x, k, w=None, eps=1e-6):
    axes = tuple(range(x.ndim - k, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


def ref_lrn(x, size, alpha=1e-4, beta=0.75, k=1.0):
    C = x.shape[1]
    out = np.empty_like(x)
    for c in range(C):
        lo, hi = max(0, c - size // 2), min(C, c + (size - 1) // 2 + 1)
        s = (x[:, lo:hi] ** 2).sum(1)
        out[:, c] = x[:, c] / (k + alpha / size * s) ** beta
    return out


def softplus_np(z):
    return np.logaddexp(0, z)


def ref_ctc(lp, target, blank=0):
    """-log p(target | lp) by the textbook alpha recursion (lp: [T, C] log-probabilities)."""
    ext = [blank]
    for c in target:
        ext += [c, blank]
    L, Tn = len(ext), lp.shape[0]
    alpha = np.full(L, -np.inf)
    alpha[0] = lp[0, blank]
    if L > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, Tn):
        new = np.full(L, -np.inf)
        for s in range(L):
            terms = [alpha[s]]
            if s >= 1:
                terms.append(alpha[s - 1])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
        alpha = new
    ends = [alpha[L - 1]] + ([alpha[L - 2]] if L > 1 else [])
    return -np.logaddexp.reduce(ends)


def reduce_np(v, reduction):
    return v if reduction == "none" else (v.mean() if reduction == "mean" else v.sum())


# ================================================================ normalization
@pytest.mark.parametrize("dev", DEVICES)
def test_group_norm_forward_grad_and_module(dev):
    x = randn(2, 6, 3, 2)
    w, b = randn(6), randn(6)
    close(F.group_norm(T(x, dev), 3, T(w, dev), T(b, dev)), ref_group_norm(x, 3, w, b))
    close(F.group_norm(T(x, dev), 1), ref_group_norm(x, 1))
    check_grad(lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), [x, w, b], dev)
    m = nn.GroupNorm(3, 6, dtype=oar.float64, device=dev)
    assert repr(m) == "GroupNorm(3, 6, eps=1e-05, affine=True)"
    assert list(m.state_dict()) == ["weight", "bias"]
    close(m(T(x, dev)), ref_group_norm(x, 3))
    m2 = nn.GroupNorm(2, 6, affine=False)
    assert m2.weight is None and list(m2.state_dict()) == []
    close(nn.GroupNorm(2, 4, dtype=oar.float64, device=dev)(T(x[:, :4, :, 0], dev)), ref_group_norm(x[:, :4, :, 0], 2))


def test_group_norm_errors():
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(oar.zeros(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions"):
        F.group_norm(oar.zeros(6), 3)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(oar.zeros(1, 3, 1), 3)


@pytest.mark.parametrize("dev", DEVICES)
def test_instance_norm_forward_running_stats_and_grad(dev):
    x = randn(3, 4, 5)
    close(F.instance_norm(T(x, dev)), ref_instance_norm(x))
    check_grad(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [x, randn(4), randn(4)], dev)
    m = nn.InstanceNorm1d(4, affine=True, track_running_stats=True, momentum=0.3, dtype=oar.float64, device=dev)
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert repr(m) == "InstanceNorm1d(4, eps=1e-05, momentum=0.3, affine=True, track_running_stats=True)"
    close(m(T(x, dev)), ref_instance_norm(x))
    close(m.running_mean, 0.3 * x.mean(2).mean(0))
    close(m.running_var, 0.7 + 0.3 * x.var(2, ddof=1).mean(0))
    m.eval()
    rm, rv = N(m.running_mean), N(m.running_var)
    close(m(T(x, dev)), (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5))
    # unbatched [C, L] input, 2d and 3d variants
    close(nn.InstanceNorm1d(4)(T(x[0], dev)), ref_instance_norm(x[:1])[0])
    x4 = randn(2, 3, 4, 2)
    close(nn.InstanceNorm2d(3)(T(x4, dev)), ref_instance_norm(x4))
    x5 = randn(2, 2, 2, 3, 2)
    close(nn.InstanceNorm3d(2)(T(x5, dev)), ref_instance_norm(x5))
    close(nn.InstanceNorm3d(2)(T(x5[0], dev)), ref_instance_norm(x5[:1])[0])
    assert list(nn.InstanceNorm2d(3).state_dict()) == []


def test_instance_norm_errors_and_warning():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.InstanceNorm1d(3)(oar.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(oar.zeros(2, 3))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4"):
        nn.InstanceNorm1d(3, affine=True)(oar.zeros(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(oar.randn(2, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        F.instance_norm(oar.zeros(2, 3, 1))


@pytest.mark.parametrize("dev", DEVICES)
def test_rms_norm_and_layer_norm_options(dev):
    x = randn(2, 3, 4)
    w = randn(3, 4)
    close(F.rms_norm(T(x, dev), (3, 4), T(w, dev), eps=1e-6), ref_rms_norm(x, 2, w))
    check_grad(lambda x, w: F.rms_norm(x, [4], w, eps=1e-3), [x, randn(4)], dev)
    m = nn.RMSNorm([3, 4], dtype=oar.float64, device=dev)
    assert repr(m) == "RMSNorm((3, 4), eps=None, elementwise_affine=True)" and list(m.state_dict()) == ["weight"]
    close(m(T(x, dev)), ref_rms_norm(x, 2, eps=np.finfo(np.float64).eps))
    x32 = oar.tensor(x, dtype=oar.float32, device=dev)
    np.testing.assert_allclose(N(nn.RMSNorm(4, elementwise_affine=False, device=dev)(x32)),
                               ref_rms_norm(x.astype(np.float32), 1, eps=np.finfo(np.float32).eps), rtol=1e-5)
    assert nn.RMSNorm(4, elementwise_affine=False).weight is None
    # LayerNorm: bias=False keeps only the weight; elementwise_affine=False has no parameters
    ln = nn.LayerNorm(4, bias=False, dtype=oar.float64, device=dev)
    assert list(ln.state_dict()) == ["weight"] and ln.bias is None
    assert repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    close(ln(T(x, dev)), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))
    assert list(nn.LayerNorm(4, elementwise_affine=False).parameters()) == []
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[3\], expected input with shape \[\*, 3\]"):
        F.rms_norm(T(x, dev), 3)


@pytest.mark.parametrize("dev", DEVICES)
def test_local_response_norm(dev):
    for shape in [(2, 5, 3), (2, 6, 3, 2), (1, 4, 2, 2, 2)]:
        x = randn(*shape)
        for size in (1, 2, 3, 4):
            close(F.local_response_norm(T(x, dev), size, alpha=0.1, beta=0.6, k=2.0),
                  ref_lrn(x, size, 0.1, 0.6, 2.0))
    check_grad(lambda x: F.local_response_norm(x, 3, alpha=0.5), [randn(2, 4, 3)], dev)
    m = nn.LocalResponseNorm(2)
    assert repr(m) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        m(oar.zeros(2, 3))


@pytest.mark.parametrize("dev", DEVICES)
def test_batch_norm_3d_and_sync_batch_norm(dev):
    x = randn(2, 3, 2, 2, 3)
    m = nn.BatchNorm3d(3, dtype=oar.float64, device=dev)
    mean, var = x.mean((0, 2, 3, 4)), x.var((0, 2, 3, 4))
    close(m(T(x, dev)), (x - mean.reshape(1, 3, 1, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1, 1) + 1e-5))
    n = x.size // 3
    close(m.running_var, 0.9 + 0.1 * var * n / (n - 1))
    assert int(m.num_batches_tracked.item()) == 1
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        m(oar.zeros(2, 3, 2, 2))
    s = nn.SyncBatchNorm(3, dtype=oar.float64, device=dev)
    assert repr(s) == "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
    close(s(T(x, dev)), (x - mean.reshape(1, 3, 1, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1, 1) + 1e-5))
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        s(oar.zeros(3))
    net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm2d(3)))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(conv[1]) is nn.SyncBatchNorm and type(conv[2][0]) is nn.SyncBatchNorm
    assert conv[1].weight is net[1].weight and conv[1].running_mean is net[1].running_mean
    assert list(conv.state_dict()) == list(net.state_dict())


# ================================================================ activations
ACTIVATIONS = [  # (module, numpy reference)
    (lambda: nn.GLU(), lambda x: x[..., :2] / (1 + np.exp(-x[..., 2:]))),
    (lambda: nn.GLU(1), lambda x: x[:, :1] / (1 + np.exp(-x[:, 1:2]))),
    (lambda: nn.Hardshrink(0.3), lambda x: np.where(np.abs(x) > 0.3, x, 0)),
    (lambda: nn.Softshrink(0.3), lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0))),
    (lambda: nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (lambda: nn.LogSigmoid(), lambda x: -softplus_np(-x)),
    (lambda: nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (lambda: nn.Softmin(1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
    (lambda: nn.Softmax2d(), lambda x: np.exp(x) / np.exp(x).sum(-3, keepdims=True)),
    (lambda: nn.Mish(), lambda x: x * np.tanh(softplus_np(x))),
    (lambda: nn.Hardtanh(-0.5, 0.8), lambda x: np.clip(x, -0.5, 0.8)),
    (lambda: nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (lambda: nn.Threshold(0.2, -3.0), lambda x: np.where(x > 0.2, x, -3.0)),
    (lambda: nn.RReLU(0.1, 0.3).eval(), lambda x: np.where(x >= 0, x, 0.2 * x)),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(ACTIVATIONS)))
def test_activation_forward_and_grad(dev, case):
    make, ref = ACTIVATIONS[case]
    x = randn(3, 2, 2, 4) * 2
    m = make()
    close(m(T(x, dev)), ref(x))
    check_grad(lambda t: m(t), [x[:, :, :1]], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_prelu(dev):
    x = randn(2, 3, 4)
    m = nn.PReLU(3, init=0.1, dtype=oar.float64, device=dev)
    assert repr(m) == "PReLU(num_parameters=3)" and list(m.state_dict()) == ["weight"]
    close(m.weight, [0.1] * 3)
    w = np.array([0.1, -0.2, 0.5])
    close(F.prelu(T(x, dev), T(w, dev)), np.where(x > 0, x, x * w[None, :, None]))
    close(nn.PReLU(dtype=oar.float64, device=dev)(T(x, dev)), np.where(x > 0, x, 0.25 * x))
    check_grad(lambda x, w: F.prelu(x, w), [x, w], dev)
    check_grad(lambda x, w: F.prelu(x, w), [x, np.array([0.3])], dev)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 3 and channel size = 4."):
        F.prelu(oar.zeros(2, 4), oar.zeros(3))


@pytest.mark.parametrize("dev", DEVICES)
def test_rrelu_training_slopes_and_gradient(dev):
    x = -np.abs(randn(400)) - 0.1
    t = T(x, dev, requires_grad=True)
    m = nn.RReLU(0.1, 0.3)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3)"
    y = m(t)
    slopes = N(y) / x
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    close(t.grad, slopes)
    pos = np.abs(randn(5))
    close(F.rrelu(T(pos, dev), training=True), pos)
    with pytest.raises(ValueError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(T(x, dev), 0.5, 0.2, training=True)


@pytest.mark.parametrize("dev", DEVICES)
def test_functional_activation_extras(dev):
    x = randn(3, 4)
    close(F.softsign(T(x, dev)), x / (1 + np.abs(x)))
    close(F.tanhshrink(T(x, dev)), x - np.tanh(x))
    close(F.logsigmoid(T(np.array([-800.0, 800.0]), dev)), [-800.0, 0.0])
    close(F.softmin(T(x, dev), dim=0), np.exp(-x) / np.exp(-x).sum(0))
    g = F.gumbel_softmax(T(x, dev), tau=0.5)
    close(g.sum(-1), np.ones(3))
    logits = T(x, dev, requires_grad=True)
    h = F.gumbel_softmax(logits, hard=True)
    hn = N(h)
    assert set(np.unique(hn)) <= {0.0, 1.0} and (hn.sum(-1) == 1).all()
    (h * T(randn(3, 4), dev)).sum().backward()
    assert np.abs(N(logits.grad)).sum() > 0
    assert "F.glu" and F.glu(T(randn(2, 6), dev), 1).shape == (2, 3)


def test_activation_errors_and_reprs():
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(oar.zeros(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(oar.tensor(1.0))
    with pytest.raises(ValueError, match="lambda must be greater or equal to 0, but found to be -1"):
        F.softshrink(oar.zeros(2), -1.0)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(oar.zeros(2, 3))
    assert repr(nn.GLU()) == "GLU(dim=-1)"
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)"
    assert repr(nn.Softshrink(0.2)) == "Softshrink(0.2)"
    assert repr(nn.Softmin(1)) == "Softmin(dim=1)"
    assert repr(nn.Tanhshrink()) == "Tanhshrink()" and repr(nn.LogSigmoid()) == "LogSigmoid()"
    assert repr(nn.RReLU(inplace=True)) == "RReLU(lower=0.125, upper=0.3333333333333333, inplace=True)"
    assert repr(nn.ReLU6(inplace=True)) == "ReLU6(inplace=True)"
    assert nn.ReLU6().min_val == 0.0 and nn.ReLU6().max_val == 6.0
    with pytest.warns(FutureWarning, match="min_value"):
        assert nn.Hardtanh(min_value=-2.0).min_val == -2.0


# ================================================================ losses
LOSS_REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dev, reduction, log_target):
    x = np.log(RNG.dirichlet(np.ones(4), size=3))
    t = RNG.dirichlet(np.ones(4), size=3)
    t[0, 1] = 0.0
    tt = np.log(t + 1e-3) if log_target else t
    pw = np.exp(tt) * (tt - x) if log_target else np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0) - t * x
    want = pw.sum() / 3 if reduction == "batchmean" else reduce_np(pw, reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(nn.KLDivLoss(reduction=reduction, log_target=log_target)(T(x, dev), T(tt, dev)), want)
        check_grad(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target),
                   [x, tt if log_target else t + 0.1], dev)
    if reduction == "mean":
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            F.kl_div(T(x, dev), T(tt, dev), log_target=log_target)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
def test_embedding_and_margin_losses(dev, reduction):
    x1, x2 = randn(5, 4), randn(5, 4)
    y = np.array([1, -1, 1, -1, -1.0])
    cos = (x1 * x2).sum(1) / np.sqrt(((x1 ** 2).sum(1) + 1e-12) * ((x2 ** 2).sum(1) + 1e-12))
    want = np.where(y == 1, 1 - cos, np.maximum(cos - 0.1, 0))
    close(nn.CosineEmbeddingLoss(0.1, reduction=reduction)(T(x1, dev), T(x2, dev), T(y, dev)),
          reduce_np(want, reduction))
    check_grad(lambda a, b: F.cosine_embedding_loss(a, b, T(y, dev), margin=-0.5, reduction=reduction),
               [x1, x2], dev)
    a, b = randn(6), randn(6)
    yr = np.array([1, -1, 1, 1, -1, -1.0])
    close(nn.MarginRankingLoss(0.2, reduction=reduction)(T(a, dev), T(b, dev), T(yr, dev)),
          reduce_np(np.maximum(0, -yr * (a - b) + 0.2), reduction))
    check_grad(lambda p, q: F.margin_ranking_loss(p, q, T(yr, dev), 0.2, reduction=reduction), [a, b], dev)
    yh = np.array([1, -1, 1, -1, -1, 1.0])
    close(nn.HingeEmbeddingLoss(0.5, reduction=reduction)(T(a, dev), T(yh, dev)),
          reduce_np(np.where(yh == 1, a, np.maximum(0, 0.5 - a)), reduction))
    check_grad(lambda p: F.hinge_embedding_loss(p, T(yh, dev), 0.5, reduction=reduction), [a], dev)
    close(nn.SoftMarginLoss(reduction=reduction)(T(a, dev), T(yr, dev)),
          reduce_np(softplus_np(-yr * a), reduction))
    check_grad(lambda p: F.soft_margin_loss(p, T(yr, dev), reduction=reduction), [a], dev)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
def test_multilabel_and_multi_margin_losses(dev, reduction):
    x = randn(3, 5)
    yb = (RNG.random((3, 5)) > 0.5).astype(np.float64)
    w = np.abs(randn(5))
    ls = -(yb * -softplus_np(-x) + (1 - yb) * -softplus_np(x))
    close(nn.MultiLabelSoftMarginLoss(T(w, dev), reduction=reduction)(T(x, dev), T(yb, dev)),
          reduce_np((ls * w).mean(1), reduction))
    check_grad(lambda p: F.multilabel_soft_margin_loss(p, T(yb, dev), reduction=reduction), [x], dev)
    # multi-label margin: class lists end at the first -1; duplicates count twice (as PyTorch)
    tgt = np.array([[3, 0, -1, 1, 1], [1, 2, 4, 0, 3], [2, 2, -1, -1, 4]])
    want = []
    for n in range(3):
        js = []
        for v in tgt[n]:
            if v < 0:
                break
            js.append(v)
        s = sum(max(0, 1 - (x[n, j] - x[n, i])) for j in js for i in range(5) if i not in js)
        want.append(s / 5)
    close(nn.MultiLabelMarginLoss(reduction=reduction)(T(x, dev), oar.tensor(tgt, device=dev)),
          reduce_np(np.array(want), reduction))
    check_grad(lambda p: F.multilabel_margin_loss(p, oar.tensor(tgt, device=dev), reduction=reduction), [x], dev)
    close(F.multilabel_margin_loss(T(x[0], dev), oar.tensor(tgt[0], device=dev), reduction=reduction), want[0])
    # multi-class margin
    y = np.array([4, 0, 2])
    for p in (1, 2):
        for weight in (None, w):
            z = np.maximum(0, 0.7 - x[np.arange(3), y][:, None] + x) ** p
            if weight is not None:
                z = z * weight[y][:, None]
            z[np.arange(3), y] = 0
            m = nn.MultiMarginLoss(p, 0.7, None if weight is None else T(weight, dev), reduction=reduction)
            close(m(T(x, dev), oar.tensor(y, device=dev)), reduce_np(z.sum(1) / 5, reduction))
    check_grad(lambda q: F.multi_margin_loss(q, oar.tensor(y, device=dev), p=2, weight=T(w, dev),
                                             reduction=reduction), [x], dev)
    assert list(nn.MultiMarginLoss(weight=T(w)).state_dict()) == ["weight"]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
def test_poisson_and_gaussian_nll(dev, reduction):
    x = randn(4, 3)
    t = RNG.poisson(2.0, size=(4, 3)).astype(np.float64)
    st = np.where(t > 1, t * np.log(np.where(t > 1, t, 1)) - t + 0.5 * np.log(2 * np.pi * np.where(t > 1, t, 1)), 0)
    close(nn.PoissonNLLLoss(reduction=reduction)(T(x, dev), T(t, dev)), reduce_np(np.exp(x) - t * x, reduction))
    close(nn.PoissonNLLLoss(full=True, reduction=reduction)(T(x, dev), T(t, dev)),
          reduce_np(np.exp(x) - t * x + st, reduction))
    xp = np.abs(x) + 0.1
    close(nn.PoissonNLLLoss(log_input=False, eps=1e-3, reduction=reduction)(T(xp, dev), T(t, dev)),
          reduce_np(xp - t * np.log(xp + 1e-3), reduction))
    check_grad(lambda a: F.poisson_nll_loss(a, T(t, dev), full=True, reduction=reduction), [x], dev)
    var = np.abs(randn(4, 3)) + 0.2
    g = 0.5 * (np.log(var) + (x - t) ** 2 / var)
    m = nn.GaussianNLLLoss(reduction=reduction)
    close(m(T(x, dev), T(t, dev), T(var, dev)), reduce_np(g, reduction))
    close(nn.GaussianNLLLoss(full=True, reduction=reduction)(T(x, dev), T(t, dev), T(var, dev)),
          reduce_np(g + 0.5 * np.log(2 * np.pi), reduction))
    v1 = var[:, :1]  # homoscedastic: one variance per row, given as [N] or [N, 1]
    g1 = 0.5 * (np.log(v1) + (x - t) ** 2 / v1)
    close(m(T(x, dev), T(t, dev), T(v1[:, 0], dev)), reduce_np(g1, reduction))
    close(m(T(x, dev), T(t, dev), T(v1, dev)), reduce_np(g1, reduction))
    check_grad(lambda a, v: F.gaussian_nll_loss(a, T(t, dev), v, reduction=reduction), [x, var], dev)
    # the eps clamp is invisible to autograd (PyTorch clamps under no_grad)
    vt = T(np.full((4, 3), 1e-9), dev, requires_grad=True)
    F.gaussian_nll_loss(T(x, dev), T(t, dev), vt, reduction="sum").backward()
    close(vt.grad, 0.5 * (1 / 1e-6 - (x - t) ** 2 / 1e-12), tol=1e-6)


def test_gaussian_nll_errors():
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(oar.zeros(4, 3), oar.zeros(4, 3), oar.ones(4, 2))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(oar.zeros(4, 3), oar.zeros(4, 3), -oar.ones(4, 3))
    with pytest.raises(ValueError, match="is not valid"):
        F.gaussian_nll_loss(oar.zeros(4, 3), oar.zeros(4, 3), oar.ones(4, 3), reduction="avg")


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
def test_triplet_losses(dev, reduction):
    a, p, n = randn(5, 4), randn(5, 4), randn(5, 4)

    def pd(u, v, q=2.0, eps=1e-6):
        return (np.abs(u - v + eps) ** q).sum(-1) ** (1 / q)
    for q, swap in [(2.0, False), (1.0, True), (3.0, False)]:
        dn = pd(a, n, q)
        if swap:
            dn = np.minimum(dn, pd(p, n, q))
        want = np.maximum(pd(a, p, q) - dn + 1.0, 0)
        m = nn.TripletMarginLoss(p=q, swap=swap, reduction=reduction)
        close(m(T(a, dev), T(p, dev), T(n, dev)), reduce_np(want, reduction))
        check_grad(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=2.0, p=q, swap=swap, reduction=reduction),
                   [a, p, n], dev)
    m = nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: 1 - F.cosine_similarity(u, v),
                                         margin=0.5, swap=True, reduction=reduction)

    def cd(u, v):
        return 1 - (u * v).sum(-1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(v, axis=-1)
    want = np.maximum(cd(a, p) - np.minimum(cd(a, n), cd(p, n)) + 0.5, 0)
    close(m(T(a, dev), T(p, dev), T(n, dev)), reduce_np(want, reduction))
    close(nn.TripletMarginWithDistanceLoss(reduction=reduction)(T(a, dev), T(p, dev), T(n, dev)),
          reduce_np(np.maximum(pd(a, p) - pd(a, n) + 1, 0), reduction))


def test_loss_errors_and_defaults():
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D inputs"):
        F.triplet_margin_loss(oar.zeros(2, 3), oar.zeros(3), oar.zeros(2, 3))
    with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
        F.margin_ranking_loss(oar.zeros(3), oar.zeros(3), oar.zeros(3, 1))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(oar.zeros(3), oar.zeros(3), oar.zeros(3))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D instead"):
        nn.MultiMarginLoss(weight=oar.ones(2, 2))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(oar.zeros(2, 3), oar.zeros(2, 4, dtype=oar.int64))
    with pytest.raises(ValueError, match="reduction"):
        nn.KLDivLoss(reduction="avg")
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="batchmean")
    assert nn.HingeEmbeddingLoss().margin == 1.0 and nn.CosineEmbeddingLoss().margin == 0.0
    assert nn.MarginRankingLoss().margin == 0.0 and nn.TripletMarginLoss().p == 2.0
    assert nn.PoissonNLLLoss().log_input is True and nn.PoissonNLLLoss().eps == 1e-8
    assert nn.GaussianNLLLoss().eps == 1e-6 and nn.CTCLoss().blank == 0
    assert nn.TripletMarginWithDistanceLoss().distance_function is F.pairwise_distance
    assert nn.SoftMarginLoss(size_average=False).reduction == "sum"
    assert list(nn.KLDivLoss().state_dict()) == [] and repr(nn.CTCLoss()) == "CTCLoss()"


# ================================================================ CTC
def _ctc_case(seed=0, T_=7, N_=3, C=5):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T_, N_, C))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = [[1, 2, 2], [3], [4, 1, 4]]
    il, tl = [7, 5, 6], [3, 1, 3]
    return logits, lp, targets, il, tl


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
def test_ctc_loss_matches_dynamic_programming(dev, reduction):
    logits, lp, targets, il, tl = _ctc_case()
    per = np.array([ref_ctc(lp[:il[b], b], targets[b]) for b in range(3)])
    want = per if reduction == "none" else (per.sum() if reduction == "sum" else (per / np.array(tl)).mean())
    padded = oar.tensor([t + [0] * (3 - len(t)) for t in targets], device=dev)
    concat = oar.tensor(sum(targets, []), device=dev)
    ctc = nn.CTCLoss(reduction=reduction)
    close(ctc(T(lp, dev), padded, oar.tensor(il), oar.tensor(tl)), want)
    close(ctc(T(lp, dev), concat, il, tl), want)
    close(ctc(T(lp, dev), padded, tuple(il), tuple(tl)), want)
    # gradient with respect to the logits (through log_softmax) and to log_probs directly
    check_grad(lambda x: F.ctc_loss(F.log_softmax(x, 2), padded, il, tl, reduction=reduction), [logits], dev)
    check_grad(lambda x: F.ctc_loss(x, concat, il, tl, reduction=reduction), [lp], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_ctc_loss_blank_unbatched_empty_and_infinite(dev):
    logits, lp, targets, il, tl = _ctc_case(1)
    # another blank index
    tg = [[0, 2, 2], [3], [0, 1, 0]]
    padded = oar.tensor([t + [4] * (3 - len(t)) for t in tg], device=dev)
    per = np.array([ref_ctc(lp[:il[b], b], tg[b], blank=4) for b in range(3)])
    close(F.ctc_loss(T(lp, dev), padded, il, tl, blank=4, reduction="none"), per)
    # unbatched [T, C]
    close(F.ctc_loss(T(lp[:, 0], dev), oar.tensor(targets[0], device=dev), 7, 3), ref_ctc(lp[:, 0], targets[0]) / 3)
    # an empty target: all blanks
    close(F.ctc_loss(T(lp, dev), oar.tensor([[1], [1], [1]], device=dev), il, [0, 1, 0], reduction="none"),
          [ref_ctc(lp[:il[b], b], [] if b != 1 else [1]) for b in range(3)])
    # impossible alignment (target longer than the input allows): inf, or 0 with zero_infinity
    bad = oar.tensor([[1, 1, 1, 1]] * 3, device=dev)
    x = T(lp, dev, requires_grad=True)
    loss = F.ctc_loss(x, bad, [3, 7, 7], [4, 2, 2], reduction="none")
    assert math.isinf(N(loss)[0]) and np.isfinite(N(loss)[1:]).all()
    x2 = T(lp, dev, requires_grad=True)
    lz = F.ctc_loss(x2, bad, [3, 7, 7], [4, 2, 2], reduction="sum", zero_infinity=True)
    close(lz, N(loss)[1:].sum())
    lz.backward()
    g = N(x2.grad)
    assert np.isfinite(g).all() and np.abs(g[:, 0]).max() == 0


def test_ctc_loss_errors():
    lp = oar.zeros(5, 2, 4)
    with pytest.raises(ValueError, match="Expected input_lengths to have value at most 5, but got value 6"):
        F.ctc_loss(lp, oar.ones(2, 2, dtype=oar.int64), [6, 5], [2, 2])
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, oar.ones(2, 2, dtype=oar.int64), [5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"):
        F.ctc_loss(lp, oar.ones(2, 2, dtype=oar.int64), [5, 5], [3, 2])
    with pytest.raises(ValueError, match="blank must be in label range"):
        F.ctc_loss(lp, oar.ones(2, 2, dtype=oar.int64), [5, 5], [2, 2], blank=4)
    with pytest.raises(ValueError, match="reduction"):
        nn.CTCLoss(reduction="avg")


# ================================================================ distances
@pytest.mark.parametrize("dev", DEVICES)
def test_distances(dev):
    x1, x2 = randn(4, 5), randn(4, 5)
    for p in (2.0, 1.0, 3.0, math.inf):
        d = x1 - x2 + 1e-6
        want = np.abs(d).max(-1) if p == math.inf else (np.abs(d) ** p).sum(-1) ** (1 / p)
        close(nn.PairwiseDistance(p)(T(x1, dev), T(x2, dev)), want)
        check_grad(lambda a, b: F.pairwise_distance(a, b, p), [x1, x2], dev)
    close(F.pairwise_distance(T(x1, dev), T(x2, dev), keepdim=True).shape, (4, 1))
    close(F.pairwise_distance(T(x1, dev), T(x2[0], dev)), np.linalg.norm(x1 - x2[0] + 1e-6, axis=-1))
    cos = (x1 * x2).sum(1) / np.linalg.norm(x1, axis=1) / np.linalg.norm(x2, axis=1)
    close(nn.CosineSimilarity()(T(x1, dev), T(x2, dev)), cos)
    close(F.cosine_similarity(T(x1, dev), T(x2[:1], dev), dim=-1),
          (x1 * x2[:1]).sum(1) / np.linalg.norm(x1, axis=1) / np.linalg.norm(x2[0]))
    check_grad(lambda a, b: F.cosine_similarity(a, b, dim=0), [x1, x2], dev)
    z = F.cosine_similarity(T(np.zeros((2, 3)), dev), T(x1[:2, :3], dev))
    close(z, [0.0, 0.0])
    x = randn(5, 3)
    i, j = np.triu_indices(5, 1)
    close(F.pdist(T(x, dev)), np.linalg.norm(x[i] - x[j], axis=1))
    close(F.pdist(T(x, dev), p=1), np.abs(x[i] - x[j]).sum(1))
    check_grad(lambda a: F.pdist(a), [x], dev)
    # a zero distance has a zero (not nan) gradient, as PyTorch's norm
    xs = T(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), dev, requires_grad=True)
    F.pdist(xs).sum().backward()
    assert np.isfinite(N(xs.grad)).all()
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(oar.zeros(2, 3, 4))


# ================================================================ registry
def test_everything_is_exported():
    names = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm",
             "BatchNorm3d", "SyncBatchNorm", "GLU", "Hardshrink", "Softshrink", "Tanhshrink", "LogSigmoid",
             "Softmin", "Softmax2d", "PReLU", "RReLU", "Softsign", "KLDivLoss", "CosineEmbeddingLoss",
             "MarginRankingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "HingeEmbeddingLoss",
             "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss",
             "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "CosineSimilarity", "PairwiseDistance"]
    for n in names:
        assert n in nn.__all__ and hasattr(nn, n), n
    fnames = ["group_norm", "instance_norm", "rms_norm", "local_response_norm", "glu", "hardshrink", "softshrink",
              "tanhshrink", "logsigmoid", "softmin", "softsign", "prelu", "rrelu", "rrelu_", "gumbel_softmax",
              "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
              "triplet_margin_with_distance_loss", "hinge_embedding_loss", "soft_margin_loss",
              "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "poisson_nll_loss",
              "gaussian_nll_loss", "ctc_loss", "cosine_similarity", "pairwise_distance", "pdist"]
    for n in fnames:
        assert n in F.__all__ and callable(getattr(F, n)), n


# ================================================================ against torch
def _torch():
    return import_torch()


def _tt(torch, a, rg=False):
    return to_torch(np.asarray(a, dtype=np.float64)).requires_grad_(rg)


def test_torch_norm_layers_match():
    torch = _torch()
    x = randn(2, 6, 3, 4)
    cases = [(nn.GroupNorm(3, 6), torch.nn.GroupNorm(3, 6)),
             (nn.InstanceNorm2d(6, affine=True, track_running_stats=True),
              torch.nn.InstanceNorm2d(6, affine=True, track_running_stats=True)),
             (nn.LocalResponseNorm(3, 0.01, 0.7, 1.5), torch.nn.LocalResponseNorm(3, 0.01, 0.7, 1.5)),
             (nn.BatchNorm2d(6), torch.nn.BatchNorm2d(6))]
    for om, tm in cases:
        om.double()
        tm.double()
        for p in om.parameters():
            with oar.no_grad():
                p.copy_(T(randn(*p.shape)))
        tm.load_state_dict({k: to_torch(N(v)) for k, v in om.state_dict().items()})
        assert repr(om) == repr(tm)
        assert list(om.state_dict()) == list(tm.state_dict())
        for _ in range(2):
            xo, xt = T(x, requires_grad=True), _tt(torch, x, True)
            yo, yt = om(xo), tm(xt)
            close(yo, from_torch(yt))
            W = randn(*x.shape)
            (yo * T(W)).sum().backward()
            (yt * _tt(torch, W)).sum().backward()
            close(xo.grad, from_torch(xt.grad), 1e-8)
            for (k, po), (_, pt) in zip(om.named_parameters(), tm.named_parameters()):
                close(po.grad, from_torch(pt.grad), 1e-8)
        for k, v in tm.state_dict().items():
            close(om.state_dict()[k], from_torch(v))
        om.eval()
        tm.eval()
        close(om(T(x)), from_torch(tm(_tt(torch, x))))


def test_torch_activations_match():
    torch = _torch()
    x = randn(3, 4, 2, 2) * 2
    pairs = [(nn.GLU(1), torch.nn.GLU(1)), (nn.Hardshrink(0.7), torch.nn.Hardshrink(0.7)),
             (nn.Softshrink(0.7), torch.nn.Softshrink(0.7)), (nn.Tanhshrink(), torch.nn.Tanhshrink()),
             (nn.LogSigmoid(), torch.nn.LogSigmoid()), (nn.Softmin(1), torch.nn.Softmin(1)),
             (nn.Softmax2d(), torch.nn.Softmax2d()), (nn.Softsign(), torch.nn.Softsign()),
             (nn.PReLU(4, 0.3).double(), torch.nn.PReLU(4, 0.3).double()),
             (nn.RReLU(0.1, 0.4).eval(), torch.nn.RReLU(0.1, 0.4).eval()), (nn.Mish(), torch.nn.Mish()),
             (nn.Hardtanh(-0.3, 0.4), torch.nn.Hardtanh(-0.3, 0.4)), (nn.ReLU6(), torch.nn.ReLU6()),
             (nn.Threshold(0.1, 20), torch.nn.Threshold(0.1, 20))]
    for om, tm in pairs:
        assert repr(om) == repr(tm)
        assert list(om.state_dict()) == list(tm.state_dict())
        xo, xt = T(x, requires_grad=True), _tt(torch, x, True)
        yo, yt = om(xo), tm(xt)
        close(yo, from_torch(yt))
        W = randn(*yt.shape)
        (yo * T(W)).sum().backward()
        (yt * _tt(torch, W)).sum().backward()
        close(xo.grad, from_torch(xt.grad))


def test_torch_losses_match():
    torch = _torch()
    tF = torch.nn.functional
    a, b, c = randn(4, 5), randn(4, 5), randn(4, 5)
    y = np.array([1, -1, -1, 1.0])
    yi = np.array([2, 0, 4, 1])
    ml = np.array([[3, 0, -1, 1, 1], [1, 2, 4, 0, 3], [2, 2, -1, -1, 4], [-1, 0, 0, 0, 0]])
    lp = np.log(RNG.dirichlet(np.ones(5), size=4))
    pt = RNG.dirichlet(np.ones(5), size=4)
    var = np.abs(randn(4, 5)) + 0.1
    cnt = RNG.poisson(2.0, size=(4, 5)).astype(np.float64)
    cases = [  # (name, oar function, torch function, float inputs, other oar args, other torch args, kwargs)
        ("kl_div", F.kl_div, tF.kl_div, [lp], [T(pt)], [_tt(torch, pt)], {"reduction": "batchmean"}),
        ("kl_div_log", F.kl_div, tF.kl_div, [lp], [T(np.log(pt))], [_tt(torch, np.log(pt))],
         {"reduction": "sum", "log_target": True}),
        ("cosine_embedding", F.cosine_embedding_loss, tF.cosine_embedding_loss, [a, b], [T(y)], [_tt(torch, y)],
         {"margin": 0.1}),
        ("margin_ranking", F.margin_ranking_loss, tF.margin_ranking_loss, [a[:, 0], b[:, 0]], [T(y)],
         [_tt(torch, y)], {"margin": 0.3}),
        ("hinge", F.hinge_embedding_loss, tF.hinge_embedding_loss, [a[:, 0]], [T(y)], [_tt(torch, y)],
         {"margin": 0.5}),
        ("soft_margin", F.soft_margin_loss, tF.soft_margin_loss, [a[:, 0]], [T(y)], [_tt(torch, y)], {}),
        ("multilabel_soft", F.multilabel_soft_margin_loss, tF.multilabel_soft_margin_loss, [a],
         [T((pt > 0.2) * 1.0)], [_tt(torch, (pt > 0.2) * 1.0)], {"reduction": "none"}),
        ("multilabel_margin", F.multilabel_margin_loss, tF.multilabel_margin_loss, [a], [oar.tensor(ml)],
         [to_torch(ml)], {"reduction": "none"}),
        ("multi_margin", F.multi_margin_loss, tF.multi_margin_loss, [a], [oar.tensor(yi)], [to_torch(yi)],
         {"p": 2, "margin": 0.6}),
        ("poisson", F.poisson_nll_loss, tF.poisson_nll_loss, [a], [T(cnt)], [_tt(torch, cnt)], {"full": True}),
        ("gaussian", F.gaussian_nll_loss, tF.gaussian_nll_loss, [a, var], [], [], {"full": True}),
        ("triplet", F.triplet_margin_loss, tF.triplet_margin_loss, [a, b, c], [], [], {"swap": True, "p": 1.5}),
        ("pairwise", F.pairwise_distance, tF.pairwise_distance, [a, b], [], [], {"p": 3.0}),
        ("cosine", F.cosine_similarity, tF.cosine_similarity, [a, b], [], [], {"dim": 1}),
        ("pdist", F.pdist, tF.pdist, [a], [], [], {}),
    ]
    for name, fo, ft, floats, oargs, targs, kw in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xo = [T(f, requires_grad=True) for f in floats]
            xt = [_tt(torch, f, True) for f in floats]
            if name == "gaussian":
                yo, yt = fo(xo[0], T(cnt), xo[1], **kw), ft(xt[0], _tt(torch, cnt), xt[1], **kw)
            else:
                yo, yt = fo(*xo, *oargs, **kw), ft(*xt, *targs, **kw)
        np.testing.assert_allclose(N(yo), from_torch(yt), rtol=1e-9, atol=1e-9, err_msg=name)
        W = randn(*yt.shape)
        (yo * T(W)).sum().backward()
        (yt * _tt(torch, W)).sum().backward()
        for o, t in zip(xo, xt):
            np.testing.assert_allclose(N(o.grad), from_torch(t.grad), rtol=1e-8, atol=1e-9, err_msg=name)


def test_torch_ctc_matches():
    torch = _torch()
    logits, lp, targets, il, tl = _ctc_case(3, T_=9, N_=3, C=6)
    padded = [t + [0] * (3 - len(t)) for t in targets]
    for reduction in LOSS_REDUCTIONS:
        for zero_inf, lens in [(False, tl), (True, [3, 1, 3])]:
            ilx = [9, 5, 2] if zero_inf else il
            xo, xt = T(logits, requires_grad=True), _tt(torch, logits, True)
            yo = F.ctc_loss(F.log_softmax(xo, 2), oar.tensor(padded), ilx, lens, reduction=reduction,
                            zero_infinity=zero_inf)
            yt = tF = torch.nn.functional.ctc_loss(torch.log_softmax(xt, 2), to_torch(padded), ilx, lens,
                                                   reduction=reduction, zero_infinity=zero_inf)
            close(yo, from_torch(yt))
            W = randn(*yt.shape)
            (yo * T(W)).sum().backward()
            (tF * _tt(torch, W)).sum().backward()
            # PyTorch's gradient with respect to log_probs is not the exact derivative, but through
            # log_softmax (the gradient with respect to the logits) both agree.
            close(xo.grad, from_torch(xt.grad), 1e-8)


@pytest.mark.parametrize("dev", oar._C.info()["devices"])
def test_softplus_family_gradients_at_zero_and_far_out(dev):
    """softplus, logsigmoid, BCE-with-logits, soft_margin: gradient sigmoid(+-x), 0.5 at exactly 0 (a
    zero-initialised logit must still learn), finite and exact at |x| = 300."""
    xs = [0.0, 1.0, -1.0, -300.0, 300.0]
    sig = [1 / (1 + math.exp(-v)) for v in xs]
    softplus = [max(v, 0) + math.log1p(math.exp(-abs(v))) for v in xs]

    def grad(fn):
        x = oar.tensor(xs, dtype=oar.float64, device=dev, requires_grad=True)
        y = fn(x)
        y.sum().backward()
        return y, N(x.grad)

    y, g = grad(F.softplus)
    np.testing.assert_allclose(N(y), softplus, rtol=1e-12)
    np.testing.assert_allclose(g, sig, rtol=1e-12)
    y, g = grad(F.logsigmoid)
    np.testing.assert_allclose(N(y), [-(max(-v, 0) + math.log1p(math.exp(-abs(v)))) for v in xs], rtol=1e-12)
    np.testing.assert_allclose(g, [1 / (1 + math.exp(v)) for v in xs], rtol=1e-12)
    target = oar.tensor([1.0, 0.0, 1.0, 1.0, 0.0], dtype=oar.float64, device=dev)
    _, g = grad(lambda x: F.binary_cross_entropy_with_logits(x, target, reduction="none"))
    np.testing.assert_allclose(g, np.array(sig) - N(target), rtol=1e-12)
    _, g = grad(lambda x: F.soft_margin_loss(x, target * 2 - 1, reduction="sum"))
    np.testing.assert_allclose(g, -(N(target) * 2 - 1) / (1 + np.exp((N(target) * 2 - 1) * np.array(xs))),
                               rtol=1e-12)
    _, g = grad(lambda x: F.softplus(x, beta=2.0, threshold=10.0))
    np.testing.assert_allclose(g, [0.5, 1 / (1 + math.exp(-2)), 1 / (1 + math.exp(2)), 0.0, 1.0], rtol=1e-12,
                               atol=1e-200)


def test_softmax_takes_torch_positional_signature():
    """F.softmax/log_softmax(input, dim, _stacklevel, dtype), as PyTorch's: a call passing _stacklevel (by name or
    position) and dtype computes in that dtype."""
    torch = import_torch()
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for name in ("softmax", "log_softmax", "softmin"):
        ours = getattr(F, name)(oar.tensor(x), 1, 5, oar.float64)
        theirs = getattr(torch.nn.functional, name)(to_torch(x), 1, 5, torch.float64)
        assert ours.dtype == oar.float64
        np.testing.assert_allclose(N(ours), from_torch(theirs), rtol=1e-12)
        np.testing.assert_allclose(N(getattr(F, name)(oar.tensor(x), dim=0, _stacklevel=5)),
                                   from_torch(getattr(torch.nn.functional, name)(to_torch(x), dim=0)), rtol=1e-6)
