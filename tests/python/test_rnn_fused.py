"""The fused recurrent layer (catalog rnn_layer / rnn_layer_backward) on every present device.

The op itself against a NumPy loop of PyTorch's equations (every mode, both
directions, with and without biases, initial cell state and per-sequence
lengths), its gradients against central finite differences in float64 and
against the autograd of the composed layer (oar.nn.rnn.fused_kernels = False);
nn.RNN/LSTM/GRU through the fused path against the composition for
multi-layer, bidirectional, batch_first and packed batches in float32 (the CPU
takes oneDNN's RNN primitives there, the other devices the kernel family) and
float64; and the errors bad arguments get."""
import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.rnn as rnn_mod
import oar.nn.utils.rnn as rnn_utils
from oar_testing import T, N

DEVICES = oar._C.info()["devices"]
MODES = ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_layer(mode, x, h0, c0, wih, whh, bih, bhh, lengths, reverse):
    """PyTorch's equations step by step; a sequence past its length keeps its state and outputs 0."""
    Tn, Nn, _ = x.shape
    H = whh.shape[1]
    bih = np.zeros(wih.shape[0]) if bih is None else bih
    bhh = np.zeros(wih.shape[0]) if bhh is None else bhh
    lens = [Tn] * Nn if lengths is None else list(lengths)
    y = np.zeros((Tn, Nn, H))
    h, c = h0.copy(), (np.zeros_like(h0) if c0 is None else c0.copy())
    for t in (range(Tn - 1, -1, -1) if reverse else range(Tn)):
        gi, gh = x[t] @ wih.T + bih, h @ whh.T + bhh
        if mode == "LSTM":
            i, f, g, o = np.split(gi + gh, 4, axis=-1)
            cn = _sig(f) * c + _sig(i) * np.tanh(g)
            hn = _sig(o) * np.tanh(cn)
        elif mode == "GRU":
            ir, iz, i_n = np.split(gi, 3, axis=-1)
            hr, hz, h_n = np.split(gh, 3, axis=-1)
            r, z = _sig(ir + hr), _sig(iz + hz)
            n = np.tanh(i_n + r * h_n)
            hn, cn = (1 - z) * n + z * h, c
        else:
            pre = gi + gh
            hn, cn = (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0.0)), c
        valid = np.array([t < n for n in lens])[:, None]
        h = np.where(valid, hn, h)
        c = np.where(valid, cn, c)
        y[t] = np.where(valid, hn, 0.0)
    return y, h, (c if mode == "LSTM" else np.zeros_like(h))


def _inputs(mode, rng, Tn=5, Nn=3, I=4, H=3, bias=True, cell=True):
    G = GATES[mode] * H
    a = {"x": rng.standard_normal((Tn, Nn, I)), "h0": rng.standard_normal((Nn, H)) * 0.5,
         "wih": rng.standard_normal((G, I)) * 0.5, "whh": rng.standard_normal((G, H)) * 0.5,
         "c0": rng.standard_normal((Nn, H)) * 0.5 if mode == "LSTM" and cell else None,
         "bih": rng.standard_normal(G) * 0.3 if bias else None, "bhh": rng.standard_normal(G) * 0.3 if bias else None}
    return a


def _call(a, mode, dev, dt, lengths=None, reverse=False, grad=False):
    ts = {k: (T(v, dev, dt, requires_grad=grad) if v is not None else None) for k, v in a.items()}
    lens = oar.tensor(lengths, dtype=oar.int64, device=dev) if lengths is not None else None
    out = oar.rnn_layer(ts["x"], ts["h0"], ts["wih"], ts["whh"], ts["c0"], ts["bih"], ts["bhh"], lens, mode=mode,
                        reverse=reverse)
    return ts, out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("lengths", [None, [5, 2, 4]])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_matches_numpy(device, mode, reverse, lengths, dtype):
    rng = np.random.default_rng(1)
    a = _inputs(mode, rng, bias=not (mode == "GRU" and reverse))
    dt = getattr(oar, dtype)
    _, (y, hn, cn) = _call(a, mode, device, dt, lengths, reverse)
    ry, rh, rc = _np_layer(mode, a["x"], a["h0"], a["c0"], a["wih"], a["whh"], a["bih"], a["bhh"], lengths, reverse)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in ((y, ry), (hn, rh), (cn, rc)):
        np.testing.assert_allclose(N(got), want, rtol=tol, atol=tol)


def _fd(f, x, eps=1e-6):
    g = np.zeros(x.shape)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        g.reshape(-1)[i] = (up - down) / (2 * eps)
    return g


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse,lengths", [(False, None), (True, [3, 1, 2]), (False, [2, 3, 0])])
def test_gradients_match_finite_differences(device, mode, reverse, lengths):
    rng = np.random.default_rng(2)
    a = _inputs(mode, rng, Tn=3, Nn=3, I=2, H=2)
    Ry, Rh, Rc = rng.standard_normal((3, 3, 2)), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))

    def loss_np():
        y, h, c = _np_layer(mode, a["x"], a["h0"], a["c0"], a["wih"], a["whh"], a["bih"], a["bhh"], lengths, reverse)
        return float((y * Ry).sum() + (h * Rh).sum() + (c * Rc).sum())

    ts, (y, h, c) = _call(a, mode, device, oar.float64, lengths, reverse, grad=True)
    ((y * T(Ry, device)).sum() + (h * T(Rh, device)).sum() + (c * T(Rc, device)).sum()).backward()
    for k, v in a.items():
        if v is None:
            continue
        np.testing.assert_allclose(N(ts[k].grad), _fd(loss_np, v), rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
def test_only_some_outputs_used(device, mode):
    """Gradients reach the layer through h_n alone, or through the output alone."""
    rng = np.random.default_rng(3)
    a = _inputs(mode, rng)
    for pick in (0, 1):
        ts, out = _call(a, mode, device, oar.float64, grad=True)
        out[pick].sum().backward()
        def loss_np():
            r = _np_layer(mode, a["x"], a["h0"], a["c0"], a["wih"], a["whh"], a["bih"], a["bhh"], None, False)
            return float(r[pick].sum())
        for k in ("x", "whh"):
            np.testing.assert_allclose(N(ts[k].grad), _fd(loss_np, a[k]), rtol=1e-6, atol=1e-7, err_msg=k)


def _module(mode, **kw):
    if mode == "LSTM":
        return nn.LSTM(**kw)
    if mode == "GRU":
        return nn.GRU(**kw)
    return nn.RNN(nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kw)


def _run_module(m, x, hx, packed_lengths, fused):
    old = rnn_mod.fused_kernels
    rnn_mod.fused_kernels = fused
    try:
        for p in m.parameters():
            p.grad = None
        x = x.detach().requires_grad_(True)
        inp = rnn_utils.pack_padded_sequence(x, packed_lengths, enforce_sorted=False) if packed_lengths else x
        out, hn = m(inp, hx)
        if packed_lengths:
            out, _ = rnn_utils.pad_packed_sequence(out)
        hs = hn if isinstance(hn, tuple) else (hn,)
        w = oar.arange(out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape) / out.numel()
        loss = (out * w).sum() + sum((h * h).sum() for h in hs)
        loss.backward()
        return [N(out)] + [N(h) for h in hs] + [N(x.grad)] + [N(p.grad) for p in m.parameters()]
    finally:
        rnn_mod.fused_kernels = old


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["padded", "batch_first_state", "packed"])
def test_module_fused_equals_composed(device, mode, dtype, layout):
    oar.manual_seed(4)
    dt = getattr(oar, dtype)
    m = _module(mode, input_size=5, hidden_size=6, num_layers=2, bidirectional=True,
                batch_first=layout == "batch_first_state").to(device).to(dt)
    rng = np.random.default_rng(4)
    x = T(rng.standard_normal((4, 7, 5) if layout == "batch_first_state" else (7, 4, 5)), device, dt)
    hx = None
    if layout == "batch_first_state":
        hs = [T(rng.standard_normal((4, 4, 6)) * 0.5, device, dt) for _ in range(2 if mode == "LSTM" else 1)]
        hx = tuple(hs) if mode == "LSTM" else hs[0]
    lengths = [7, 3, 5, 1] if layout == "packed" else None
    fused = _run_module(m, x, hx, lengths, True)
    composed = _run_module(m, x, hx, lengths, False)
    tol = 2e-5 if dtype == "float32" else 1e-11
    for f, c in zip(fused, composed):
        np.testing.assert_allclose(f, c, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_sequence_and_zero_length(device):
    """T = 0 returns the initial state; a zero length leaves its sequence at the initial state."""
    rng = np.random.default_rng(5)
    a = _inputs("LSTM", rng, Tn=0)
    _, (y, h, c) = _call(a, "LSTM", device, oar.float32)
    assert tuple(y.shape) == (0, 3, 3)
    np.testing.assert_allclose(N(h), a["h0"], rtol=1e-6)
    np.testing.assert_allclose(N(c), a["c0"], rtol=1e-6)


def test_bad_arguments_raise():
    rng = np.random.default_rng(6)
    a = _inputs("LSTM", rng)
    t = {k: T(v, "cpu:0", oar.float32) for k, v in a.items()}
    with pytest.raises(ValueError, match="mode"):
        oar.rnn_layer(t["x"], t["h0"], t["wih"], t["whh"], mode="LSTMX")
    with pytest.raises(oar.ShapeError, match="weight_hh"):
        oar.rnn_layer(t["x"], t["h0"], t["wih"], t["whh"], mode="GRU")
    with pytest.raises(oar.ShapeError, match="hx"):
        oar.rnn_layer(t["x"], t["h0"][:2], t["wih"], t["whh"], mode="LSTM")
    with pytest.raises(oar.ShapeError, match="weight_ih"):
        oar.rnn_layer(t["x"][..., :3], t["h0"], t["wih"], t["whh"], mode="LSTM")
    with pytest.raises(oar.DTypeError, match="float32 or float64"):
        oar.rnn_layer(t["x"].to(oar.float16), t["h0"], t["wih"], t["whh"], mode="LSTM")
    with pytest.raises(oar.DTypeError, match="hx"):
        oar.rnn_layer(t["x"], t["h0"].double(), t["wih"], t["whh"], mode="LSTM")
    with pytest.raises(ValueError, match="cx"):
        oar.rnn_layer(t["x"], t["h0"], t["wih"][:9], t["whh"][:9], t["c0"], mode="GRU")
    with pytest.raises(oar.ShapeError, match="lengths"):
        oar.rnn_layer(t["x"], t["h0"], t["wih"], t["whh"], None, None, None,
                      oar.tensor([1, 2], dtype=oar.int64), mode="LSTM")
    with pytest.raises(oar.DTypeError):
        oar.rnn_layer(t["x"], t["h0"], t["wih"], t["whh"], None, None, None,
                      oar.tensor([1.0, 2.0, 3.0]), mode="LSTM")
