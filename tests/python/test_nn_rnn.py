"""nn.RNN / LSTM / GRU and their cells, and oar.nn.utils.rnn, on every present device.

Forward values are checked against NumPy implementations of PyTorch's equations
(LSTM gates i, f, g, o; GRU r, z, n with b_hn inside r * (W_hn h + b_hn)) for
multi-layer, bidirectional, batch_first, initial states and proj_size;
a packed batch of variable lengths gives what running each sequence alone
gives (outputs, final states and gradients); gradients match central finite
differences in float64; with PyTorch importable, a torch module's state_dict
loads unchanged and outputs and gradients agree; a small LSTM learns a toy
task, eagerly and through oar.jit."""
import math

import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.utils.rnn as rnn_utils

from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]


def _np(t):
    return t.detach().cpu().numpy()


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


# ---- NumPy references (float64) ----
def _np_cell(mode, x, state, p, sfx):
    Wih, Whh = p["weight_ih" + sfx], p["weight_hh" + sfx]
    bih = p.get("bias_ih" + sfx, 0.0)
    bhh = p.get("bias_hh" + sfx, 0.0)
    gi, gh = x @ Wih.T + bih, state[0] @ Whh.T + bhh
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, axis=-1)
        c = _sig(f) * state[1] + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        if "weight_hr" + sfx in p:
            h = h @ p["weight_hr" + sfx].T
        return (h, c)
    if mode == "GRU":
        ir, iz, i_n = np.split(gi, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(i_n + r * hn)
        return ((1 - z) * n + z * state[0],)
    pre = gi + gh
    return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0.0),)


def _np_rnn(mode, p, x, num_layers, bidirectional, hx=None):
    """x [T, N, I]; p: the module's parameters as float64 arrays; hx: tuple of [L*D, N, *] or None.
    Returns (output [T, N, D*H], tuple of final states [L*D, N, *])."""
    D = 2 if bidirectional else 1
    T, N = x.shape[:2]
    finals = None
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            idx = layer * D + d
            if hx is None:
                hs = p["weight_hh" + sfx].shape[1]
                state = (np.zeros((N, hs)),) if mode != "LSTM" else (np.zeros((N, hs)),
                                                                     np.zeros((N, p["weight_ih" + sfx].shape[0] // 4)))
            else:
                state = tuple(s[idx] for s in hx)
            out = [None] * T
            for t in (range(T - 1, -1, -1) if d else range(T)):
                state = _np_cell(mode, x[t], state, p, sfx)
                out[t] = state[0]
            outs.append(np.stack(out))
            if finals is None:
                finals = [[] for _ in state]
            for k, s in enumerate(state):
                finals[k].append(s)
        x = np.concatenate(outs, axis=-1)
    return x, tuple(np.stack(f) for f in finals)


def _params(m):
    return {n: _np(p).astype(np.float64) for n, p in m.named_parameters()}


def _make(mode, *args, **kwargs):
    if mode == "LSTM":
        return nn.LSTM(*args, **kwargs)
    if mode == "GRU":
        return nn.GRU(*args, **kwargs)
    return nn.RNN(*args, nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kwargs)


MODES = ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]


# ---- construction ----
def test_parameter_names_shapes_and_init():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    names = [(n, tuple(p.shape)) for n, p in m.named_parameters()]
    want = []
    for layer, isz in ((0, 3), (1, 4)):
        for sfx in ("", "_reverse"):
            want += [(f"weight_ih_l{layer}{sfx}", (20, isz)), (f"weight_hh_l{layer}{sfx}", (20, 2)),
                     (f"bias_ih_l{layer}{sfx}", (20,)), (f"bias_hh_l{layer}{sfx}", (20,)),
                     (f"weight_hr_l{layer}{sfx}", (2, 5))]
    assert names == want
    g = nn.GRU(4, 6, bias=False)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == [("weight_ih_l0", (18, 4)),
                                                                      ("weight_hh_l0", (18, 6))]
    big = nn.LSTM(8, 100)
    bound = 1 / math.sqrt(100)
    for p in big.parameters():
        a = _np(p)
        assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 3
    assert repr(nn.LSTM(3, 5, 2, batch_first=True, bidirectional=True)) == \
        "LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=True)"
    assert repr(nn.RNN(3, 5, nonlinearity="relu")) == "RNN(3, 5, nonlinearity=relu)"
    assert [n for n, _ in nn.GRUCell(3, 4).named_parameters()] == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    with pytest.raises(ValueError):
        nn.GRU(3, 5, proj_size=2)
    with pytest.raises(ValueError):
        nn.LSTM(3, 5, proj_size=5)
    with pytest.raises(ValueError):
        nn.RNN(3, 5, nonlinearity="sigmoid")
    with pytest.warns(UserWarning):
        nn.LSTM(3, 5, dropout=0.5)


# ---- forward vs NumPy ----
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional,batch_first,with_state", [(False, False, False), (True, True, True),
                                                                   (True, False, False)])
def test_forward_matches_numpy(device, mode, bidirectional, batch_first, with_state):
    oar.manual_seed(0)
    rng = np.random.default_rng(1)
    L, D, T, N, I, H = 2, 2 if bidirectional else 1, 5, 3, 4, 6
    m = _make(mode, I, H, num_layers=L, bidirectional=bidirectional, batch_first=batch_first).to(device)
    x = rng.standard_normal((T, N, I)).astype(np.float32)
    hx_np = None
    hx = None
    if with_state:
        hx_np = tuple(rng.standard_normal((L * D, N, H)).astype(np.float32) for _ in range(2 if mode == "LSTM"
                                                                                          else 1))
        hx = tuple(oar.tensor(a, device=device) for a in hx_np)
        hx = hx if mode == "LSTM" else hx[0]
    xin = oar.tensor(x.transpose(1, 0, 2) if batch_first else x, device=device)
    out, hn = m(xin, hx)
    want_out, want_states = _np_rnn(mode, _params(m), x.astype(np.float64), L, bidirectional,
                                    None if hx_np is None else tuple(a.astype(np.float64) for a in hx_np))
    got = _np(out).transpose(1, 0, 2) if batch_first else _np(out)
    np.testing.assert_allclose(got, want_out, rtol=1e-4, atol=1e-5)
    states = hn if mode == "LSTM" else (hn,)
    assert len(states) == len(want_states)
    for s, w in zip(states, want_states):
        assert tuple(s.shape) == (L * D, N, H)
        np.testing.assert_allclose(_np(s), w, rtol=1e-4, atol=1e-5)
    assert str(out.device) == str(oar.device(device))


@pytest.mark.parametrize("device", DEVICES)
def test_lstm_proj_size_matches_numpy(device):
    oar.manual_seed(2)
    rng = np.random.default_rng(2)
    m = nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3).to(device)
    x = rng.standard_normal((5, 2, 4)).astype(np.float32)
    h0 = rng.standard_normal((4, 2, 3)).astype(np.float32)
    c0 = rng.standard_normal((4, 2, 6)).astype(np.float32)
    out, (h, c) = m(oar.tensor(x, device=device), (oar.tensor(h0, device=device), oar.tensor(c0, device=device)))
    want, (wh, wc) = _np_rnn("LSTM", _params(m), x.astype(np.float64), 2, True,
                             (h0.astype(np.float64), c0.astype(np.float64)))
    assert tuple(out.shape) == (5, 2, 6) and tuple(h.shape) == (4, 2, 3) and tuple(c.shape) == (4, 2, 6)
    np.testing.assert_allclose(_np(out), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(h), wh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(c), wc, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_unbatched_input(device, mode):
    m = _make(mode, 3, 4, num_layers=2, bidirectional=True).to(device)
    x = oar.randn(5, 3, device=device)
    out, hn = m(x)
    out_b, hn_b = m(x.unsqueeze(1))
    assert tuple(out.shape) == (5, 8)
    np.testing.assert_allclose(_np(out), _np(out_b)[:, 0], rtol=1e-6, atol=1e-6)
    if mode == "LSTM":
        assert tuple(hn[0].shape) == (4, 4) and tuple(hn[1].shape) == (4, 4)
        with pytest.raises(RuntimeError, match="2-D"):
            m(x, (oar.zeros(4, 1, 4, device=device), oar.zeros(4, 1, 4, device=device)))
    else:
        assert tuple(hn.shape) == (4, 4)
        np.testing.assert_allclose(_np(hn), _np(hn_b)[:, 0], rtol=1e-6, atol=1e-6)


def test_bad_shapes_raise():
    m = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 7"):
        m(oar.randn(5, 2, 7))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        m(oar.randn(5, 2, 3), (oar.zeros(1, 3, 4), oar.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match=r"Expected cell size \(1, 2, 4\), got \[1, 2, 5\]"):
        m(oar.randn(5, 2, 3), (oar.zeros(1, 2, 4), oar.zeros(1, 2, 5)))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        m(oar.randn(2, 5, 2, 3))
    with pytest.raises(RuntimeError, match="hx must be a tuple"):
        m(oar.randn(5, 2, 3), oar.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match="hx should also be 3-D"):
        m(oar.randn(5, 2, 3), (oar.zeros(2, 4), oar.zeros(2, 4)))
    with pytest.raises(TypeError, match="input must be a Tensor or PackedSequence"):
        m([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        nn.GRU(3, 4)(oar.randn(5, 2, 3), oar.zeros(1, 2, 5))
    with pytest.raises(TypeError, match="hx must be a Tensor"):
        nn.GRU(3, 4)(oar.randn(5, 2, 3), (oar.zeros(1, 2, 4),))
    packed = rnn_utils.pack_sequence([oar.randn(3, 3), oar.randn(2, 3)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 4\)"):
        nn.GRU(3, 4, bidirectional=True)(packed, oar.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match="input_size"):
        nn.GRU(5, 4)(packed)
    with pytest.raises(RuntimeError, match="inconsistent input_size: got 2 expected 3"):
        nn.LSTMCell(3, 4)(oar.randn(2, 2))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 4\), got \(3, 4\)"):
        nn.GRUCell(3, 4)(oar.randn(2, 3), oar.zeros(3, 4))
    with pytest.raises(ValueError, match="Expected input to be 1D or 2D"):
        nn.RNNCell(3, 4)(oar.randn(1, 2, 3))
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.LSTM(3, 4.5)
    with pytest.raises(ValueError, match="Expected `len\\(lengths\\)` to be equal to batch_size"):
        rnn_utils.pack_padded_sequence(oar.randn(4, 2, 3), [4, 3, 1])
    with pytest.raises(oar.ShapeError, match="same trailing shape"):
        rnn_utils.pad_sequence([oar.randn(3, 2), oar.randn(2, 3)])


# ---- cells ----
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell", "RNNCell-relu"])
def test_cells_match_numpy(device, kind):
    rng = np.random.default_rng(3)
    if kind == "RNNCell-relu":
        cell, mode = nn.RNNCell(4, 5, nonlinearity="relu"), "RNN_RELU"
    else:
        cell = getattr(nn, kind)(4, 5)
        mode = {"LSTMCell": "LSTM", "GRUCell": "GRU", "RNNCell": "RNN_TANH"}[kind]
    cell = cell.to(device)
    p = _params(cell)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    h = rng.standard_normal((3, 5)).astype(np.float32)
    c = rng.standard_normal((3, 5)).astype(np.float32)
    state = (h, c) if mode == "LSTM" else (h,)
    want = _np_cell(mode, x.astype(np.float64), tuple(s.astype(np.float64) for s in state), p, "")
    args = tuple(oar.tensor(s, device=device) for s in state)
    got = cell(oar.tensor(x, device=device), args if mode == "LSTM" else args[0])
    got = got if mode == "LSTM" else (got,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(_np(g), w, rtol=1e-4, atol=1e-5)
    # default zero state and unbatched input
    zero = cell(oar.tensor(x[0], device=device))
    want0 = _np_cell(mode, x[0].astype(np.float64), tuple(np.zeros(5) for _ in state), p, "")
    zero = zero if mode == "LSTM" else (zero,)
    for g, w in zip(zero, want0):
        assert tuple(g.shape) == (5,)
        np.testing.assert_allclose(_np(g), w, rtol=1e-4, atol=1e-5)


# ---- packed sequences ----
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
def test_packed_equals_each_sequence_alone(device, mode):
    oar.manual_seed(4)
    rng = np.random.default_rng(4)
    lengths = [3, 6, 1, 4]
    N, T, I, H, L = len(lengths), max(lengths), 3, 5, 2
    m = _make(mode, I, H, num_layers=L, bidirectional=True, batch_first=True).to(device)
    x = rng.standard_normal((N, T, I)).astype(np.float32)
    n_states = 2 if mode == "LSTM" else 1
    hx = [rng.standard_normal((2 * L, N, H)).astype(np.float32) for _ in range(n_states)]
    xt = oar.tensor(x, device=device, requires_grad=True)
    hxt = [oar.tensor(a, device=device, requires_grad=True) for a in hx]
    packed = rnn_utils.pack_padded_sequence(xt, lengths, batch_first=True, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [4, 3, 3, 2, 1, 1]
    out, hn = m(packed, tuple(hxt) if mode == "LSTM" else hxt[0])
    assert isinstance(out, rnn_utils.PackedSequence)
    padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=True)
    assert lens.tolist() == lengths and tuple(padded.shape) == (N, T, 2 * H)
    states = hn if mode == "LSTM" else (hn,)
    R = rng.standard_normal((N, T, 2 * H)).astype(np.float32)
    Rs = [rng.standard_normal((2 * L, N, H)).astype(np.float32) for _ in range(n_states)]
    loss = (padded * oar.tensor(R, device=device)).sum()
    for s, r in zip(states, Rs):
        loss = loss + (s * oar.tensor(r, device=device)).sum()
    loss.backward()
    params = list(m.parameters())
    grads_packed = [_np(p.grad) for p in params]
    m.zero_grad()
    p_np = _params(m)
    for b, n in enumerate(lengths):
        xb = oar.tensor(x[b:b + 1, :n], device=device, requires_grad=True)
        hb = [oar.tensor(a[:, b:b + 1], device=device, requires_grad=True) for a in hx]
        ob, hnb = m(xb, tuple(hb) if mode == "LSTM" else hb[0])
        sb = hnb if mode == "LSTM" else (hnb,)
        np.testing.assert_allclose(_np(padded)[b, :n], _np(ob)[0], rtol=1e-4, atol=1e-5)
        assert np.all(_np(padded)[b, n:] == 0)
        for s, w in zip(states, sb):
            np.testing.assert_allclose(_np(s)[:, b], _np(w)[:, 0], rtol=1e-4, atol=1e-5)
        # the NumPy reference on the sequence alone
        want, wst = _np_rnn(mode, p_np, x[b, :n, None].astype(np.float64), L, True,
                            tuple(a[:, b:b + 1].astype(np.float64) for a in hx))
        np.testing.assert_allclose(_np(padded)[b, :n], want[:, 0], rtol=1e-4, atol=1e-5)
        lb = (ob * oar.tensor(R[b:b + 1, :n], device=device)).sum()
        for s, r in zip(sb, Rs):
            lb = lb + (s * oar.tensor(r[:, b:b + 1], device=device)).sum()
        lb.backward()
        np.testing.assert_allclose(_np(xt.grad)[b, :n], _np(xb.grad)[0], rtol=1e-4, atol=1e-5)
        assert np.all(_np(xt.grad)[b, n:] == 0)
        for g, hbi in zip(hxt, hb):
            np.testing.assert_allclose(_np(g.grad)[:, b], _np(hbi.grad)[:, 0], rtol=1e-4, atol=1e-5)
    for gp, p in zip(grads_packed, params):  # the per-sequence gradients summed over the batch
        np.testing.assert_allclose(gp, _np(p.grad), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_packed_sorted_without_indices(device):
    m = nn.GRU(2, 3).to(device)
    seqs = [oar.randn(n, 2, device=device) for n in (4, 2, 2)]
    packed = rnn_utils.pack_sequence(seqs)
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    out, h = m(packed)
    for i, s in enumerate(rnn_utils.unpack_sequence(out)):
        o, hi = m(seqs[i])
        np.testing.assert_allclose(_np(s), _np(o), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(h)[:, i], _np(hi), rtol=1e-5, atol=1e-6)


# ---- utils.rnn ----
@pytest.mark.parametrize("device", DEVICES)
def test_rnn_utils_pack_pad_roundtrip(device):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((n, 2)).astype(np.float32) for n in (2, 4, 3)]
    seqs = [oar.tensor(a, device=device, requires_grad=True) for a in arrays]
    padded = rnn_utils.pad_sequence(seqs, padding_value=-1.0)
    assert tuple(padded.shape) == (4, 3, 2)
    for b, a in enumerate(arrays):
        np.testing.assert_array_equal(_np(padded)[:len(a), b], a)
        assert np.all(_np(padded)[len(a):, b] == -1)
    bf = rnn_utils.pad_sequence(seqs, batch_first=True)
    np.testing.assert_array_equal(_np(bf), np.transpose(_np(rnn_utils.pad_sequence(seqs)), (1, 0, 2)))
    left = rnn_utils.pad_sequence(seqs, batch_first=True, padding_side="left")
    np.testing.assert_array_equal(_np(left)[0, 2:], arrays[0])
    assert np.all(_np(left)[0, :2] == 0)

    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn_utils.pack_sequence(seqs)
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1]
    assert packed.sorted_indices.tolist() == [1, 2, 0] and packed.unsorted_indices.tolist() == [2, 0, 1]
    want_data = np.concatenate([np.stack([arrays[b][t] for b in (1, 2, 0) if t < len(arrays[b])])
                                for t in range(4)])
    np.testing.assert_array_equal(_np(packed.data), want_data)
    out, lens = rnn_utils.pad_packed_sequence(packed, batch_first=True, padding_value=7.0, total_length=6)
    assert tuple(out.shape) == (3, 6, 2) and lens.tolist() == [2, 4, 3]
    for b, a in enumerate(arrays):
        np.testing.assert_array_equal(_np(out)[b, :len(a)], a)
        assert np.all(_np(out)[b, len(a):] == 7.0)
    with pytest.raises(ValueError, match="total_length"):
        rnn_utils.pad_packed_sequence(packed, total_length=2)
    for a, s in zip(arrays, rnn_utils.unpack_sequence(packed)):
        np.testing.assert_array_equal(_np(s), a)
    for a, s in zip(arrays, rnn_utils.unpad_sequence(padded, oar.tensor([2, 4, 3]))):
        np.testing.assert_array_equal(_np(s), a)
    # gradients flow back through pack -> pad
    (out * out).sum().backward()
    for a, s in zip(arrays, seqs):
        np.testing.assert_allclose(_np(s.grad), 2 * a, rtol=1e-6)
    # PackedSequence API
    assert packed.batch_sizes.device == oar.device("cpu")
    assert str(packed.sorted_indices.device) == str(oar.device(device))
    moved = packed.to("cpu")
    assert str(moved.data.device) == "cpu" and str(moved.sorted_indices.device) == "cpu"
    assert packed.to(packed.data.device) is packed
    d, bs, si, ui = packed
    assert d is packed.data
    assert packed.double().data.dtype == oar.float64
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn_utils.pack_padded_sequence(oar.zeros(3, 2, 1), [3, 0])


# ---- gradients vs finite differences (float64) ----
def _fd_check(loss_fn, tensors, rng, n_coords=4, eps=1e-6, tol=1e-6):
    """loss_fn() -> scalar tensor; compares .grad of each tensor at a few coordinates with central
    differences (tensors are modified in place under no_grad and restored)."""
    for t in tensors:
        t.grad = None
    loss_fn().backward()
    for t in tensors:
        g = _np(t.grad)
        base = _np(t).copy()
        for _ in range(n_coords):
            idx = tuple(int(rng.integers(0, s)) for s in base.shape)
            vals = []
            for sgn in (1, -1):
                arr = base.copy()
                arr[idx] += sgn * eps
                with oar.no_grad():
                    t.copy_(oar.tensor(arr, device=t.device))
                    vals.append(loss_fn().item())
            with oar.no_grad():
                t.copy_(oar.tensor(base, device=t.device))
            fd = (vals[0] - vals[1]) / (2 * eps)
            assert abs(fd - g[idx]) <= tol * max(1.0, abs(fd)) * 10, (idx, fd, g[idx])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(device, mode):
    oar.manual_seed(6)
    rng = np.random.default_rng(6)
    dt = oar.float64
    m = _make(mode, 3, 4, num_layers=2, bidirectional=True).to(device).to(dt)
    x = oar.tensor(rng.standard_normal((4, 2, 3)), dtype=dt, device=device, requires_grad=True)
    hs = [oar.tensor(rng.standard_normal((4, 2, 4)), dtype=dt, device=device, requires_grad=True)
          for _ in range(2 if mode == "LSTM" else 1)]
    R = oar.tensor(rng.standard_normal((4, 2, 8)), dtype=dt, device=device)
    Rh = oar.tensor(rng.standard_normal((4, 2, 4)), dtype=dt, device=device)
    if mode == "RNN_RELU":  # keep away from relu's kink
        with oar.no_grad():
            for p in m.parameters():
                p.copy_(p * 0.5)

    def loss():
        out, hn = m(x, tuple(hs) if mode == "LSTM" else hs[0])
        s = (out * R).sum()
        for h in (hn if mode == "LSTM" else (hn,)):
            s = s + (h * Rh).sum()
        return s
    _fd_check(loss, [x, *hs, m.weight_hh_l0, m.weight_ih_l1_reverse, m.bias_hh_l0_reverse], rng)


@pytest.mark.parametrize("device", DEVICES)
def test_packed_gradients_match_finite_differences(device):
    rng = np.random.default_rng(7)
    dt = oar.float64
    m = nn.LSTM(2, 3, bidirectional=True, proj_size=2).to(device).to(dt)
    x = oar.tensor(rng.standard_normal((4, 3, 2)), dtype=dt, device=device, requires_grad=True)
    R = oar.tensor(rng.standard_normal((4, 3, 4)), dtype=dt, device=device)

    def loss():
        packed = rnn_utils.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        out, (h, c) = m(packed)
        padded, _ = rnn_utils.pad_packed_sequence(out)
        return (padded * R).sum() + (h * h).sum() + c.sum()
    _fd_check(loss, [x, m.weight_hh_l0, m.weight_hr_l0_reverse], rng)


# ---- dropout between layers ----
def test_dropout_between_layers():
    m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = oar.randn(4, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    np.testing.assert_array_equal(_np(a), _np(b))
    m.train()
    c = m(x)[0]
    assert not np.allclose(_np(a), _np(c))
    m0 = nn.LSTM(3, 8, num_layers=2, dropout=0.0)
    np.testing.assert_array_equal(_np(m0(x)[0]), _np(m0.eval()(x)[0]))


# ---- PyTorch comparison ----
@pytest.fixture(scope="module")
def torch():
    return import_torch()


def _torch_to_oar(tm, om, device, dtype=None):
    om.load_state_dict({k: oar.tensor(from_torch(v), dtype=dtype, device=device) for k, v in tm.state_dict().items()})


def _leaf(torch, a):
    """The same float64 values as a torch leaf and (via the caller) an oar leaf."""
    return to_torch(a).requires_grad_(True)


def _states(kind, s):
    return s if kind == "LSTM" else (s,)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind,kwargs", [("LSTM", {}), ("LSTM", {"proj_size": 3}), ("GRU", {}), ("RNN", {}),
                                         ("RNN", {"nonlinearity": "relu"})])
def test_matches_torch(torch, device, kind, kwargs):
    """Two layers, bidirectional, batch_first, given initial states: outputs, final states and the gradients
    of inputs, initial states and every parameter equal PyTorch's (float64); then the same on an unsorted
    packed batch; then dropout=0 in training mode is deterministic and equals eval mode."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(4, 5, num_layers=2, bidirectional=True, batch_first=True, **kwargs).double()
    om = getattr(nn, kind)(4, 5, num_layers=2, bidirectional=True, batch_first=True, **kwargs).to(device)
    om = om.to(oar.float64)
    assert [n for n, _ in om.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _torch_to_oar(tm, om, device)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 6, 4))
    h_size = kwargs.get("proj_size") or 5
    h0 = [rng.standard_normal((4, 3, h_size))] + ([rng.standard_normal((4, 3, 5))] if kind == "LSTM" else [])
    tx, th0 = _leaf(torch, x), [_leaf(torch, a) for a in h0]
    ox = oar.tensor(x, device=device, requires_grad=True)
    oh0 = [oar.tensor(a, device=device, requires_grad=True) for a in h0]
    tout, th = tm(tx, tuple(th0) if kind == "LSTM" else th0[0])
    oout, oh = om(ox, tuple(oh0) if kind == "LSTM" else oh0[0])
    th, oh = _states(kind, th), _states(kind, oh)
    np.testing.assert_allclose(_np(oout), from_torch(tout), rtol=1e-10, atol=1e-10)
    for a, b in zip(oh, th):
        np.testing.assert_allclose(_np(a), from_torch(b), rtol=1e-10, atol=1e-10)
    R = rng.standard_normal(tuple(tout.shape))
    ((tout * to_torch(R)).sum() + sum((h * h).sum() for h in th)).backward()
    ((oout * oar.tensor(R, device=device)).sum() + sum((h * h).sum() for h in oh)).backward()
    np.testing.assert_allclose(_np(ox.grad), from_torch(tx.grad), rtol=1e-9, atol=1e-10)
    for a, b in zip(oh0, th0):
        np.testing.assert_allclose(_np(a.grad), from_torch(b.grad), rtol=1e-9, atol=1e-10)
    for (n, p), (_, q) in zip(om.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(_np(p.grad), from_torch(q.grad), rtol=1e-9, atol=1e-10, err_msg=n)
    om.zero_grad()
    tm.zero_grad()
    # packed, unsorted, with initial states (given in the batch's original order)
    lengths = [3, 6, 2]
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=True, enforce_sorted=False)
    op = rnn_utils.pack_padded_sequence(ox, lengths, batch_first=True, enforce_sorted=False)
    assert op.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert op.sorted_indices.tolist() == tp.sorted_indices.tolist()
    np.testing.assert_allclose(_np(op.data), from_torch(tp.data))
    tpo, tph = tm(tp, tuple(th0) if kind == "LSTM" else th0[0])
    opo, oph = om(op, tuple(oh0) if kind == "LSTM" else oh0[0])
    np.testing.assert_allclose(_np(opo.data), from_torch(tpo.data), rtol=1e-10, atol=1e-10)
    tph, oph = _states(kind, tph), _states(kind, oph)
    for a, b in zip(oph, tph):
        np.testing.assert_allclose(_np(a), from_torch(b), rtol=1e-10, atol=1e-10)
    tpad, tl = torch.nn.utils.rnn.pad_packed_sequence(tpo, batch_first=True)
    opad, ol = rnn_utils.pad_packed_sequence(opo, batch_first=True)
    np.testing.assert_allclose(_np(opad), from_torch(tpad), rtol=1e-10, atol=1e-10)
    assert ol.tolist() == tl.tolist()
    tx.grad = None
    ox.grad = None
    R = rng.standard_normal(tuple(tpad.shape))
    ((tpad * to_torch(R)).sum() + sum(h.sum() for h in tph)).backward()
    ((opad * oar.tensor(R, device=device)).sum() + sum(h.sum() for h in oph)).backward()
    np.testing.assert_allclose(_np(ox.grad), from_torch(tx.grad), rtol=1e-9, atol=1e-10)
    for (n, p), (_, q) in zip(om.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(_np(p.grad), from_torch(q.grad), rtol=1e-9, atol=1e-10, err_msg=n)
    # unbatched input: [T, I] with [L * D, H] states
    tu, tuh = tm(to_torch(x[0]), tuple(to_torch(a[:, 0]) for a in h0) if kind == "LSTM" else to_torch(h0[0][:, 0]))
    ou, ouh = om(oar.tensor(x[0], device=device),
                 tuple(oar.tensor(a[:, 0], device=device) for a in h0) if kind == "LSTM"
                 else oar.tensor(h0[0][:, 0], device=device))
    np.testing.assert_allclose(_np(ou), from_torch(tu), rtol=1e-10, atol=1e-10)
    for a, b in zip(_states(kind, ouh), _states(kind, tuh)):
        np.testing.assert_allclose(_np(a), from_torch(b), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_zero_training_matches_torch(torch, device):
    """dropout=0.0 in training mode: a deterministic forward equal to PyTorch's and to eval mode (float32)."""
    torch.manual_seed(1)
    tm = torch.nn.LSTM(3, 6, num_layers=3, dropout=0.0).train()
    om = nn.LSTM(3, 6, num_layers=3, dropout=0.0).to(device).train()
    _torch_to_oar(tm, om, device)
    x = np.random.default_rng(9).standard_normal((5, 2, 3)).astype(np.float32)
    want = from_torch(tm(to_torch(x))[0])
    a = _np(om(oar.tensor(x, device=device))[0])
    b = _np(om(oar.tensor(x, device=device))[0])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(_np(om.eval()(oar.tensor(x, device=device))[0]), a)


@pytest.mark.parametrize("device", DEVICES)
def test_state_dict_from_torch_cells(torch, device):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    h = rng.standard_normal((3, 5)).astype(np.float32)
    c = rng.standard_normal((3, 5)).astype(np.float32)
    for kind in ("LSTMCell", "GRUCell", "RNNCell"):
        tc, oc = getattr(torch.nn, kind)(4, 5), getattr(nn, kind)(4, 5).to(device)
        assert [n for n, _ in oc.named_parameters()] == [n for n, _ in tc.named_parameters()]
        _torch_to_oar(tc, oc, device)
        for with_state in (False, True):
            if kind == "LSTMCell":
                t_hx = (to_torch(h), to_torch(c)) if with_state else None
                o_hx = (oar.tensor(h, device=device), oar.tensor(c, device=device)) if with_state else None
            else:
                t_hx = to_torch(h) if with_state else None
                o_hx = oar.tensor(h, device=device) if with_state else None
            t, o = tc(to_torch(x), t_hx), oc(oar.tensor(x, device=device), o_hx)
            t, o = (t, o) if kind == "LSTMCell" else ((t,), (o,))
            for a, b in zip(o, t):
                np.testing.assert_allclose(_np(a), from_torch(b), rtol=1e-5, atol=1e-6, err_msg=kind)


# ---- training ----
def _toy_batch(rng, n=32, T=6):
    x = rng.standard_normal((n, T, 2)).astype(np.float32)
    y = (x[:, :, 0].sum(axis=1) > 0).astype(np.int64)  # the sign of the running sum of feature 0
    return x, y


class _Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(2, 16, batch_first=True)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(h[-1])


@pytest.mark.parametrize("device", DEVICES)
def test_small_lstm_trains(device):
    oar.manual_seed(10)
    rng = np.random.default_rng(10)
    model = _Classifier().to(device)
    opt = oar.optim.Adam(model.parameters(), lr=0.03)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for step in range(40):
        x, y = _toy_batch(rng)
        loss = loss_fn(model(oar.tensor(x, device=device)), oar.tensor(y, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses


@pytest.mark.parametrize("device", DEVICES)
def test_lstm_under_jit(device):
    oar.manual_seed(11)
    rng = np.random.default_rng(11)
    model = _Classifier().to(device)
    x = oar.tensor(_toy_batch(rng)[0], device=device)
    want = model(x)
    static = oar.jit.to_static(model)
    np.testing.assert_allclose(_np(static(x)), _np(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(static(x)), _np(want), rtol=1e-5, atol=1e-6)

    m1, m2 = _Classifier().to(device), _Classifier().to(device)
    m2.load_state_dict(m1.state_dict())
    o1, o2 = oar.optim.SGD(m1.parameters(), lr=0.1), oar.optim.SGD(m2.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, y):
        loss = loss_fn(m2(x), y)
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss
    train_step = oar.jit.TrainGraph(step, o2, model=m2)
    for i in range(4):
        xb, yb = _toy_batch(rng)
        xb, yb = oar.tensor(xb, device=device), oar.tensor(yb, device=device)
        want = loss_fn(m1(xb), yb)
        want.backward()
        o1.step()
        o1.zero_grad()
        got = train_step(xb, yb)
        assert abs(got.item() - want.item()) < 1e-4, (i, got.item(), want.item())
