"""The torch.nn names added beside the common layers: padding layers and F.pad(mode='circular'), nn.parallel
(DataParallel, data_parallel), Bilinear / F.bilinear, FeatureAlphaDropout, lazy modules, NLLLoss2d,
AdaptiveLogSoftmaxWithLoss, the torch.nn.modules package paths and torch.nn.grad.

Outputs and gradients are compared with NumPy (np.pad's constant / reflect / edge / wrap modes and index maps
for the paddings, einsum for bilinear) and, where PyTorch 1.13 can be imported, with PyTorch (same weights,
crossing as lists), in float64 on every device; bad input must raise typed errors (no torch needed)."""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oar
from oar import nn
import oar.nn.functional as F

from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]
pytestmark = [pytest.mark.filterwarnings("ignore:Lazy modules are a new feature"),  # torch's, at construction
              pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")]  # zero-width ASM projection
RNG = np.random.default_rng(20240611)
HERE = os.path.dirname(os.path.abspath(__file__))
OAR_PATH = os.path.abspath(os.environ.get("TEST_OAR_PYTHONPATH") or os.path.join(HERE, "..", "..", "build", "python"))


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def T(a, dev, grad=False, dtype=oar.float64):
    return oar.tensor(np.asarray(a), dtype=dtype, device=dev, requires_grad=grad)


def N(t):
    return t.detach().cpu().numpy().copy()


def randn(*shape):
    return RNG.standard_normal(shape)


def close(got, want, tol=1e-10, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)


# ---------------------------------------------------------------- padding: NumPy references
_NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _np_widths(pads, ndim):
    """F.pad's (left, right, top, bottom, ...) as np.pad's per-dim ((before, after), ...)."""
    k = len(pads) // 2
    w = [(0, 0)] * (ndim - k)
    for i in reversed(range(k)):
        w.append((pads[2 * i], pads[2 * i + 1]))
    return w


def np_pad(x, pads, mode, value=0.0):
    """F.pad in NumPy; negative pads crop first (PyTorch's meaning), the positive ones then pad."""
    widths = _np_widths(pads, x.ndim)
    crop = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))
    x = x[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=_NP_MODE[mode])


def np_pad_grad(shape, pads, mode, w):
    """The gradient of sum(pad(x) * w) for x of shape: every output position adds its weight to the input
    element it copies (the index map is np_pad of the element numbers; constant fill positions read none)."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        src = np_pad(idx, pads, "constant", value=-1)
    else:
        src = np_pad(idx, pads, mode)
    keep = src >= 0
    return np.bincount(src[keep].ravel(), weights=w[keep].ravel(), minlength=idx.size).reshape(shape)


def _check_pad(y, x_np, xo, pads, mode, value=0.0):
    ref = np_pad(x_np, pads, mode, value)
    close(N(y), ref, what=f"{mode} {pads} forward")
    w = randn(*ref.shape)
    (y * T(w, xo.device)).sum().backward()
    close(N(xo.grad), np_pad_grad(x_np.shape, pads, mode, w), what=f"{mode} {pads} grad")


PAD_CASES = [
    # (module class, padding argument, F.pad tuple, input shape)
    (nn.ConstantPad1d, 2, (2, 2), (2, 3, 5)),
    (nn.ConstantPad1d, (1, 3), (1, 3), (3, 4)),
    (nn.ConstantPad2d, (1, 0, 2, 3), (1, 0, 2, 3), (2, 2, 3, 4)),
    (nn.ConstantPad3d, 1, (1,) * 6, (1, 2, 2, 3, 2)),
    (nn.ZeroPad1d, (0, 2), (0, 2), (2, 2, 4)),
    (nn.ZeroPad2d, 2, (2, 2, 2, 2), (2, 3, 3)),
    (nn.ZeroPad2d, (1, 2, 0, 3), (1, 2, 0, 3), (2, 1, 3, 3)),
    (nn.ZeroPad3d, (1, 0, 0, 1, 2, 0), (1, 0, 0, 1, 2, 0), (2, 2, 3, 2)),
    (nn.ReflectionPad1d, 3, (3, 3), (2, 3, 5)),
    (nn.ReflectionPad1d, (0, 2), (0, 2), (3, 4)),
    (nn.ReflectionPad2d, (1, 2, 2, 0), (1, 2, 2, 0), (2, 2, 3, 4)),
    (nn.ReflectionPad2d, 1, (1,) * 4, (3, 2, 3)),
    (nn.ReflectionPad3d, (1, 1, 0, 2, 1, 0), (1, 1, 0, 2, 1, 0), (1, 2, 2, 3, 3)),
    (nn.ReplicationPad1d, (4, 1), (4, 1), (2, 3, 2)),
    (nn.ReplicationPad2d, 2, (2,) * 4, (2, 2, 3, 2)),
    (nn.ReplicationPad2d, (0, 1, 3, 0), (0, 1, 3, 0), (2, 3, 3)),
    (nn.ReplicationPad3d, (1, 2, 0, 1, 2, 1), (1, 2, 0, 1, 2, 1), (1, 1, 2, 2, 3)),
    (nn.CircularPad1d, (2, 3), (2, 3), (2, 3, 4)),
    (nn.CircularPad1d, 1, (1, 1), (3, 4)),
    (nn.CircularPad2d, (1, 2, 3, 0), (1, 2, 3, 0), (2, 2, 3, 4)),
    (nn.CircularPad2d, 2, (2,) * 4, (2, 3, 3)),
    (nn.CircularPad3d, (1, 0, 2, 1, 0, 2), (1, 0, 2, 1, 0, 2), (1, 2, 2, 3, 2)),
]

_MODE_OF = {"Constant": "constant", "Zero": "constant", "Reflection": "reflect", "Replication": "replicate",
            "Circular": "circular"}


def _mode(cls):
    return next(m for prefix, m in _MODE_OF.items() if cls.__name__.startswith(prefix))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("cls,padding,pads,shape", PAD_CASES, ids=[f"{c[0].__name__}-{c[1]}-{len(c[3])}d"
                                                                 for c in PAD_CASES])
def test_padding_layers_match_numpy(dev, cls, padding, pads, shape):
    mode = _mode(cls)
    x = randn(*shape)
    value = 0.0
    if cls.__name__.startswith("Constant"):
        value = -1.5
        m = cls(padding, value)
    else:
        m = cls(padding)
    assert m.padding == tuple(pads)
    xo = T(x, dev, grad=True)
    y = m(xo)
    assert y.device == xo.device and y.dtype == oar.float64
    _check_pad(y, x, xo, pads, mode, value)
    # F.pad gives the same, with the same gradient
    xo2 = T(x, dev, grad=True)
    _check_pad(F.pad(xo2, pads, mode, value) if mode == "constant" else F.pad(xo2, pads, mode), x, xo2, pads, mode,
               value)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(-1, 2), (2, -1), (-1, -1), (0, -2)])
def test_pad_negative_crops_then_pads(dev, mode, pads):
    x = randn(2, 3, 5)
    xo = T(x, dev, grad=True)
    _check_pad(F.pad(xo, pads, mode), x, xo, pads, mode)


@pytest.mark.parametrize("dev", DEVICES)
def test_pad_circular_full_wrap_and_float32(dev):
    x = randn(1, 2, 3, 4).astype(np.float32)
    y = F.pad(T(x, dev, dtype=oar.float32), (4, 4, 3, 3), mode="circular")  # padding == size: wraps once exactly
    assert y.dtype == oar.float32
    np.testing.assert_array_equal(N(y), np.pad(x, [(0, 0), (0, 0), (3, 3), (4, 4)], mode="wrap"))


@pytest.mark.parametrize("dev", DEVICES)
def test_padding_layers_in_a_model_train(dev):
    model = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(2, 3, 3), nn.ReLU(), nn.CircularPad2d((1, 1, 0, 0)),
                          nn.ZeroPad2d((0, 0, 1, 1)), nn.Conv2d(3, 1, 3)).to(device=dev, dtype=oar.float64)
    x = T(randn(2, 2, 5, 5), dev)
    opt = oar.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert model(x).shape == (2, 1, 5, 5) and losses[-1] < losses[0]


def test_padding_layers_repr():
    assert repr(nn.ZeroPad2d(2)) == "ZeroPad2d((2, 2, 2, 2))"
    assert repr(nn.ZeroPad1d((1, 2))) == "ZeroPad1d((1, 2))"
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"
    assert repr(nn.ConstantPad3d(1, 0.0)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0.0)"
    assert repr(nn.ReflectionPad2d((1, 2, 3, 4))) == "ReflectionPad2d((1, 2, 3, 4))"
    assert repr(nn.ReplicationPad3d(1)) == "ReplicationPad3d((1, 1, 1, 1, 1, 1))"
    assert repr(nn.CircularPad1d(2)) == "CircularPad1d((2, 2))"
    assert repr(nn.Sequential(nn.ZeroPad2d(1))) == "Sequential(\n  (0): ZeroPad2d((1, 1, 1, 1))\n)"


@pytest.mark.parametrize("dev", DEVICES)
def test_padding_errors(dev):
    x3 = T(randn(1, 2, 3), dev)
    with pytest.raises(oar.ShapeError, match="Padding size should be less than|must be smaller than"):
        nn.ReflectionPad1d(3)(x3)  # reflect padding must be < the dim size (3)
    with pytest.raises(RuntimeError):
        F.pad(x3, (0, 3), mode="reflect")
    with pytest.raises(oar.ShapeError, match="wrapping around more than once"):
        nn.CircularPad1d((4, 0))(x3)
    with pytest.raises(oar.ShapeError, match="empty dimension"):
        F.pad(x3, (-2, -2), mode="circular")
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.CircularPad1d(1)(T(randn(1, 1, 2, 3), dev))
    with pytest.raises(oar.ShapeError, match="Invalid padding size"):
        F.pad(T(randn(2, 3), dev), (1, 1, 1, 1), mode="circular")
    # PyTorch's ranks for reflect / replicate: 1-D padding of 2-D or 3-D inputs, 2-D of 3-D or 4-D, ...
    with pytest.raises(NotImplementedError, match="Only 2D, 3D, 4D, 5D padding"):
        nn.ReflectionPad1d(1)(T(randn(1, 1, 2, 3), dev))
    with pytest.raises(NotImplementedError, match="Only 2D, 3D, 4D, 5D padding"):
        nn.ReplicationPad2d(1)(T(randn(2, 3), dev))
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode"):
        F.pad(x3, (1, 1), mode="symmetric")
    with pytest.raises(oar.ShapeError, match="divisible by 2"):
        F.pad(x3, (1, 1, 1))
    with pytest.raises(oar.ShapeError, match="two times the input dimension"):
        F.pad(x3, (1,) * 8)
    with pytest.raises(RuntimeError, match="doesn't take in value"):
        F.pad(x3, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(TypeError):
        F.pad(x3, (1.5, 1))
    # constructor arguments
    with pytest.raises(ValueError, match="tuple of 4 ints"):
        nn.ReflectionPad2d((1, 2, 3))
    with pytest.raises(ValueError, match="tuple of 2 ints"):
        nn.ConstantPad1d((1, 2, 3), 0.0)
    with pytest.raises(TypeError):
        nn.ZeroPad2d(1.5)
    with pytest.raises(TypeError):
        nn.ReplicationPad1d("2")
    # ShapeError is both a RuntimeError (PyTorch's type) and a ValueError
    assert issubclass(oar.ShapeError, RuntimeError) and issubclass(oar.ShapeError, ValueError)


TORCH_PAD_MODULES = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d",
                     "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]


@pytest.mark.parametrize("dev", DEVICES)
def test_padding_layers_match_torch(torch, dev):
    for cls, padding, pads, shape in PAD_CASES:
        x = randn(*shape)
        mode = _mode(cls)
        args = (padding, 0.75) if cls.__name__.startswith("Constant") else (padding,)
        om = cls(*args)
        xo, xt = T(x, dev, grad=True), to_torch(x).requires_grad_()
        yo = om(xo)
        if cls.__name__ in TORCH_PAD_MODULES:
            tm = getattr(torch.nn, cls.__name__)(*args)
            yt = tm(xt)
            assert repr(om) == repr(tm)
        elif mode == "circular" and len(shape) == len(pads) // 2 + 1:  # torch 1.13: no unbatched circular
            yt = torch.nn.functional.pad(xt.unsqueeze(0), pads, mode="circular").squeeze(0)
        else:  # ZeroPad1d/3d, CircularPad*: PyTorch 2's; torch 1.13 has their F.pad
            yt = torch.nn.functional.pad(xt, pads, mode=mode)
        close(N(yo), from_torch(yt), what=cls.__name__)
        w = randn(*from_torch(yt).shape)
        (yo * T(w, dev)).sum().backward()
        (yt * to_torch(w)).sum().backward()
        close(N(xo.grad), from_torch(xt.grad), what=f"{cls.__name__} grad")


def test_pad_negative_matches_torch(torch):
    x = randn(2, 3, 5)
    for mode in ("constant", "reflect", "replicate", "circular"):
        for pads in [(-1, 2), (2, -1), (-1, -1), (0, -2)]:
            close(N(F.pad(T(x, "cpu:0"), pads, mode)), from_torch(torch.nn.functional.pad(to_torch(x), pads,
                                                                                            mode=mode)))


# ---------------------------------------------------------------- Bilinear
@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_numpy(dev, lead, bias):
    x1, x2 = randn(*lead, 3), randn(*lead, 4)
    w, b = randn(5, 3, 4), randn(5)
    o1, o2, ow = T(x1, dev, True), T(x2, dev, True), T(w, dev, True)
    ob = T(b, dev, True) if bias else None
    y = F.bilinear(o1, o2, ow, ob)
    ref = np.einsum("...i,oij,...j->...o", x1, w, x2) + (b if bias else 0)
    close(N(y), ref)
    g = randn(*ref.shape)
    (y * T(g, dev)).sum().backward()
    close(N(o1.grad), np.einsum("...o,oij,...j->...i", g, w, x2))
    close(N(o2.grad), np.einsum("...o,oij,...i->...j", g, w, x1))
    close(N(ow.grad), np.einsum("bo,bi,bj->oij", g.reshape(-1, 5), x1.reshape(-1, 3), x2.reshape(-1, 4)))
    if bias:
        close(N(ob.grad), g.reshape(-1, 5).sum(0))


@pytest.mark.parametrize("dev", DEVICES)
def test_bilinear_module_matches_torch(torch, dev):
    tm = torch.nn.Bilinear(3, 4, 5).double()
    om = nn.Bilinear(3, 4, 5, device=dev, dtype=oar.float64)
    assert repr(om) == repr(tm) == "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)"
    assert tuple(om.weight.shape) == (5, 3, 4) and tuple(om.bias.shape) == (5,)
    om.load_state_dict({k: T(from_torch(v), dev) for k, v in tm.state_dict().items()})
    x1, x2 = randn(6, 3), randn(6, 4)
    o1, o2 = T(x1, dev, True), T(x2, dev, True)
    t1, t2 = to_torch(x1).requires_grad_(), to_torch(x2).requires_grad_()
    yo, yt = om(o1, o2), tm(t1, t2)
    close(N(yo), from_torch(yt))
    g = randn(6, 5)
    (yo * T(g, dev)).sum().backward()
    (yt * to_torch(g)).sum().backward()
    close(N(o1.grad), from_torch(t1.grad))
    close(N(o2.grad), from_torch(t2.grad))
    close(N(om.weight.grad), from_torch(tm.weight.grad))
    close(N(om.bias.grad), from_torch(tm.bias.grad))
    nb = nn.Bilinear(2, 2, 3, bias=False)
    assert nb.bias is None and list(nb.state_dict()) == ["weight"]
    # PyTorch's init bound: 1 / sqrt(in1_features)
    big = nn.Bilinear(16, 3, 64)
    bound = 1 / 4.0
    assert np.abs(N(big.weight)).max() <= bound and np.abs(N(big.bias)).max() <= bound
    assert np.abs(N(big.weight)).max() > bound * 0.8


@pytest.mark.parametrize("dev", DEVICES)
def test_bilinear_errors(dev):
    w = T(randn(5, 3, 4), dev)
    with pytest.raises(oar.ShapeError, match="input dimensions do not match"):
        F.bilinear(T(randn(2, 3), dev), T(randn(2, 4, 1), dev), w)
    with pytest.raises(oar.ShapeError, match="batch dimensions do not match"):
        F.bilinear(T(randn(2, 3), dev), T(randn(3, 4), dev), w)
    with pytest.raises(oar.ShapeError, match="input1 size does not match weight size: got 2 but expected 3"):
        F.bilinear(T(randn(2, 2), dev), T(randn(2, 4), dev), w)
    with pytest.raises(oar.ShapeError, match="input2 size does not match weight size"):
        F.bilinear(T(randn(2, 3), dev), T(randn(2, 3), dev), w)
    with pytest.raises(oar.ShapeError, match="bias size does not match weight size: got 4 but expected 5"):
        F.bilinear(T(randn(2, 3), dev), T(randn(2, 4), dev), w, T(randn(4), dev))
    with pytest.raises(oar.ShapeError, match="weight must be 3-D"):
        F.bilinear(T(randn(2, 3), dev), T(randn(2, 4), dev), T(randn(3, 4), dev))
    with pytest.raises(TypeError):
        F.bilinear([1.0, 2.0, 3.0], T(randn(4), dev), w)
    with pytest.raises(ValueError):
        nn.Bilinear(0, 2, 3)


# ---------------------------------------------------------------- FeatureAlphaDropout
_ALPHA = 1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("shape", [(8, 16, 5), (4, 6, 3, 2), (6, 7)])
def test_feature_alpha_dropout_drops_whole_channels(dev, shape):
    p = 0.4
    a = ((_ALPHA ** 2 * p + 1) * (1 - p)) ** -0.5
    kept_scale, kept_shift, dropped = a, _ALPHA * a * p, -_ALPHA * a + _ALPHA * a * p
    x = randn(*shape) + 3.0  # away from the dropped value
    xo = T(x, dev, True)
    m = nn.FeatureAlphaDropout(p)
    assert m.training and repr(m) == "FeatureAlphaDropout(p=0.4, inplace=False)"
    y = m(xo)
    out = N(y)
    flat_x = x.reshape(shape[0], shape[1], -1)
    flat_y = out.reshape(shape[0], shape[1], -1)
    kept = np.isclose(flat_y, flat_x * kept_scale + kept_shift).all(-1)
    drop = np.isclose(flat_y, dropped).all(-1)
    assert (kept ^ drop).all(), "every (batch, channel) slice is either kept (affine) or dropped (constant)"
    assert 0 < drop.sum() < drop.size
    w = randn(*shape)
    (y * T(w, dev)).sum().backward()
    mask = kept.reshape(shape[:2] + (1,) * (len(shape) - 2))
    close(N(xo.grad), w * mask * kept_scale)
    # eval mode and p=0: identity (the same tensor)
    m.eval()
    assert m(xo) is xo
    assert F.feature_alpha_dropout(xo, 0.0, training=True) is xo
    assert F.feature_alpha_dropout(xo, 0.5) is xo  # training=False by default, as PyTorch
    assert np.all(N(F.feature_alpha_dropout(xo, 1.0, training=True)) == 0)


def test_feature_alpha_dropout_statistics():
    # SELU-normalised input stays zero-mean unit-variance on average over many channels
    x = T(randn(4000, 200, 1), "cpu:0")
    y = N(F.feature_alpha_dropout(x, 0.2, training=True))
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05


def test_feature_alpha_dropout_errors_and_class():
    with pytest.raises(oar.ShapeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(oar.ones(3), 0.5, training=True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FeatureAlphaDropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.feature_alpha_dropout(oar.ones(2, 3), -0.1, training=True)
    from oar.nn.modules.dropout import _DropoutNd
    for cls in (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout):
        assert isinstance(cls(0.1), _DropoutNd)
    # as PyTorch: the channel dropouts are not Dropout subclasses
    assert not isinstance(nn.Dropout2d(), nn.Dropout) and not isinstance(nn.FeatureAlphaDropout(), nn.AlphaDropout)


def test_feature_alpha_dropout_matches_torch_deterministic_cases(torch):
    x = randn(3, 4, 2)
    for p, training in ((0.3, False), (0.0, True), (1.0, True)):
        close(N(F.feature_alpha_dropout(T(x, "cpu:0"), p, training)),
              from_torch(torch.nn.functional.feature_alpha_dropout(to_torch(x), p, training)))
    assert repr(nn.FeatureAlphaDropout(0.2)) == repr(torch.nn.FeatureAlphaDropout(0.2))


# ---------------------------------------------------------------- lazy modules
@pytest.mark.parametrize("dev", DEVICES)
def test_lazy_linear_infers_in_features(dev):
    m = nn.LazyLinear(3, device=dev, dtype=oar.float64)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(m.weight, nn.UninitializedParameter) and isinstance(m.weight, nn.Parameter)
    assert m.has_uninitialized_params()
    w_obj = m.weight
    opt = oar.optim.SGD(m.parameters(), lr=0.1)  # built before the first forward, as PyTorch allows
    x = T(randn(4, 5), dev)
    y = m(x)
    assert type(m) is nn.Linear and m.in_features == 5 and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight is w_obj and type(m.weight) is nn.Parameter and m.weight.requires_grad
    assert tuple(m.weight.shape) == (3, 5) and m.weight.device == x.device and m.weight.dtype == oar.float64
    bound = 1 / np.sqrt(5)
    assert np.abs(N(m.weight)).max() <= bound and np.abs(N(m.bias)).max() <= bound
    close(N(y), N(x) @ N(m.weight).T + N(m.bias))
    before = N(m.weight)
    y.sum().backward()
    opt.step()
    close(N(m.weight), before - 0.1 * N(x).sum(0)[None, :].repeat(3, 0))
    assert not m._forward_pre_hooks  # the initializing hook removed itself
    nb = nn.LazyLinear(2, bias=False)
    assert nb.bias is None
    nb(oar.ones(3, 7))
    assert tuple(nb.weight.shape) == (2, 7)


@pytest.mark.parametrize("dev", DEVICES)
def test_lazy_modules_moved_before_init(dev):
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    model.to(dev).double()  # .to() before the first forward: the uninitialized parameters carry device and dtype
    assert isinstance(model[0].weight, nn.UninitializedParameter) and model[0].weight.dtype == oar.float64
    opt = oar.optim.Adam(model.parameters(), lr=0.1)
    x = T(randn(3, 5), dev)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    assert model[2].in_features == 4 and model[0].weight.device == x.device and model[0].weight.dtype == oar.float64
    assert losses[-1] < losses[0]


def test_lazy_parameter_refuses_use():
    m = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        m.weight.shape
    with pytest.raises(ValueError, match="uninitialized parameter"):
        m.weight.numel()
    with pytest.raises(ValueError, match="uninitialized parameter"):
        m.weight + 1
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(oar.ShapeError):
        m(oar.tensor(1.0))


def test_lazy_linear_state_dict_and_load():
    m = nn.LazyLinear(3)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and all(isinstance(v, nn.UninitializedParameter) for v in sd.values())
    src = nn.Linear(4, 3)
    m.load_state_dict(src.state_dict())
    assert type(m.weight) is nn.Parameter and tuple(m.weight.shape) == (3, 4)
    close(N(m.weight), N(src.weight))
    x = oar.ones(2, 4)
    close(N(m(x)), N(src(x)))
    assert type(m) is nn.Linear and m.in_features == 4  # (PyTorch leaves in_features at 0 here)
    # an initialized module can't take an uninitialized checkpoint entry
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        nn.Linear(4, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    # pickling / deepcopy keep a lazy module lazy
    import copy
    for clone in (copy.deepcopy(nn.LazyLinear(3)), pickle.loads(pickle.dumps(nn.LazyLinear(3)))):
        assert isinstance(clone.weight, nn.UninitializedParameter)
        clone(oar.ones(1, 6))
        assert type(clone) is nn.Linear and tuple(clone.weight.shape) == (3, 6)


@pytest.mark.parametrize("dev", DEVICES)
def test_lazy_conv_infers_in_channels(dev):
    m = nn.LazyConv2d(4, 3, padding=1, groups=2, device=dev, dtype=oar.float64)
    assert repr(m) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)"
    x = T(randn(2, 6, 5, 5), dev)
    y = m(x)
    assert type(m) is nn.Conv2d and m.in_channels == 6 and tuple(m.weight.shape) == (4, 3, 3, 3)
    close(N(y), N(F.conv2d(x, m.weight, m.bias, padding=1, groups=2)))
    m1 = nn.LazyConv1d(5, 2)
    m1(oar.ones(3, 7))  # unbatched: in_channels is dim 0
    assert type(m1) is nn.Conv1d and m1.in_channels == 3 and tuple(m1.weight.shape) == (5, 3, 2)
    m3 = nn.LazyConv3d(2, 1, bias=False)
    m3(oar.ones(1, 4, 2, 2, 2))
    assert type(m3) is nn.Conv3d and m3.bias is None and tuple(m3.weight.shape) == (2, 4, 1, 1, 1)
    mt = nn.LazyConvTranspose2d(4, 3, stride=2, groups=2)
    assert mt(oar.ones(1, 6, 3, 3)).shape == (1, 4, 7, 7)
    assert type(mt) is nn.ConvTranspose2d and tuple(mt.weight.shape) == (6, 2, 3, 3)
    for cls, shape in ((nn.LazyConvTranspose1d, (1, 2, 4)), (nn.LazyConvTranspose3d, (1, 2, 2, 2, 2))):
        mm = cls(3, 2)
        assert mm(oar.ones(*shape)).shape[1] == 3 and mm.in_channels == 2
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(oar.ones(1, 3, 5, 5))
    with pytest.raises(oar.ShapeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(oar.ones(5, 5))


def test_lazy_modules_match_torch_after_init(torch):
    tm = torch.nn.LazyLinear(3).double()
    om = nn.LazyLinear(3, dtype=oar.float64)
    x = randn(2, 4)
    tm(to_torch(x))
    om(T(x, "cpu:0"))
    om.load_state_dict({k: T(from_torch(v), "cpu:0") for k, v in tm.state_dict().items()})
    close(N(om(T(x, "cpu:0"))), from_torch(tm(to_torch(x))))
    assert repr(om) == repr(tm)


# ---------------------------------------------------------------- NLLLoss2d, AdaptiveLogSoftmaxWithLoss
@pytest.mark.parametrize("dev", DEVICES)
def test_nllloss2d_is_nllloss(dev):
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        loss = nn.NLLLoss2d(ignore_index=1)
    assert isinstance(loss, nn.NLLLoss)
    x = F.log_softmax(T(randn(2, 3, 4, 4), dev), dim=1)
    t = oar.tensor(RNG.integers(0, 3, (2, 4, 4)), device=dev)
    close(N(loss(x, t)), N(nn.NLLLoss(ignore_index=1)(x, t)))


def _asm_pair(torch, dev):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], div_value=2.0, head_bias=True).double()
    om = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], div_value=2.0, head_bias=True, device=dev,
                                       dtype=oar.float64)
    assert list(om.state_dict()) == list(tm.state_dict())
    om.load_state_dict({k: T(from_torch(v), dev) for k, v in tm.state_dict().items()})
    return om, tm


@pytest.mark.parametrize("dev", DEVICES)
def test_adaptive_log_softmax_matches_torch(torch, dev):
    om, tm = _asm_pair(torch, dev)
    assert repr(om) == repr(tm)
    x = randn(9, 16)
    target = np.array([0, 4, 5, 11, 12, 19, 3, 7, 15])
    xo, xt = T(x, dev, True), to_torch(x).requires_grad_()
    ro = om(xo, oar.tensor(target, device=dev))
    rt = tm(xt, to_torch(target))
    close(N(ro.output), from_torch(rt.output))
    close(N(ro.loss), from_torch(rt.loss))
    ro.loss.backward()
    rt.loss.backward()
    close(N(xo.grad), from_torch(xt.grad))
    for (name, p), (_, q) in zip(om.named_parameters(), tm.named_parameters()):
        close(N(p.grad), from_torch(q.grad), what=name)
    close(N(om.log_prob(T(x, dev))), from_torch(tm.log_prob(to_torch(x))))
    assert N(om.predict(T(x, dev))).tolist() == tm.predict(to_torch(x)).tolist()
    # unbatched
    r1o = om(T(x[0], dev), oar.tensor(13, device=dev))
    r1t = tm(to_torch(x[0]), torch.tensor(13))
    close(N(r1o.output), from_torch(r1t.output))
    close(N(r1o.loss), from_torch(r1t.loss))


@pytest.mark.parametrize("dev", DEVICES)
def test_adaptive_log_softmax_log_prob_normalised_and_errors(dev):
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], device=dev, dtype=oar.float64)
    x = T(randn(5, 8), dev)
    lp = N(m.log_prob(x))
    close(np.exp(lp).sum(1), np.ones(5))
    out = m(x, oar.tensor([0, 2, 3, 6, 9], device=dev)).output
    close(N(out), lp[np.arange(5), [0, 2, 3, 6, 9]])
    close(N(m.predict(x)), lp.argmax(1))
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10])
    with pytest.raises(ValueError, match=r"Target values should be in \[0, 9\]"):
        m(x, oar.tensor([0, 1, 2, 3, 10], device=dev))
    with pytest.raises(oar.ShapeError, match="same size in the batch dimension"):
        m(x, oar.tensor([0, 1], device=dev))
    with pytest.raises(oar.ShapeError, match="multi-target not supported"):
        m(x, oar.tensor([[0]], device=dev))


# ---------------------------------------------------------------- nn.parallel
@pytest.mark.parametrize("dev", DEVICES)
def test_data_parallel_single_device(dev):
    inner = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).to(device=dev, dtype=oar.float64)
    dp = nn.DataParallel(inner)
    assert dp.module is inner and isinstance(dp, nn.parallel.DataParallel)
    assert list(dp.state_dict()) == ["module." + k for k in inner.state_dict()]
    assert [n for n, _ in dp.named_parameters()] == ["module.0.weight", "module.0.bias", "module.1.weight",
                                                    "module.1.bias"]
    x = T(randn(5, 4), dev)
    inner.eval()
    ref = N(inner(x))
    dp.eval()
    close(N(dp(x)), ref)
    close(N(nn.parallel.data_parallel(inner, x)), ref)
    close(N(nn.parallel.data_parallel(inner, (x,), device_ids=[0])), ref)
    # trains through the wrapper
    dp.train()
    opt = oar.optim.SGD(dp.parameters(), lr=0.1)
    loss = dp(x).pow(2).sum()
    loss.backward()
    assert inner[0].weight.grad is not None
    opt.step()
    # a DataParallel checkpoint loads back into the bare module once the prefix is consumed
    from oar.nn.modules.utils import consume_prefix_in_state_dict_if_present
    sd = dp.state_dict()
    consume_prefix_in_state_dict_if_present(sd, "module.")
    fresh = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).to(device=dev, dtype=oar.float64)
    fresh.load_state_dict(sd)
    close(N(fresh[0].weight), N(inner[0].weight))
    assert repr(dp).startswith("DataParallel(\n  (module): Sequential(")


def test_data_parallel_arguments():
    m = nn.Linear(2, 2)
    for ids in ([0], ["cuda:0"], None):
        dp = nn.DataParallel(m, device_ids=ids, output_device=0)
        assert dp.module is m
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        nn.DataParallel(m, device_ids=[0, 1])
    with pytest.raises(NotImplementedError, match="one device per process"):
        nn.parallel.data_parallel(m, oar.ones(1, 2), device_ids=range(2))
    with pytest.raises(TypeError):
        nn.DataParallel(lambda x: x)
    with pytest.raises(RuntimeError, match="uninitialized"):
        nn.DataParallel(nn.LazyLinear(2))
    # kwargs reach the module
    class Add(nn.Module):
        def forward(self, a, b=0.0):
            return a + b
    close(N(nn.DataParallel(Add())(oar.ones(2), b=oar.ones(2))), np.full(2, 2.0))
    close(N(nn.parallel.data_parallel(Add(), oar.ones(2), module_kwargs={"b": oar.ones(2)})), np.full(2, 2.0))
    assert not hasattr(nn.parallel, "DistributedDataParallel")


# ---------------------------------------------------------------- torch.nn.modules paths
def test_modules_package_paths_are_oar_classes():
    from oar.nn.modules.loss import _Loss, _WeightedLoss
    from oar.nn.modules.batchnorm import _BatchNorm, _NormBase
    from oar.nn.modules.instancenorm import _InstanceNorm
    from oar.nn.modules.conv import _ConvNd, _ConvTransposeNd
    from oar.nn.modules.module import Module, _addindent
    from oar.nn.modules.utils import _pair, _single, _triple, _quadruple, _ntuple
    from oar.nn.modules.pooling import _MaxPoolNd, _AvgPoolNd, _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd
    from oar.nn.modules.container import Sequential, ModuleList, ModuleDict
    from oar.nn.modules.activation import MultiheadAttention
    from oar.nn.modules.padding import _ReflectionPadNd
    from oar.nn.modules.lazy import LazyModuleMixin
    import oar.nn.modules as M
    assert Module is nn.Module and Sequential is nn.Sequential and ModuleList is nn.ModuleList
    assert ModuleDict is nn.ModuleDict and MultiheadAttention is nn.MultiheadAttention
    assert M.activation.MultiheadAttention is nn.MultiheadAttention and M.Linear is nn.Linear
    assert M.linear.Bilinear is nn.Bilinear and M.module.Module is nn.Module
    for obj, base in [(nn.MSELoss(), _Loss), (nn.CrossEntropyLoss(), _WeightedLoss), (nn.NLLLoss(), _WeightedLoss),
                      (nn.BatchNorm2d(3), _BatchNorm), (nn.BatchNorm1d(3), _NormBase),
                      (nn.InstanceNorm2d(3), _InstanceNorm), (nn.Conv2d(1, 1, 1), _ConvNd),
                      (nn.Conv1d(1, 1, 1), _ConvNd), (nn.ConvTranspose2d(1, 1, 1), _ConvTransposeNd),
                      (nn.MaxPool2d(2), _MaxPoolNd), (nn.MaxPool1d(2), _MaxPoolNd), (nn.AvgPool2d(2), _AvgPoolNd),
                      (nn.AvgPool1d(2), _AvgPoolNd), (nn.AvgPool3d(2), _AvgPoolNd),
                      (nn.AdaptiveAvgPool2d(1), _AdaptiveAvgPoolNd), (nn.AdaptiveMaxPool2d(1), _AdaptiveMaxPoolNd),
                      (nn.ReflectionPad2d(1), _ReflectionPadNd), (nn.LazyLinear(2), LazyModuleMixin)]:
        assert isinstance(obj, base), (obj, base)
    assert not isinstance(nn.Conv2d(1, 1, 1), _ConvTransposeNd)
    assert _pair(3) == (3, 3) and _single(2) == (2,) and _triple((1, 2, 3)) == (1, 2, 3)
    assert _quadruple(0) == (0, 0, 0, 0) and _pair([4, 5]) == (4, 5) and _ntuple(5)(1) == (1,) * 5
    assert _addindent("a\nb", 2) == "a\n  b"

    class MyLoss(_Loss):  # the usual custom-loss pattern
        def forward(self, input, target):
            d = (input - target).abs()
            return d.mean() if self.reduction == "mean" else d.sum() if self.reduction == "sum" else d

    assert MyLoss(reduction="sum")(oar.ones(3), oar.zeros(3)).item() == 3.0
    with pytest.raises(ValueError):
        MyLoss(reduction="avg")
    # repr of the pooling layers unchanged by their new bases
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(3, 2)) == "AvgPool2d(kernel_size=3, stride=2, padding=0)"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


def test_modules_names_exist_in_torch(torch):
    """Every public name of oar.nn.modules.<file> is in torch.nn.modules.<file> (or is PyTorch 2's)."""
    import importlib
    import oar.nn.modules as M
    newer = {"ZeroPad1d", "ZeroPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "RMSNorm",
             "RemovableHandle", "register_module_full_backward_pre_hook"}
    for name in ("activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout",
                 "flatten", "fold", "instancenorm", "lazy", "linear", "loss", "module", "normalization", "padding",
                 "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling"):
        ours = importlib.import_module(f"oar.nn.modules.{name}")
        theirs = importlib.import_module(f"torch.nn.modules.{name}")
        missing = [n for n in ours.__all__ if n not in newer and not hasattr(theirs, n)]
        assert not missing, (name, missing)
        assert getattr(M, name) is ours


def test_modules_pickle_paths():
    # a pickle naming torch.nn.modules.<file>.<Class> (here its oar path) loads the oar class
    import oar.nn.modules.linear as lin
    assert pickle.loads(pickle.dumps(lin.Linear)) is nn.Linear


# ---------------------------------------------------------------- nn.grad
@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("n,kw", [(1, dict(stride=2, padding=1)), (2, dict(stride=(2, 1), padding=1, dilation=2)),
                                  (2, dict(groups=2)), (3, dict(stride=2, padding=(1, 0, 1)))])
def test_nn_grad_matches_autograd(dev, n, kw):
    shape_in = (2, 4) + (7, 6, 5)[:n]
    wshape = (6, 4 // kw.get("groups", 1)) + (3, 2, 3)[:n]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    x, w = T(randn(*shape_in), dev, True), T(randn(*wshape), dev, True)
    y = conv(x, w, None, **kw)
    g = T(randn(*y.shape), dev)
    (y * g).sum().backward()
    gi = getattr(nn.grad, f"conv{n}d_input")(list(x.shape), w.detach(), g, **kw)
    gw = getattr(nn.grad, f"conv{n}d_weight")(x.detach(), list(w.shape), g, **kw)
    close(N(gi), N(x.grad))
    close(N(gw), N(w.grad))


def test_nn_grad_matches_torch(torch):
    x, w = randn(2, 3, 6, 5), randn(4, 3, 3, 2)
    kw = dict(stride=2, padding=1)
    y = torch.nn.functional.conv2d(to_torch(x), to_torch(w), **kw)
    g = randn(*y.shape)
    close(N(nn.grad.conv2d_input((2, 3, 6, 5), T(w, "cpu:0"), T(g, "cpu:0"), **kw)),
          from_torch(torch.nn.grad.conv2d_input((2, 3, 6, 5), to_torch(w), to_torch(g), **kw)))
    close(N(nn.grad.conv2d_weight(T(x, "cpu:0"), (4, 3, 3, 2), T(g, "cpu:0"), **kw)),
          from_torch(torch.nn.grad.conv2d_weight(to_torch(x), (4, 3, 3, 2), to_torch(g), **kw)))


def test_nn_grad_errors():
    w, g = oar.ones(4, 3, 3, 3), oar.ones(1, 4, 3, 3)
    with pytest.raises(ValueError, match="requested an input grad size"):
        nn.grad.conv2d_input((1, 3, 9, 9), w, g)
    with pytest.raises(ValueError, match="requires specifying an input_size"):
        nn.grad.conv2d_input(None, w, g)
    with pytest.raises(oar.ShapeError, match="grad_output has shape"):
        nn.grad.conv2d_weight(oar.ones(1, 3, 6, 6), (4, 3, 3, 3), g)


# ---------------------------------------------------------------- compat: an unchanged PyTorch script
COMPAT_SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.parallel
    import torch.nn.functional as F
    from torch.nn.modules.loss import _Loss, _WeightedLoss
    from torch.nn.modules.batchnorm import _BatchNorm
    from torch.nn.modules.conv import _ConvNd
    from torch.nn.modules.module import Module
    from torch.nn.modules.utils import _pair, _quadruple
    from torch.nn.modules.container import Sequential

    class Dice(_Loss):
        def forward(self, input, target):
            inter = (input * target).sum()
            return 1 - 2 * inter / (input.sum() + target.sum())

    torch.manual_seed(0)
    net = Sequential(nn.ReflectionPad2d(1), nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                     nn.ZeroPad2d(_quadruple(1)), nn.Conv2d(4, 1, 3), nn.Sigmoid())
    assert isinstance(net[2], _BatchNorm) and isinstance(net[1], _ConvNd) and isinstance(net, Module)
    model = nn.DataParallel(net)
    assert list(model.state_dict())[0] == "module.1.weight"
    if torch.cuda.is_available() and torch.cuda.device_count() > 1:
        out = nn.parallel.data_parallel(net, torch.zeros(1, 1, 6, 6), range(2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.rand(4, 1, 6, 6)
    y = (x > 0.5).float()
    crit = Dice()
    for step in range(3):
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        print("step", step, "loss: %.6f" % loss.item())
    print("pair", _pair(3), "circular", tuple(F.pad(torch.zeros(1, 2, 3), (1, 2), mode="circular").shape))
""")


def test_compat_script_imports_nn_parallel_and_modules(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(COMPAT_SCRIPT)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([OAR_PATH] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("OMP_NUM_THREADS", "2")
    r = subprocess.run([sys.executable, "-m", "oar.compat", str(path)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "step 2 loss:" in r.stdout
    assert "pair (3, 3) circular (1, 2, 6)" in r.stdout
    losses = [float(line.split()[-1]) for line in r.stdout.splitlines() if line.startswith("step")]
    assert len(losses) == 3 and all(0 <= v <= 1 for v in losses)
