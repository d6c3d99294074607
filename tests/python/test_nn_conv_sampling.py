"""oar.nn convolutions (1-D/3-D, transposed, padding modes), pooling (1-D/3-D, adaptive, LP, unpooling),
resampling (interpolate, grid_sample, affine_grid, pixel/channel shuffle), fold/unfold and embeddings against
PyTorch 1.13: outputs and the gradients of the inputs and parameters, in float64 on every device, plus the
typed errors for bad shapes and arguments (those need no torch)."""
import math

import numpy as np
import pytest

import oar
from oar import nn
import oar.nn.functional as F

from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's note on its padded copy
RNG = np.random.default_rng(4321)


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def N(t):
    return t.detach().cpu().numpy().copy()


def randn(*shape):
    return RNG.standard_normal(shape)


def _as_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def _assert_same(o, t, tol, what):
    ref = from_torch(t)
    got = N(o)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    if ref.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref, err_msg=what)
    else:
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=what)


def both(oar_fn, torch_fn, args, dev, tol=1e-9, grads=True):
    """oar_fn(*args on dev) against torch_fn(*args): every output, then the gradients of sum(out[0] * W) for
    every float NumPy argument. Integer arrays become int64 index tensors; anything else passes as is."""
    import_torch()
    oa, ta, grad_pos = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            fl = a.dtype.kind == "f"
            oa.append(oar.tensor(a, dtype=oar.float64 if fl else oar.int64, device=dev,
                                 requires_grad=fl and grads))
            t = to_torch(a.astype(np.float64) if fl else a.astype(np.int64))
            if fl and grads:
                t.requires_grad_()
                grad_pos.append(i)
            ta.append(t)
        else:
            oa.append(a)
            ta.append(a)
    oy, ty = _as_tuple(oar_fn(*oa)), _as_tuple(torch_fn(*ta))
    assert len(oy) == len(ty)
    for k, (o, t) in enumerate(zip(oy, ty)):
        _assert_same(o, t, tol, f"output {k}")
    if grad_pos:
        W = randn(*ty[0].shape)
        (oy[0] * oar.tensor(W, dtype=oar.float64, device=dev)).sum().backward()
        (ty[0] * to_torch(W)).sum().backward()
        for i in grad_pos:
            g = oa[i].grad
            tg = ta[i].grad
            if tg is None:
                assert g is None or not N(g).any(), f"grad of argument {i}"
            else:
                assert g is not None, f"grad of argument {i} is None"
                _assert_same(g, tg, tol, f"grad of argument {i}")
    return oy


def both_module(om, tm, x, dev, tol=1e-9, extra=(), call=None, torch_batched=False):
    """An oar module (float64 on dev) against a torch module given its parameters: output, input grad, param
    grads. torch_batched: torch gets x with a batch dim of 1 (for unbatched inputs torch 1.13 refuses)."""
    torch = import_torch()
    tm = tm.double()
    tparams = dict(tm.named_parameters())
    assert sorted(n for n, _ in om.named_parameters()) == sorted(tparams)
    with torch.no_grad():
        for name, p in om.named_parameters():
            tparams[name].copy_(to_torch(N(p)))
    call = call or (lambda m, v, *e: m(v, *e))
    xo = oar.tensor(x, dtype=oar.float64, device=dev, requires_grad=True)
    xt = to_torch(x).requires_grad_()
    oy = _as_tuple(call(om, xo, *extra))
    ty = tuple(t.squeeze(0) for t in _as_tuple(call(tm, xt.unsqueeze(0), *extra))) if torch_batched else \
        _as_tuple(call(tm, xt, *extra))
    for k, (o, t) in enumerate(zip(oy, ty)):
        _assert_same(o, t, tol, f"output {k}")
    W = randn(*ty[0].shape)
    (oy[0] * oar.tensor(W, dtype=oar.float64, device=dev)).sum().backward()
    (ty[0] * to_torch(W)).sum().backward()
    _assert_same(xo.grad, xt.grad, tol, "input grad")
    for name, p in om.named_parameters():
        _assert_same(p.grad, tparams[name].grad, tol, f"{name} grad")
    return oy


def f64(dev):
    return dict(device=dev, dtype=oar.float64)


# ================================================================ convolutions
CONV_CASES = [
    # (dims, in, out, kernel, kwargs, input spatial)
    (1, 4, 6, 3, dict(stride=2, padding=1, dilation=2, groups=2), (11,)),
    (1, 3, 4, 4, dict(padding="same", dilation=1), (9,)),
    (1, 2, 2, 3, dict(padding="valid", bias=False), (6,)),
    (1, 3, 6, 3, dict(groups=3, padding=2, padding_mode="reflect"), (7,)),
    (1, 2, 3, 3, dict(padding=1, padding_mode="replicate"), (5,)),
    (1, 2, 3, 3, dict(padding=2, padding_mode="circular", stride=2), (5,)),
    (1, 2, 3, 4, dict(padding="same", padding_mode="circular"), (6,)),
    (2, 4, 6, (2, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), (7, 8)),
    (2, 2, 3, (4, 3), dict(padding="same", dilation=(2, 1)), (7, 6)),
    (2, 2, 3, 3, dict(padding=(1, 2), padding_mode="reflect"), (5, 6)),
    (2, 2, 3, 3, dict(padding=1, padding_mode="replicate", stride=2), (5, 6)),
    (2, 2, 3, 3, dict(padding=(2, 1), padding_mode="circular"), (5, 4)),
    (3, 4, 6, (2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2), (5, 7, 6)),
    (3, 2, 2, 3, dict(padding="same", bias=False), (4, 5, 3)),
    (3, 2, 3, 2, dict(padding="same", dilation=(1, 2, 1)), (3, 5, 4)),
    (3, 2, 3, 3, dict(padding=1, padding_mode="replicate"), (3, 4, 5)),
    (3, 2, 3, 3, dict(padding=1, padding_mode="circular", stride=2), (3, 4, 5)),
    (3, 2, 3, 3, dict(padding=(1, 1, 2), padding_mode="reflect"), (3, 4, 5)),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_module_matches_torch(torch, dev, case):
    d, cin, cout, k, kw, sp = CONV_CASES[case]
    om = getattr(nn, f"Conv{d}d")(cin, cout, k, **kw, **f64(dev))
    tm = getattr(torch.nn, f"Conv{d}d")(cin, cout, k, **kw)
    assert repr(om) == repr(tm)
    both_module(om, tm, randn(2, cin, *sp), dev)
    # unbatched (torch 1.13 has no unbatched circular padding: it gets a batch of one)
    both_module(om, tm, randn(cin, *sp), dev, torch_batched=kw.get("padding_mode") == "circular")


CONVT_CASES = [
    (1, 4, 6, 3, dict(stride=2, padding=1, output_padding=1, groups=2, dilation=1), (5,)),
    (1, 2, 3, 4, dict(stride=3, padding=2, dilation=2, output_padding=2), (4,)),
    (1, 3, 2, 2, dict(bias=False), (3,)),
    (2, 4, 2, (3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2), (3, 4)),
    (2, 2, 3, 3, dict(stride=2, dilation=(2, 1), output_padding=(1, 0), padding=(2, 1)), (4, 3)),
    (3, 4, 6, (2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 1, 0), output_padding=(1, 0, 1), groups=2),
     (3, 4, 3)),
    (3, 2, 3, 2, dict(stride=(1, 2, 2), dilation=(2, 1, 2), padding=(1, 0, 1)), (3, 3, 4)),
    # output_padding >= stride (allowed while it is < dilation)
    (1, 2, 2, 3, dict(dilation=3, output_padding=2, padding=1), (4,)),
    (2, 2, 4, 2, dict(stride=(1, 2), dilation=(2, 3), output_padding=(1, 2), padding=(0, 2), groups=2), (3, 4)),
    (3, 2, 2, 2, dict(dilation=2, output_padding=(1, 0, 1), padding=(0, 1, 1)), (2, 3, 3)),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(CONVT_CASES)))
def test_conv_transpose_module_matches_torch(torch, dev, case):
    d, cin, cout, k, kw, sp = CONVT_CASES[case]
    om = getattr(nn, f"ConvTranspose{d}d")(cin, cout, k, **kw, **f64(dev))
    tm = getattr(torch.nn, f"ConvTranspose{d}d")(cin, cout, k, **kw)
    assert repr(om) == repr(tm)
    both_module(om, tm, randn(2, cin, *sp), dev)
    both_module(om, tm, randn(cin, *sp), dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_conv_transpose_output_size(torch, dev):
    om = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, **f64(dev))
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = randn(1, 2, 4, 5)
    for size in ([8, 10], [1, 3, 7, 9]):
        y = both_module(om, tm, x, dev, extra=(size,), call=lambda m, v, s: m(v, output_size=s))
        assert list(y[0].shape[2:]) == size[-2:]
    with pytest.raises(ValueError, match="output size"):
        om(oar.tensor(x, **f64(dev)), output_size=[11, 9])
    om1 = nn.ConvTranspose1d(2, 2, 3, stride=3, **f64(dev))
    tm1 = torch.nn.ConvTranspose1d(2, 2, 3, stride=3)
    both_module(om1, tm1, randn(2, 4), dev, extra=([12],), call=lambda m, v, s: m(v, output_size=s))


@pytest.mark.parametrize("dev", DEVICES)
def test_conv_functionals_match_torch(torch, dev):
    TF = torch.nn.functional
    both(lambda x, w, b: F.conv1d(x, w, b, 2, 1, 2, 2), lambda x, w, b: TF.conv1d(x, w, b, 2, 1, 2, 2),
         [randn(2, 4, 10), randn(6, 2, 3), randn(6)], dev)
    both(lambda x, w: F.conv1d(x, w, padding="same", dilation=3), lambda x, w: TF.conv1d(x, w, padding="same",
                                                                                         dilation=3),
         [randn(3, 9), randn(2, 3, 2)], dev)
    both(lambda x, w, b: F.conv3d(x, w, b, (1, 2, 1), (0, 1, 2), (2, 1, 1), 1),
         lambda x, w, b: TF.conv3d(x, w, b, (1, 2, 1), (0, 1, 2), (2, 1, 1), 1),
         [randn(1, 2, 6, 5, 4), randn(3, 2, 2, 3, 3), randn(3)], dev)
    both(lambda x, w: F.conv3d(x, w, padding="same"), lambda x, w: TF.conv3d(x, w, padding="same"),
         [randn(2, 3, 4, 3), randn(2, 2, 2, 3, 2)], dev)
    both(lambda x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1, 3, 2),
         lambda x, w, b: TF.conv_transpose1d(x, w, b, 2, 1, 1, 3, 2),
         [randn(2, 3, 5), randn(3, 2, 3), randn(6)], dev)
    both(lambda x, w, b: F.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), 1, (1, 2)),
         lambda x, w, b: TF.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), 1, (1, 2)),
         [randn(2, 2, 3, 4), randn(2, 3, 3, 2), randn(3)], dev)
    both(lambda x, w: F.conv_transpose3d(x, w, None, 2, 1, 1, 2, 1),
         lambda x, w: TF.conv_transpose3d(x, w, None, 2, 1, 1, 2, 1),
         [randn(4, 2, 3, 3), randn(4, 1, 3, 2, 3)], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_conv_errors(dev):
    x1 = oar.tensor(randn(1, 3, 8), **f64(dev))
    with pytest.raises(oar.ShapeError, match="expected input.*to have 4 channels, but got 3"):
        nn.Conv1d(4, 2, 3, **f64(dev))(x1)
    with pytest.raises(oar.ShapeError, match="Expected 2D \\(unbatched\\) or 3D \\(batched\\) input"):
        nn.Conv1d(3, 2, 3, **f64(dev))(oar.tensor(randn(1, 1, 3, 8), **f64(dev)))
    with pytest.raises(oar.ShapeError, match="Kernel size can't be greater than actual input size"):
        F.conv1d(x1, oar.tensor(randn(2, 3, 9), **f64(dev)))
    with pytest.raises(oar.ShapeError, match="to have 6 channels"):
        F.conv3d(oar.tensor(randn(1, 3, 4, 4, 4), **f64(dev)), oar.tensor(randn(2, 3, 1, 1, 1), **f64(dev)),
                 groups=2)
    with pytest.raises(oar.ShapeError, match="bias"):
        F.conv1d(x1, oar.tensor(randn(2, 3, 3), **f64(dev)), oar.tensor(randn(3), **f64(dev)))
    with pytest.raises(ValueError, match="strided"):
        nn.Conv1d(3, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="strided"):
        F.conv3d(oar.tensor(randn(1, 1, 3, 3, 3), **f64(dev)), oar.tensor(randn(1, 1, 1, 1, 1), **f64(dev)),
                 stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv3d(1, 1, 1, padding_mode="mirror")
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv1d(3, 2, 1, groups=2)
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose1d(1, 1, 1, padding_mode="reflect")
    with pytest.raises(oar.ShapeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose1d(x1, oar.tensor(randn(3, 2, 3), **f64(dev)), stride=2, output_padding=2)
    with pytest.raises(oar.ShapeError, match="have 3 channels"):
        nn.ConvTranspose3d(3, 2, 1, **f64(dev))(oar.tensor(randn(1, 2, 3, 3, 3), **f64(dev)))


# ================================================================ pooling
@pytest.mark.parametrize("dev", DEVICES)
def test_max_pool_matches_torch(torch, dev):
    TF = torch.nn.functional
    for kw in (dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, dilation=2, ceil_mode=True),
               dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)):
        both(lambda x: F.max_pool1d(x, **kw), lambda x: TF.max_pool1d(x, **kw), [randn(2, 3, 11)], dev)
        both(lambda x: F.max_pool1d(x, return_indices=True, **kw),
             lambda x: TF.max_pool1d(x, return_indices=True, **kw), [randn(3, 10)], dev)
        both(lambda x: F.max_pool2d(x, return_indices=True, **kw),
             lambda x: TF.max_pool2d(x, return_indices=True, **kw), [randn(1, 2, 7, 6)], dev)
        both(lambda x: F.max_pool3d(x, return_indices=True, **kw),
             lambda x: TF.max_pool3d(x, return_indices=True, **kw), [randn(1, 2, 5, 6, 7)], dev)
    both(lambda x: F.max_pool3d(x, (1, 2, 3), (1, 2, 1), (0, 1, 1)),
         lambda x: TF.max_pool3d(x, (1, 2, 3), (1, 2, 1), (0, 1, 1)), [randn(2, 3, 4, 5)], dev)
    # the modules, with their reprs
    for om, tm, x in ((nn.MaxPool1d(3, 2, 1, return_indices=True), torch.nn.MaxPool1d(3, 2, 1, return_indices=True),
                       randn(2, 3, 9)),
                      (nn.MaxPool3d(2, ceil_mode=True), torch.nn.MaxPool3d(2, ceil_mode=True), randn(1, 3, 3, 5))):
        assert repr(om) == repr(tm)
        both(om, tm, [x], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_avg_pool_matches_torch(torch, dev):
    TF = torch.nn.functional
    for kw in (dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, padding=1,
                                                              count_include_pad=False, ceil_mode=True),
               dict(kernel_size=2, ceil_mode=True)):
        both(lambda x: F.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw), [randn(2, 3, 10)], dev)
        both(lambda x: F.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw), [randn(3, 9)], dev)
        both(lambda x: F.avg_pool3d(x, **kw), lambda x: TF.avg_pool3d(x, **kw), [randn(1, 2, 5, 4, 7)], dev)
        both(lambda x: F.avg_pool3d(x, divisor_override=5, **kw),
             lambda x: TF.avg_pool3d(x, divisor_override=5, **kw), [randn(2, 5, 4, 5)], dev)
        both(lambda x: F.avg_pool2d(x, divisor_override=3, **kw),
             lambda x: TF.avg_pool2d(x, divisor_override=3, **kw), [randn(1, 2, 5, 7)], dev)
    for om, tm in ((nn.AvgPool1d(3, 2, 1), torch.nn.AvgPool1d(3, 2, 1)),
                   (nn.AvgPool3d(2, 1, 1, count_include_pad=False), torch.nn.AvgPool3d(2, 1, 1,
                                                                                      count_include_pad=False))):
        assert repr(om) == repr(tm)
        both(om, tm, [randn(1, 2, 5) if isinstance(om, nn.AvgPool1d) else randn(1, 1, 3, 4, 3)], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_adaptive_pool_matches_torch(torch, dev):
    TF = torch.nn.functional
    for d, sp, outs in ((1, (7,), [3, 1, 7, 5, 10]), (2, (7, 5), [(3, 2), (None, 3), 4, (7, 5), (9, 6)]),
                        (3, (5, 3, 4), [(2, 3, 3), 1, (None, 2, None)])):
        for o in outs:
            for x in (randn(2, 3, *sp), randn(3, *sp)):
                both(lambda v: getattr(F, f"adaptive_max_pool{d}d")(v, o, return_indices=True),
                     lambda v: getattr(TF, f"adaptive_max_pool{d}d")(v, o, return_indices=True), [x], dev)
                both(lambda v: getattr(F, f"adaptive_max_pool{d}d")(v, o),
                     lambda v: getattr(TF, f"adaptive_max_pool{d}d")(v, o), [x], dev)
                both(lambda v: getattr(F, f"adaptive_avg_pool{d}d")(v, o),
                     lambda v: getattr(TF, f"adaptive_avg_pool{d}d")(v, o), [x], dev)
    for om, tm, x in ((nn.AdaptiveMaxPool1d(3, return_indices=True), torch.nn.AdaptiveMaxPool1d(3, True),
                       randn(2, 3, 8)),
                      (nn.AdaptiveMaxPool2d((2, None)), torch.nn.AdaptiveMaxPool2d((2, None)), randn(1, 2, 5, 3)),
                      (nn.AdaptiveMaxPool3d(2), torch.nn.AdaptiveMaxPool3d(2), randn(1, 3, 3, 5)),
                      (nn.AdaptiveAvgPool1d(4), torch.nn.AdaptiveAvgPool1d(4), randn(2, 3, 9)),
                      (nn.AdaptiveAvgPool3d((1, 2, 3)), torch.nn.AdaptiveAvgPool3d((1, 2, 3)), randn(2, 3, 4, 5))):
        assert repr(om) == repr(tm)
        both(om, tm, [x], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_lp_pool_matches_torch(torch, dev):
    TF = torch.nn.functional
    pos = np.abs(randn(2, 3, 9)) + 0.1
    both(lambda x: F.lp_pool1d(x, 2, 3, 2), lambda x: TF.lp_pool1d(x, 2, 3, 2), [randn(2, 3, 9)], dev)
    both(lambda x: F.lp_pool1d(x, 1.5, 2, ceil_mode=True), lambda x: TF.lp_pool1d(x, 1.5, 2, ceil_mode=True),
         [pos], dev)
    both(lambda x: F.lp_pool2d(x, 3, (2, 3), (1, 2)), lambda x: TF.lp_pool2d(x, 3, (2, 3), (1, 2)),
         [np.abs(randn(1, 2, 5, 7)) + 0.1], dev)
    for om, tm, x in ((nn.LPPool1d(2, 3), torch.nn.LPPool1d(2, 3), randn(3, 10)),
                      (nn.LPPool2d(1.5, 2, 1), torch.nn.LPPool2d(1.5, 2, 1), np.abs(randn(2, 4, 5)) + 0.1)):
        assert repr(om) == repr(tm)
        both(om, tm, [x], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_max_unpool_matches_torch(torch, dev):
    TF = torch.nn.functional
    for d, sp, kw, size in ((1, (9,), dict(kernel_size=3, stride=2, padding=1), None),
                            (1, (8,), dict(kernel_size=2), [9]),
                            (2, (5, 7), dict(kernel_size=(2, 3), stride=(2, 2)), None),
                            (2, (6, 6), dict(kernel_size=3, stride=1, padding=1), [6, 6]),
                            (3, (4, 4, 3), dict(kernel_size=2, stride=(1, 2, 1)), None)):
        x = randn(2, 3, *sp)
        tx = to_torch(x)
        _, ind = getattr(TF, f"max_pool{d}d")(tx, return_indices=True, **kw)
        pooled = from_torch(getattr(TF, f"max_pool{d}d")(tx, **kw))
        ind = from_torch(ind)
        both(lambda v, i: getattr(F, f"max_unpool{d}d")(v, i, output_size=size, **kw),
             lambda v, i: getattr(TF, f"max_unpool{d}d")(v, i, output_size=size, **kw), [pooled, ind], dev)
        both(lambda v, i: getattr(F, f"max_unpool{d}d")(v, i, **kw),
             lambda v, i: getattr(TF, f"max_unpool{d}d")(v, i, **kw), [pooled[0], ind[0]], dev)  # unbatched
        om, tm = getattr(nn, f"MaxUnpool{d}d")(**kw), getattr(torch.nn, f"MaxUnpool{d}d")(**kw)
        assert repr(om) == repr(tm)
        both(lambda v, i: om(v, i), lambda v, i: tm(v, i), [pooled, ind], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_pool_errors(dev):
    x = oar.tensor(randn(1, 2, 5), **f64(dev))
    with pytest.raises(oar.ShapeError, match="pad should be at most half"):
        F.max_pool1d(x, 2, padding=2)
    with pytest.raises(oar.ShapeError, match="Output size is too small"):
        F.max_pool1d(x, 7)
    with pytest.raises(oar.ShapeError, match="Expected 2D or 3D"):
        F.avg_pool1d(oar.tensor(randn(5), **f64(dev)), 2)
    with pytest.raises(oar.ShapeError, match="Expected 4D or 5D"):
        F.max_pool3d(x, 2)
    with pytest.raises(ValueError, match="output_size"):
        F.adaptive_max_pool2d(oar.tensor(randn(1, 2, 4, 4), **f64(dev)), (1, 2, 3))
    with pytest.raises(oar.ShapeError, match="Expected 4D or 5D"):
        F.adaptive_avg_pool3d(x, 2)
    with pytest.raises(oar.ShapeError, match="indices"):
        F.max_unpool1d(x, oar.tensor(np.zeros((1, 2, 4), dtype=np.int64), device=dev), 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool1d(x, oar.tensor(np.zeros((1, 2, 5), dtype=np.int64), device=dev), 2, output_size=[20])
    with pytest.raises(oar.ShapeError, match="kernel_size must be greater than zero"):
        F.max_pool1d(x, 0)
    with pytest.raises(oar.DTypeError, match="floating-point"):
        F.max_pool3d(oar.tensor(np.zeros((1, 1, 2, 2, 2), dtype=np.int64), device=dev), 2, return_indices=True)
    with pytest.raises(oar.ShapeError, match="greater than or equal to 0"):
        F.adaptive_max_pool1d(x, -1)
    with pytest.raises(oar.ShapeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_avg_pool3d(oar.tensor(np.zeros((1, 1, 0, 2, 2)), **f64(dev)), 1)
    with pytest.raises(oar.IndexError, match="out of range"):
        F.max_unpool1d(x, oar.tensor(np.full((1, 2, 5), 99, dtype=np.int64), device=dev), 2)
    with pytest.raises(oar.ShapeError, match="divisor must be not zero"):
        F.avg_pool3d(oar.tensor(randn(1, 1, 2, 2, 2), **f64(dev)), 2, divisor_override=0)


# ================================================================ interpolate and friends
INTERP_CASES = [
    # (input shape, kwargs)
    ((2, 3, 5), dict(size=8, mode="nearest")),
    ((2, 3, 7), dict(scale_factor=0.6, mode="nearest")),
    ((1, 2, 4, 5), dict(scale_factor=(1.7, 2.3), mode="nearest")),
    ((1, 2, 4, 5), dict(scale_factor=1.7, mode="nearest", recompute_scale_factor=True)),
    ((1, 2, 5, 4), dict(size=(7, 3), mode="nearest-exact")),
    ((1, 1, 3, 4, 5), dict(scale_factor=(2, 0.5, 1.5), mode="nearest")),
    ((2, 3, 5), dict(scale_factor=1.1, mode="nearest")),  # the size is kept, the scale is not 1
    ((1, 2, 4, 5), dict(scale_factor=2, mode="nearest")),  # integer factors: each entry repeated
    ((2, 3, 5), dict(size=15, mode="nearest")),
    ((1, 1, 2, 3, 4), dict(scale_factor=(3, 1, 2.0), mode="nearest")),
    ((2, 3, 5), dict(scale_factor=1.1, mode="linear")),
    ((1, 1, 5, 3), dict(scale_factor=1.1, mode="bicubic")),
    ((2, 3, 5), dict(size=9, mode="linear", align_corners=False)),
    ((2, 3, 5), dict(size=3, mode="linear", align_corners=True)),
    ((2, 3, 6), dict(scale_factor=1.5, mode="linear")),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear", align_corners=False)),
    ((1, 2, 4, 5), dict(size=(7, 9), mode="bilinear", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=(1.3, 0.7), mode="bilinear", recompute_scale_factor=True)),
    ((1, 2, 4, 5), dict(scale_factor=2.5, mode="bilinear")),
    ((1, 2, 4, 5), dict(size=(6, 8), mode="bicubic", align_corners=False)),
    ((1, 2, 5, 4), dict(size=(3, 7), mode="bicubic", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=1.5, mode="bicubic")),
    ((1, 2, 3, 4, 5), dict(size=(5, 3, 7), mode="trilinear", align_corners=False)),
    ((1, 2, 3, 4, 5), dict(scale_factor=(1.5, 2, 0.6), mode="trilinear", align_corners=True)),
    ((2, 3, 9), dict(size=4, mode="area")),
    ((1, 2, 3, 4), dict(scale_factor=(2, 1.5), mode="area")),  # area upsampling: overlapping bins
    ((1, 2, 7, 5), dict(size=(3, 2), mode="area")),
    ((1, 2, 4, 6, 5), dict(scale_factor=0.5, mode="area")),
    ((1, 2, 7, 8), dict(size=(3, 5), mode="bilinear", antialias=True)),
    ((1, 2, 7, 8), dict(size=(4, 3), mode="bicubic", antialias=True)),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(INTERP_CASES)))
def test_interpolate_matches_torch(torch, dev, case):
    shape, kw = INTERP_CASES[case]
    # torch 1.13's nearest / bicubic backward copies the gradient when the size is kept even though its forward
    # resampled with the given scale: there oar's gradient is checked as the adjoint of its (linear) forward
    kept = kw.get("scale_factor") == 1.1 and kw["mode"] != "linear"
    x = randn(*shape)
    both(lambda v: F.interpolate(v, **kw), lambda v: torch.nn.functional.interpolate(v, **kw), [x], dev,
         grads=not kept)
    if kept:
        xo = oar.tensor(x, requires_grad=True, **f64(dev))
        y = F.interpolate(xo, **kw)
        W, d = randn(*y.shape), randn(*shape)
        (y * oar.tensor(W, **f64(dev))).sum().backward()
        lhs = float(np.sum(N(F.interpolate(oar.tensor(d, **f64(dev)), **kw)) * W))
        assert abs(lhs - float(np.sum(N(xo.grad) * d))) < 1e-9 * max(1.0, abs(lhs))


@pytest.mark.parametrize("dev", DEVICES)
def test_upsample_modules_match_torch(torch, dev):
    for args, kw, shape in (((), dict(scale_factor=2), (1, 2, 3, 4)),
                            ((), dict(size=(5, 7), mode="bilinear", align_corners=True), (1, 2, 3, 4)),
                            ((), dict(scale_factor=(1.5, 2.0), mode="bicubic"), (1, 1, 4, 3)),
                            ((), dict(size=7, mode="linear"), (2, 2, 5))):
        om, tm = nn.Upsample(*args, **kw), torch.nn.Upsample(*args, **kw)
        assert repr(om) == repr(tm)
        both(om, tm, [randn(*shape)], dev)
    for cls in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        om, tm = getattr(nn, cls)(scale_factor=2), getattr(torch.nn, cls)(scale_factor=2)
        assert repr(om) == repr(tm)
        both(om, tm, [randn(1, 2, 3, 5)], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_shuffles_match_torch(torch, dev):
    TF = torch.nn.functional
    for shape, r in (((2, 8, 3, 2), 2), ((9, 2, 3), 3), ((2, 1, 4, 1, 2), 2)):
        both(lambda x: F.pixel_shuffle(x, r), lambda x: TF.pixel_shuffle(x, r), [randn(*shape)], dev)
    for shape, r in (((2, 2, 4, 6), 2), ((1, 6, 3), 3), ((2, 1, 3, 4, 2), 2)):
        both(lambda x: F.pixel_unshuffle(x, r), lambda x: TF.pixel_unshuffle(x, r), [randn(*shape)], dev)
    for shape, g in (((2, 6, 3), 3), ((1, 4, 2, 3), 2), ((2, 6, 1, 2, 2), 2)):
        x = randn(*shape)
        both(lambda v: F.channel_shuffle(v, g), lambda v: TF.channel_shuffle(v, g), [x], dev, grads=False)
        # torch's channel_shuffle has no derivative: the gradient of the same permutation written as views
        both(lambda v: F.channel_shuffle(v, g),
             lambda v: v.reshape(shape[0], g, shape[1] // g, *shape[2:]).transpose(1, 2).reshape(*shape), [x], dev)
    for om, tm, shape in ((nn.PixelShuffle(2), torch.nn.PixelShuffle(2), (1, 4, 2, 3)),
                          (nn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3), (1, 1, 3, 6)),
                          (nn.ChannelShuffle(2), torch.nn.ChannelShuffle(2), (1, 4, 2, 2))):
        assert repr(om) == repr(tm)
        both(om, tm, [randn(*shape)], dev, grads=not isinstance(om, nn.ChannelShuffle))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_matches_torch(torch, dev, mode):
    TF = torch.nn.functional
    for pm in ("zeros", "border", "reflection"):
        for ac in (False, True):
            kw = dict(mode=mode, padding_mode=pm, align_corners=ac)
            grid = RNG.uniform(-1.4, 1.4, (2, 3, 4, 2))
            both(lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw),
                 [randn(2, 3, 4, 5), grid], dev)
            if mode != "bicubic":
                grid = RNG.uniform(-1.4, 1.4, (1, 2, 3, 2, 3))
                both(lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw),
                     [randn(1, 2, 3, 4, 5), grid], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_affine_grid_matches_torch(torch, dev):
    TF = torch.nn.functional
    for ac in (False, True):
        both(lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=ac),
             lambda t: TF.affine_grid(t, [2, 3, 4, 5], align_corners=ac), [randn(2, 2, 3)], dev)
        both(lambda t: F.affine_grid(t, [1, 1, 3, 2, 4], align_corners=ac),
             lambda t: TF.affine_grid(t, [1, 1, 3, 2, 4], align_corners=ac), [randn(1, 3, 4)], dev)
    # the usual pairing: a rotation resampled by grid_sample
    th = np.array([[[0.8, -0.6, 0.1], [0.6, 0.8, -0.2]]])
    both(lambda x, t: F.grid_sample(x, F.affine_grid(t, [1, 2, 5, 6], align_corners=False), align_corners=False),
         lambda x, t: TF.grid_sample(x, TF.affine_grid(t, [1, 2, 5, 6], align_corners=False), align_corners=False),
         [randn(1, 2, 5, 6), th], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_sampling_errors(dev):
    x = oar.tensor(randn(1, 2, 4, 5), **f64(dev))
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D input|linear mode needs 3D"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(3, 4, 5))
    with pytest.raises(oar.ShapeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(oar.ShapeError, match="width to be divisible"):
        F.pixel_unshuffle(x, 2)
    with pytest.raises(oar.ShapeError, match="divisible by groups"):
        F.channel_shuffle(oar.tensor(randn(1, 3, 2), **f64(dev)), 2)
    g = oar.tensor(randn(1, 3, 3, 2), **f64(dev))
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.raises(oar.ShapeError, match="same batch size"):
        F.grid_sample(oar.tensor(randn(2, 2, 4, 5), **f64(dev)), g, align_corners=False)
    with pytest.raises(oar.ShapeError, match="size 2 in last dimension"):
        F.grid_sample(x, oar.tensor(randn(1, 3, 3, 3), **f64(dev)), align_corners=False)
    with pytest.raises(oar.ShapeError, match="sizes should be greater than 0"):
        F.interpolate(x, size=0)
    with pytest.raises(TypeError, match="size must be an int or a tuple of ints"):
        F.interpolate(x, size=2.5)
    with pytest.raises(oar.DTypeError, match="floating-point"):
        F.interpolate(oar.tensor(np.zeros((1, 1, 4), dtype=np.int64), device=dev), size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D"):
        F.interpolate(oar.tensor(randn(4, 4), **f64(dev)), size=3)
    with pytest.raises(oar.ShapeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(oar.tensor(randn(1, 1, 2, 2, 2), **f64(dev)), oar.tensor(randn(1, 1, 1, 1, 3), **f64(dev)),
                      mode="bicubic", align_corners=False)
    with pytest.raises(oar.DTypeError, match="floating-point"):
        F.grid_sample(oar.tensor(np.zeros((1, 2, 4, 5), dtype=np.int64), device=dev), g, align_corners=False)
    with pytest.raises(oar.ShapeError, match="positive upscale_factor"):
        F.pixel_shuffle(x, 0)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(oar.tensor(randn(1, 3, 4), **f64(dev)), [1, 1, 3, 3], align_corners=False)
    with pytest.warns(UserWarning, match="align_corners"):
        F.affine_grid(oar.tensor(randn(1, 2, 3), **f64(dev)), [1, 1, 3, 3])


# ================================================================ fold / unfold
FOLD_CASES = [
    dict(kernel_size=(2, 3)),
    dict(kernel_size=3, dilation=(1, 2), padding=1, stride=(2, 1)),
    dict(kernel_size=(3, 2), padding=(2, 0), stride=2),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(FOLD_CASES)))
def test_fold_unfold_match_torch(torch, dev, case):
    kw = FOLD_CASES[case]
    TF = torch.nn.functional
    x = randn(2, 3, 7, 6)
    cols = both(lambda v: F.unfold(v, **kw), lambda v: TF.unfold(v, **kw), [x], dev)[0]
    both(lambda v: F.unfold(v, **kw), lambda v: TF.unfold(v, **kw), [x[0]], dev)  # unbatched
    c = N(cols)
    both(lambda v: F.fold(v, (7, 6), **kw), lambda v: TF.fold(v, (7, 6), **kw), [c], dev)
    both(lambda v: F.fold(v, (7, 6), **kw), lambda v: TF.fold(v, (7, 6), **kw), [c[1]], dev)
    om, tm = nn.Unfold(**kw), torch.nn.Unfold(**kw)
    assert repr(om) == repr(tm)
    both(om, tm, [x], dev)
    om, tm = nn.Fold((7, 6), **kw), torch.nn.Fold((7, 6), **kw)
    assert repr(om) == repr(tm)
    both(om, tm, [c], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_fold_errors(dev):
    with pytest.raises(oar.ShapeError, match="Only 3D or 4D input"):
        F.unfold(oar.tensor(randn(2, 3), **f64(dev)), 2)
    with pytest.raises(oar.ShapeError, match="components must be at least one"):
        F.unfold(oar.tensor(randn(1, 1, 2, 2), **f64(dev)), 3)
    with pytest.raises(oar.ShapeError, match="divisible by the product of kernel_size"):
        F.fold(oar.tensor(randn(1, 5, 4), **f64(dev)), (3, 3), 2)
    with pytest.raises(oar.ShapeError, match="match the calculated number of sliding blocks"):
        F.fold(oar.tensor(randn(1, 4, 5), **f64(dev)), (3, 3), 2)
    with pytest.raises(oar.ShapeError, match="greater than zero"):
        F.unfold(oar.tensor(randn(1, 1, 4, 4), **f64(dev)), 2, stride=0)


# ================================================================ embeddings
@pytest.mark.parametrize("dev", DEVICES)
def test_embedding_options_match_torch(torch, dev):
    TF = torch.nn.functional
    idx = np.array([[1, 3, 0, 3], [4, 1, 1, 2]])
    both(lambda w, i: F.embedding(i, w, padding_idx=1), lambda w, i: TF.embedding(i, w, padding_idx=1),
         [randn(5, 3), idx], dev)
    both(lambda w, i: F.embedding(i, w, padding_idx=-1, scale_grad_by_freq=True),
         lambda w, i: TF.embedding(i, w, padding_idx=-1, scale_grad_by_freq=True), [randn(5, 3), idx], dev)
    # max_norm renormalises the looked-up rows of the weight in place (so compare the weights too)
    for norm_type in (2.0, 1.0, 3.0):
        w = randn(6, 4) * 2
        wo, wt = oar.tensor(w, **f64(dev)), to_torch(w)
        both(lambda i: F.embedding(i, wo, max_norm=1.5, norm_type=norm_type),
             lambda i: TF.embedding(i, wt, max_norm=1.5, norm_type=norm_type), [np.array([5, 0, 2, 0])], dev)
        _assert_same(wo, wt, 1e-9, "renormalised weight")
    # the module: padding row zeroed at init, no gradient to it; from_pretrained
    om = nn.Embedding(6, 3, padding_idx=2, **f64(dev))
    assert not N(om.weight)[2].any()
    tm = torch.nn.Embedding(6, 3, padding_idx=2).double()
    assert repr(om) == repr(tm)
    with torch.no_grad():
        tm.weight.copy_(to_torch(N(om.weight)))
    yo = om(oar.tensor(idx, device=dev))
    yt = tm(to_torch(idx))
    _assert_same(yo, yt, 1e-12, "embedding output")
    W = randn(*yt.shape)
    (yo * oar.tensor(W, **f64(dev))).sum().backward()
    (yt * to_torch(W)).sum().backward()
    _assert_same(om.weight.grad, tm.weight.grad, 1e-12, "embedding weight grad")
    pre = nn.Embedding.from_pretrained(oar.tensor(randn(4, 2), **f64(dev)), max_norm=0.5)
    assert not pre.weight.requires_grad and repr(pre) == "Embedding(4, 2, max_norm=0.5)"
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(oar.DTypeError):
        F.embedding(oar.tensor(randn(3), **f64(dev)), oar.tensor(randn(4, 2), **f64(dev)), max_norm=1.0)


BAG_CASES = [
    dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
    dict(mode="sum", padding_idx=2), dict(mode="mean", padding_idx=0), dict(mode="max", padding_idx=2),
    dict(mode="sum", include_last_offset=True), dict(mode="mean", include_last_offset=True),
    dict(mode="max", include_last_offset=True),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", range(len(BAG_CASES)))
def test_embedding_bag_matches_torch(torch, dev, case):
    kw = BAG_CASES[case]
    TF = torch.nn.functional
    w = randn(6, 3)
    flat = np.array([1, 2, 4, 4, 0, 2, 5, 3])
    offsets = np.array([0, 3, 3, 5]) if not kw.get("include_last_offset") else np.array([0, 3, 3, 5, 8])
    # bag 1 is empty; with padding_idx some bags hold only padding
    both(lambda w_, i, o: F.embedding_bag(i, w_, o, **kw), lambda w_, i, o: TF.embedding_bag(i, w_, o, **kw),
         [w, flat, offsets], dev)
    if not kw.get("include_last_offset"):
        both(lambda w_, i: F.embedding_bag(i, w_, **kw), lambda w_, i: TF.embedding_bag(i, w_, **kw),
             [w, flat.reshape(2, 4)], dev)
    if kw["mode"] == "sum":
        both(lambda w_, i, o, p: F.embedding_bag(i, w_, o, per_sample_weights=p, **kw),
             lambda w_, i, o, p: TF.embedding_bag(i, w_, o, per_sample_weights=p, **kw),
             [w, flat, offsets, randn(8)], dev)
    om = nn.EmbeddingBag(6, 3, **kw, **f64(dev))
    tm = torch.nn.EmbeddingBag(6, 3, **kw).double()
    assert repr(om) == repr(tm)
    with torch.no_grad():
        tm.weight.copy_(to_torch(N(om.weight)))
    yo = om(oar.tensor(flat, device=dev), oar.tensor(offsets, device=dev))
    yt = tm(to_torch(flat), to_torch(offsets))
    _assert_same(yo, yt, 1e-12, "EmbeddingBag output")
    W = randn(*yt.shape)
    (yo * oar.tensor(W, **f64(dev))).sum().backward()
    (yt * to_torch(W)).sum().backward()
    _assert_same(om.weight.grad, tm.weight.grad, 1e-12, "EmbeddingBag weight grad")


@pytest.mark.parametrize("dev", DEVICES)
def test_embedding_bag_max_norm_and_errors(torch, dev):
    TF = torch.nn.functional
    w = randn(5, 3) * 2
    wo, wt = oar.tensor(w, **f64(dev)), to_torch(w)
    flat, off = np.array([0, 1, 4, 1]), np.array([0, 2])
    both(lambda i, o: F.embedding_bag(i, wo, o, max_norm=1.0, mode="sum"),
         lambda i, o: TF.embedding_bag(i, wt, o, max_norm=1.0, mode="sum"), [flat, off], dev)
    _assert_same(wo, wt, 1e-9, "renormalised weight")
    W = oar.tensor(randn(5, 3), **f64(dev))
    i1 = oar.tensor(flat, device=dev)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i1, W)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(i1.reshape(2, 2), W, oar.tensor(off, device=dev))
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(i1, W, oar.tensor(off, device=dev), mode="mean",
                        per_sample_weights=oar.tensor(randn(4), **f64(dev)))
    with pytest.raises(oar.ShapeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(i1, W, oar.tensor(np.array([1, 2]), device=dev))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        nn.EmbeddingBag(3, 2, mode="median")
    with pytest.raises(oar.ShapeError, match="offsets must be non-decreasing"):
        F.embedding_bag(i1, W, oar.tensor(np.array([0, 3, 1]), device=dev))
    with pytest.raises(oar.DTypeError, match="offsets to have an integer dtype"):
        F.embedding_bag(i1, W, oar.tensor(np.array([0.0, 2.0]), device=dev))
    with pytest.raises(oar.IndexError, match="out of range"):
        F.embedding_bag(oar.tensor(np.array([0, 7]), device=dev), W, oar.tensor(np.array([0]), device=dev))
    with pytest.raises(ValueError, match="input has to be 1D or 2D"):
        F.embedding_bag(oar.tensor(np.zeros((1, 1, 1), dtype=np.int64), device=dev), W)


# ================================================================ edges: exact borders, float32 rules, options
@pytest.mark.parametrize("dev", DEVICES)
def test_grid_sample_on_exact_borders(torch, dev):
    """An identity grid with align_corners=True hits the border coordinates exactly: the clipping gradients
    there (zero, as PyTorch) and the values must agree."""
    TF = torch.nn.functional
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = from_torch(TF.affine_grid(to_torch(theta), [1, 1, 3, 4], align_corners=True))
    for pm in ("zeros", "border", "reflection"):
        for mode in ("bilinear", "bicubic"):
            for ac in (True, False):  # False: the grid's +-1 are half a pixel outside
                kw = dict(mode=mode, padding_mode=pm, align_corners=ac)
                both(lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw),
                     [randn(1, 2, 3, 4), grid * 1.0], dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_float32_matches_torch(torch, dev):
    """float32: nearest's source index is computed in float (off-by-one against float64 for some scales)."""
    TF = torch.nn.functional
    x = randn(1, 2, 7, 9).astype(np.float32)
    xo, xt = oar.tensor(x, device=dev), to_torch(x)
    for kw in (dict(scale_factor=(0.7, 1.3), mode="nearest"), dict(size=(11, 5), mode="nearest"),
               dict(size=(5, 13), mode="bilinear", align_corners=False),
               dict(scale_factor=1.7, mode="bicubic", align_corners=True)):
        _assert_same(F.interpolate(xo, **kw), TF.interpolate(xt, **kw), 1e-5, str(kw))
    w = randn(3, 2, 2, 3, 2).astype(np.float32)
    x3 = randn(2, 2, 4, 5, 3).astype(np.float32)
    _assert_same(F.conv3d(oar.tensor(x3, device=dev), oar.tensor(w, device=dev), stride=(2, 1, 1), padding=1),
                 TF.conv3d(to_torch(x3), to_torch(w), stride=(2, 1, 1), padding=1), 1e-5, "conv3d float32")


@pytest.mark.parametrize("dev", DEVICES)
def test_embedding_module_options_match_torch(torch, dev):
    idx = np.array([[0, 2, 2, 5], [1, 2, 0, 0]])
    om = nn.Embedding(6, 4, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, **f64(dev))
    with oar.no_grad():
        om.weight.mul_(3.0)
    tm = torch.nn.Embedding(6, 4, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True).double()
    assert repr(om) == repr(tm)
    with torch.no_grad():
        tm.weight.copy_(to_torch(N(om.weight)))
    yo, yt = om(oar.tensor(idx, device=dev)), tm(to_torch(idx))
    _assert_same(yo, yt, 1e-9, "output")
    _assert_same(om.weight, tm.weight, 1e-9, "renormalised weight")
    W = randn(*yt.shape)
    (yo * oar.tensor(W, **f64(dev))).sum().backward()
    (yt * to_torch(W)).sum().backward()
    _assert_same(om.weight.grad, tm.weight.grad, 1e-9, "weight grad")
    # EmbeddingBag with scale_grad_by_freq (sum and mean). torch 1.13's embedding_bag backward divides by the
    # count of the wrong index (counts[indices[i]] for the i-th distinct index), so the gradient reference is
    # torch's embedding (which counts right) reduced per bag
    for mode in ("sum", "mean"):
        ob = nn.EmbeddingBag(6, 3, mode=mode, scale_grad_by_freq=True, **f64(dev))
        tb = torch.nn.EmbeddingBag(6, 3, mode=mode, scale_grad_by_freq=True).double()
        assert repr(ob) == repr(tb)
        with torch.no_grad():
            tb.weight.copy_(to_torch(N(ob.weight)))
        yo, yt = ob(oar.tensor(idx, device=dev)), tb(to_torch(idx))
        _assert_same(yo, yt, 1e-9, "bag output")
        rows = torch.nn.functional.embedding(to_torch(idx), tb.weight, scale_grad_by_freq=True)
        ref = rows.sum(1) if mode == "sum" else rows.mean(1)
        _assert_same(yo, ref, 1e-9, "bag output (reference)")
        W = randn(*yt.shape)
        (yo * oar.tensor(W, **f64(dev))).sum().backward()
        (ref * to_torch(W)).sum().backward()
        _assert_same(ob.weight.grad, tb.weight.grad, 1e-9, "bag weight grad")


def test_conv_constructor_errors():
    with pytest.raises(TypeError, match="kernel_size"):
        nn.Conv3d(1, 1, (1, 2))
    with pytest.raises(TypeError, match="in_channels must be an int"):
        nn.Conv1d(1.5, 1, 1)
    with pytest.raises(ValueError, match="Invalid padding string"):
        nn.Conv1d(1, 1, 1, padding="full")
    with pytest.raises(TypeError, match="padding"):
        nn.ConvTranspose2d(1, 1, 1, padding="same")


@pytest.mark.parametrize("dev", DEVICES)
def test_max_unpool_inverts_oar_max_pool(dev):
    """max_unpool(max_pool(x, return_indices)) keeps each window's maximum in place and zeroes the rest."""
    x = randn(2, 3, 6, 4)
    y, ind = F.max_pool2d(oar.tensor(x, **f64(dev)), 2, return_indices=True)
    back = N(F.max_unpool2d(y, ind, 2))
    blocks = x.reshape(2, 3, 3, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 3, 2, 4)
    keep = blocks == blocks.max(axis=-1, keepdims=True)
    ref = np.where(keep, blocks, 0.0).reshape(2, 3, 3, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 6, 4)
    np.testing.assert_array_equal(back, ref)


@pytest.mark.parametrize("cls, args", [("Conv1d", (4, 6, 3)), ("Conv3d", (2, 4, (1, 2, 3))),
                                       ("ConvTranspose1d", (4, 6, 3)), ("ConvTranspose2d", (6, 4, 2)),
                                       ("ConvTranspose3d", (3, 2, (2, 1, 2)))])
def test_conv_initialisation_bounds(cls, args):
    """kaiming_uniform_(a=sqrt(5)): weight and bias in +-1/sqrt(fan_in), fan_in = weight.shape[1] * kernel."""
    m = getattr(nn, cls)(*args, groups=2 if args[0] % 2 == 0 and args[1] % 2 == 0 else 1)
    w = N(m.weight)
    bound = 1.0 / math.sqrt(int(np.prod(w.shape[1:])))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert np.abs(N(m.bias)).max() <= bound and N(m.bias).std() > 0
    assert sorted(m.state_dict()) == ["bias", "weight"]


@pytest.mark.parametrize("dev", DEVICES)
def test_embedding_bag_without_entries_and_trailing_entries(torch, dev):
    TF = torch.nn.functional
    empty = np.zeros(0, dtype=np.int64)
    for mode in ("sum", "mean", "max"):  # no entries at all: zeros, and a zero (not a missing) gradient
        both(lambda w, i, o: F.embedding_bag(i, w, o, mode=mode), lambda w, i, o: TF.embedding_bag(i, w, o, mode=mode),
             [randn(4, 3), empty, np.array([0, 0])], dev)
    # include_last_offset: entries past offsets[-1] belong to no bag (torch 1.13 reads out of bounds there)
    w = randn(5, 2)
    y = F.embedding_bag(oar.tensor(np.array([1, 2, 3, 4]), device=dev), oar.tensor(w, **f64(dev)),
                        oar.tensor(np.array([0, 1, 3]), device=dev), mode="sum", include_last_offset=True)
    np.testing.assert_allclose(N(y), np.stack([w[1], w[2] + w[3]]), rtol=1e-12)
    y = F.embedding_bag(oar.tensor(np.array([1, 2, 3, 4, 0]), device=dev), oar.tensor(w, **f64(dev)),
                        oar.tensor(np.array([0, 1, 3]), device=dev), mode="max", include_last_offset=True)
    np.testing.assert_allclose(N(y), np.stack([w[1], np.maximum(w[2], w[3])]), rtol=1e-12)


@pytest.mark.parametrize("dev", DEVICES)
def test_max_pool_nan_and_inf_windows(torch, dev):
    """NaN wins a window (as PyTorch); a window of -inf that starts in the padding points at its first input."""
    TF = torch.nn.functional
    x = np.array([[[-np.inf, -np.inf, 1.0, np.nan, -np.inf, 2.0, -np.inf]]])
    for kw in (dict(kernel_size=2, stride=1, padding=1), dict(kernel_size=3, stride=2, padding=1, dilation=2)):
        for ri in (True, False):
            both(lambda v: F.max_pool1d(v, return_indices=ri, **kw),
                 lambda v: TF.max_pool1d(v, return_indices=ri, **kw), [x], dev)
        # one NaN per window: with several torch takes the last NaN and oar the first (see the report)
        x2 = np.concatenate([x, [[[-np.inf, 3.0, -np.inf, -np.inf, 0.5, -np.inf, -np.inf]]],
                             [[[-np.inf] * 7]]], axis=1)[None]  # [1, 1, 3, 7]
        both(lambda v: F.max_pool2d(v, return_indices=True, **kw),
             lambda v: TF.max_pool2d(v, return_indices=True, **kw), [x2], dev)
        if kw["kernel_size"] == 2:  # depth 2 is too small for the dilated window
            both(lambda v: F.max_pool3d(v, return_indices=True, **kw),
                 lambda v: TF.max_pool3d(v, return_indices=True, **kw), [np.stack([x2, x2[:, :, ::-1]], axis=2)],
                 dev)
    both(lambda v: F.adaptive_max_pool1d(v, 3, True), lambda v: TF.adaptive_max_pool1d(v, 3, True), [x], dev)


def test_embedding_bag_construction(torch):
    om, tm = nn.EmbeddingBag(5, 3, padding_idx=-1, mode="sum"), torch.nn.EmbeddingBag(5, 3, padding_idx=-1, mode="sum")
    assert om.padding_idx == tm.padding_idx == 4 and repr(om) == repr(tm)
    assert not N(om.weight)[4].any() and N(om.weight)[:4].std() > 0.3  # N(0, 1) rows, the padding row zeroed
    assert list(om.state_dict()) == ["weight"]
    w = oar.tensor(randn(4, 2))
    pre = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert not pre.weight.requires_grad and pre.mode == "max"
    np.testing.assert_array_equal(N(pre.weight), N(w))
    assert nn.EmbeddingBag.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.EmbeddingBag(3, 2, sparse=True)
