"""F.scaled_dot_product_attention, nn.MultiheadAttention and the nn.Transformer family on every present device.

scaled_dot_product_attention and multi-head attention are checked against
NumPy implementations (bool / float masks, broadcasting, causal upper-left
alignment, key padding, bias_kv, zero attention, kdim/vdim, averaged and
per-head weights); the query-blocked memory-saving path equals the one-shot
path, gradients included; gradients match finite differences in float64; with
PyTorch importable, torch modules' state_dicts load unchanged and outputs and
gradients agree (MultiheadAttention, TransformerEncoderLayer with post- and
pre-norm, TransformerDecoderLayer, nn.Transformer); a small TransformerEncoder
learns a toy task, eagerly and through oar.jit."""
import math

import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.functional as F
from oar.nn import attention as attention_mod

from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]


def _np(t):
    return t.detach().cpu().numpy()


def _arr(a, device, dtype=None):
    """oar.tensor(a); bool arrays go through a list (NumPy < 1.25 can't export bool over DLPack)."""
    if a.dtype == bool:
        return oar.tensor(a.tolist(), dtype=oar.bool, device=device)
    return oar.tensor(a, dtype=dtype, device=device)


def _softmax(x):
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """mask: bool (True = may attend) or float (added)."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), dtype=bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    w = _softmax(s)
    return w @ v, w


# ---- scaled_dot_product_attention ----
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["plain", "bool_broadcast", "float_heads", "causal_wide", "causal_tall", "scale"])
def test_sdpa_matches_numpy(device, case):
    rng = np.random.default_rng(0)
    L, S = (7, 5) if case == "causal_tall" else (5, 7)
    q = rng.standard_normal((2, 3, L, 4)).astype(np.float32)
    k = rng.standard_normal((2, 3, S, 4)).astype(np.float32)
    v = rng.standard_normal((2, 3, S, 6)).astype(np.float32)
    mask, kwargs = None, {}
    if case == "bool_broadcast":  # one [L, S] mask for every batch and head
        mask = rng.random((L, S)) > 0.3
        mask[:, 0] = True
    elif case == "float_heads":  # per-head float mask, broadcast over the batch
        mask = rng.standard_normal((3, L, S)).astype(np.float32)
    elif case.startswith("causal"):
        kwargs["is_causal"] = True
    elif case == "scale":
        kwargs["scale"] = 0.3
    t = lambda a: _arr(a, device)  # noqa: E731
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=None if mask is None else t(mask), **kwargs)
    want, _ = _np_sdpa(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), mask,
                       kwargs.get("is_causal", False), kwargs.get("scale"))
    assert tuple(out.shape) == (2, 3, L, 6)
    np.testing.assert_allclose(_np(out), want, rtol=1e-5, atol=1e-5)


def test_sdpa_argument_errors():
    q = oar.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=oar.ones(3, 3, dtype=oar.bool), is_causal=True)
    with pytest.raises(oar.ShapeError):
        F.scaled_dot_product_attention(q, oar.randn(2, 3, 5), oar.randn(2, 3, 4))
    with pytest.raises(ValueError):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["causal", "row_mask", "broadcast_row_mask", "float_mask"])
def test_sdpa_blocked_path_equals_one_shot(device, case):
    rng = np.random.default_rng(1)
    L, S = 11, 9
    arrays = [rng.standard_normal(s) for s in ((2, 2, L, 4), (2, 2, S, 4), (2, 2, S, 3))]
    mask = None
    if case == "row_mask":
        m = rng.random((2, 1, L, S)) > 0.4
        m[..., 0] = True
        mask = _arr(m, device)
    elif case == "broadcast_row_mask":
        m = rng.random((1, S)) > 0.4
        m[..., 0] = True
        mask = _arr(m, device)
    elif case == "float_mask":
        mask = oar.tensor(rng.standard_normal((L, S)), dtype=oar.float64, device=device)
    results = []
    for block in (3, 1000):
        ts = [oar.tensor(a, dtype=oar.float64, device=device, requires_grad=True) for a in arrays]
        out, w = attention_mod._sdpa(*ts, attn_mask=mask, is_causal=case == "causal", block=block)
        assert w is None
        (out * out).sum().backward()
        results.append([_np(out)] + [_np(t.grad) for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_dropout_and_gqa(device):
    q = oar.randn(1, 2, 6, 4, device=device)
    v = oar.ones(1, 2, 6, 5, device=device)
    out = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    # weights sum to 1 per row; with dropout each kept weight is doubled, so rows are not all 1 any more
    vals = _np(out)
    assert not np.allclose(vals, 1.0) and np.all(vals >= 0)
    np.testing.assert_allclose(_np(F.scaled_dot_product_attention(q, q, v, dropout_p=1.0)), 0.0)
    np.testing.assert_allclose(_np(F.scaled_dot_product_attention(q, q, v)), 1.0, rtol=1e-6)
    # grouped-query attention: 4 query heads share 2 key/value heads
    rng = np.random.default_rng(2)
    qa, ka, va = (rng.standard_normal(s).astype(np.float32) for s in ((1, 4, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)))
    out = F.scaled_dot_product_attention(*(oar.tensor(a, device=device) for a in (qa, ka, va)), enable_gqa=True)
    want, _ = _np_sdpa(qa, np.repeat(ka, 2, axis=1), np.repeat(va, 2, axis=1))
    np.testing.assert_allclose(_np(out), want, rtol=1e-5, atol=1e-5)


# ---- MultiheadAttention vs NumPy ----
def _np_mha(m, query, key, value, key_padding_mask=None, attn_mask=None, average=True, batch_first=False):
    """PyTorch's multi-head attention in NumPy (float64), from the module's parameters."""
    p = {n: _np(t).astype(np.float64) for n, t in m.named_parameters()}
    if batch_first:
        query, key, value = (np.swapaxes(x, 0, 1) for x in (query, key, value))
    E, H = m.embed_dim, m.num_heads
    hd = E // H
    if "in_proj_weight" in p:
        Wq, Wk, Wv = np.split(p["in_proj_weight"], 3)
    else:
        Wq, Wk, Wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0, 0, 0)
    q, k, v = query @ Wq.T + bq, key @ Wk.T + bk, value @ Wv.T + bv
    L, N, _ = q.shape
    add = np.zeros((N, H, L, k.shape[0]))
    if attn_mask is not None:
        am = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask
        add = add + (am.reshape(N, H, L, -1) if am.ndim == 3 else am)
    if key_padding_mask is not None:
        kp = np.where(key_padding_mask, -np.inf, 0.0) if key_padding_mask.dtype == bool else key_padding_mask
        add = add + kp[:, None, None, :]
    if "bias_k" in p:
        k = np.concatenate([k, np.broadcast_to(p["bias_k"], (1, N, E))])
        v = np.concatenate([v, np.broadcast_to(p["bias_v"], (1, N, E))])
        add = np.concatenate([add, np.zeros((N, H, L, 1))], axis=-1)
    heads = lambda x: x.reshape(x.shape[0], N, H, hd).transpose(1, 2, 0, 3)  # noqa: E731
    qh, kh, vh = heads(q), heads(k), heads(v)
    if m.add_zero_attn:
        kh = np.concatenate([kh, np.zeros((N, H, 1, hd))], axis=2)
        vh = np.concatenate([vh, np.zeros((N, H, 1, hd))], axis=2)
        add = np.concatenate([add, np.zeros((N, H, L, 1))], axis=-1)
    w = _softmax(qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(hd) + add)
    o = (w @ vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    o = o @ p["out_proj.weight"].T + (p["out_proj.bias"] if "out_proj.bias" in p else 0)
    if batch_first:
        o = np.swapaxes(o, 0, 1)
    return o, (w.mean(axis=1) if average else w)


MHA_CASES = {
    "self": dict(),
    "cross_kdim_vdim": dict(kdim=3, vdim=5),
    "bool_masks": dict(kpm="bool", mask="bool2d"),
    "float_masks_3d": dict(kpm="float", mask="float3d"),
    "bias_kv_zero_attn": dict(add_bias_kv=True, add_zero_attn=True, kpm="bool", mask="bool2d"),
    "batch_first_per_head": dict(batch_first=True, average=False, mask="float3d"),
    "no_bias": dict(bias=False, kpm="bool"),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_numpy(device, case):
    cfg = dict(MHA_CASES[case])
    oar.manual_seed(3)
    rng = np.random.default_rng(3)
    E, H, L, S, N = 8, 2, 4, 6, 3
    kdim, vdim = cfg.pop("kdim", None), cfg.pop("vdim", None)
    kpm_kind, mask_kind = cfg.pop("kpm", None), cfg.pop("mask", None)
    average = cfg.pop("average", True)
    m = nn.MultiheadAttention(E, H, kdim=kdim, vdim=vdim, **cfg).to(device)
    if m.in_proj_bias is not None:  # non-zero biases so that they are checked
        with oar.no_grad():
            m.in_proj_bias.copy_(oar.randn(3 * E, device=device))
            m.out_proj.bias.copy_(oar.randn(E, device=device))
    bf = cfg.get("batch_first", False)
    self_attn = kdim is None
    q = rng.standard_normal((L, N, E))
    k = rng.standard_normal((S, N, kdim or E)) if not self_attn else q
    v = rng.standard_normal((S, N, vdim or E)) if not self_attn else q
    S = k.shape[0]
    kpm = mask = None
    if kpm_kind == "bool":
        kpm = rng.random((N, S)) < 0.3
        kpm[:, 0] = False
    elif kpm_kind == "float":
        kpm = rng.standard_normal((N, S))
    if mask_kind == "bool2d":
        mask = rng.random((L, S)) < 0.3
        mask[:, 1] = False
    elif mask_kind == "float3d":
        mask = rng.standard_normal((N * H, L, S))
    t = lambda a: None if a is None else _arr(  # noqa: E731
        np.swapaxes(a, 0, 1) if bf and a.ndim == 3 and a.shape[1] == N else a, device, oar.float32)
    tq = t(q)
    tk, tv = (tq, tq) if self_attn else (t(k), t(v))
    out, w = m(tq, tk, tv, key_padding_mask=t(kpm), attn_mask=None if mask is None else _arr(
        mask, device, oar.float32),
        average_attn_weights=average)
    want, want_w = _np_mha(m, *(np.swapaxes(a, 0, 1) if bf else a for a in (q, k, v)), kpm, mask, average, bf)
    np.testing.assert_allclose(_np(out), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(w), want_w, rtol=1e-4, atol=1e-5)
    out2, w2 = m(tq, tk, tv, key_padding_mask=t(kpm), attn_mask=None if mask is None else _arr(
        mask, device, oar.float32), need_weights=False)
    assert w2 is None
    np.testing.assert_allclose(_np(out2), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_mha_unbatched_and_causal(device):
    rng = np.random.default_rng(4)
    m = nn.MultiheadAttention(6, 3).to(device)
    x = rng.standard_normal((5, 6))
    out, w = m(*(oar.tensor(x, dtype=oar.float32, device=device),) * 3)
    want, want_w = _np_mha(m, x[:, None], x[:, None], x[:, None])
    assert tuple(out.shape) == (5, 6) and tuple(w.shape) == (5, 5)
    np.testing.assert_allclose(_np(out), want[:, 0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(w), want_w[0], rtol=1e-4, atol=1e-5)
    xt = oar.tensor(x[:, None], dtype=oar.float32, device=device)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    out_c, w_c = m(xt, xt, xt, is_causal=True)
    want_c, want_wc = _np_mha(m, x[:, None], x[:, None], x[:, None], attn_mask=causal)
    np.testing.assert_allclose(_np(out_c), want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(w_c), want_wc, rtol=1e-4, atol=1e-5)
    mask = nn.Transformer.generate_square_subsequent_mask(5, device=device)
    np.testing.assert_allclose(_np(m(xt, xt, xt, attn_mask=mask)[0]), want_c, rtol=1e-4, atol=1e-5)


def test_mha_parameters_and_init():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    names = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert names == {"in_proj_weight": (48, 16), "in_proj_bias": (48,), "bias_k": (1, 1, 16), "bias_v": (1, 1, 16),
                     "out_proj.weight": (16, 16), "out_proj.bias": (16,)}
    assert np.all(_np(m.in_proj_bias) == 0) and np.all(_np(m.out_proj.bias) == 0)
    bound = math.sqrt(6 / (16 + 48))
    assert np.abs(_np(m.in_proj_weight)).max() <= bound
    m2 = nn.MultiheadAttention(16, 4, kdim=5, vdim=7, bias=False)
    assert {n: tuple(p.shape) for n, p in m2.named_parameters()} == {
        "q_proj_weight": (16, 16), "k_proj_weight": (16, 5), "v_proj_weight": (16, 7), "out_proj.weight": (16, 16)}
    assert m2.in_proj_weight is None and m2.in_proj_bias is None
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, nn.Linear)
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(10, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_mha_gradients_match_finite_differences(device):
    rng = np.random.default_rng(5)
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True, kdim=3, vdim=5).to(device).to(oar.float64)
    q = oar.tensor(rng.standard_normal((3, 2, 4)), dtype=oar.float64, device=device, requires_grad=True)
    k = oar.tensor(rng.standard_normal((5, 2, 3)), dtype=oar.float64, device=device, requires_grad=True)
    v = oar.tensor(rng.standard_normal((5, 2, 5)), dtype=oar.float64, device=device, requires_grad=True)
    kpm = oar.tensor([[False, False, True, False, True], [False] * 5], device=device)
    R = oar.tensor(rng.standard_normal((3, 2, 4)), dtype=oar.float64, device=device)

    def loss():
        out, w = m(q, k, v, key_padding_mask=kpm)
        return (out * R).sum() + (w * w).sum()
    tensors = [q, k, v, m.q_proj_weight, m.bias_k, m.out_proj.weight]
    for t in tensors:
        t.grad = None
    loss().backward()
    eps = 1e-6
    for t in tensors:
        base, g = _np(t).copy(), _np(t.grad)
        for _ in range(3):
            idx = tuple(int(rng.integers(0, s)) for s in base.shape)
            vals = []
            for sgn in (1, -1):
                a = base.copy()
                a[idx] += sgn * eps
                with oar.no_grad():
                    t.copy_(oar.tensor(a, device=device))
                    vals.append(loss().item())
            with oar.no_grad():
                t.copy_(oar.tensor(base, device=device))
            fd = (vals[0] - vals[1]) / (2 * eps)
            assert abs(fd - g[idx]) < 1e-6 * max(1, abs(fd)), (idx, fd, g[idx])


# ---- Transformer structure ----
def test_transformer_structure_and_masks():
    t = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16)
    names = [n for n, _ in t.named_parameters()]
    assert "encoder.layers.1.self_attn.in_proj_weight" in names
    assert "decoder.layers.0.multihead_attn.out_proj.bias" in names
    assert "encoder.norm.weight" in names and "decoder.norm3.weight" not in names
    assert "decoder.layers.0.norm3.weight" in names and "encoder.layers.0.linear2.weight" in names
    mask = _np(nn.Transformer.generate_square_subsequent_mask(4))
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask, np.triu(np.full((4, 4), -np.inf), 1) + np.tril(np.zeros((4, 4))))
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation="gelu")
    enc = nn.TransformerEncoder(layer, 3)
    assert len(enc.layers) == 3 and enc.layers[0] is not layer
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


# ---- PyTorch comparisons ----
@pytest.fixture(scope="module")
def torch():
    return import_torch()


def _load_from_torch(tm, om, device):
    om.load_state_dict({k: oar.tensor(from_torch(v), device=device) for k, v in tm.state_dict().items()})


def _compare(torch, tm, om, device, t_inputs, o_inputs, grad_inputs=(), tol=1e-9, **kw):
    """Runs both (float64), compares outputs, then gradients of sum(out * R) for params and inputs."""
    tout = tm(*t_inputs, **kw.get("t_kwargs", {}))
    oout = om(*o_inputs, **kw.get("o_kwargs", {}))
    touts = tout if isinstance(tout, tuple) else (tout,)
    oouts = oout if isinstance(oout, tuple) else (oout,)
    assert len(oouts) == len(touts)
    for a, b in zip(oouts, touts):
        if b is None:
            assert a is None
            continue
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), from_torch(b), rtol=tol, atol=tol)
    R = np.random.default_rng(0).standard_normal(tuple(touts[0].shape))
    (touts[0] * to_torch(R)).sum().backward()
    (oouts[0] * oar.tensor(R, device=device)).sum().backward()
    tparams = list(tm.named_parameters())
    assert [n for n, _ in om.named_parameters()] == [n for n, _ in tparams]
    for (n, p), (_, q) in zip(om.named_parameters(), tparams):
        if q.grad is None:
            assert p.grad is None or np.all(_np(p.grad) == 0), n
            continue
        np.testing.assert_allclose(_np(p.grad), from_torch(q.grad), rtol=tol * 10, atol=tol, err_msg=n)
    for i in grad_inputs:
        np.testing.assert_allclose(_np(o_inputs[i].grad), from_torch(t_inputs[i].grad), rtol=tol * 10, atol=tol)


def _bool(a, device):
    return _arr(a, device)


def _pair(torch, rng, shape, device, grad=True):
    a = rng.standard_normal(shape)
    return to_torch(a).requires_grad_(grad), oar.tensor(a, device=device, requires_grad=grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["self_bool_masks", "cross_float_masks", "kdim_bias_kv_zero_attn",
                                  "batch_first_per_head", "causal", "no_bias_unbatched"])
def test_mha_matches_torch(torch, device, case):
    torch.manual_seed(0)
    rng = np.random.default_rng(6)
    E, H, L, S, N = 8, 2, 4, 6, 3
    kw = dict(kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True) if case == "kdim_bias_kv_zero_attn" else {}
    if case == "no_bias_unbatched":
        kw = dict(bias=False)
    bf = case == "batch_first_per_head"
    tm = torch.nn.MultiheadAttention(E, H, batch_first=bf, **kw).double()
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)  # non-zero biases
    om = nn.MultiheadAttention(E, H, batch_first=bf, **kw).to(device).to(oar.float64)
    assert [n for n, _ in om.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _load_from_torch(tm, om, device)
    if case == "no_bias_unbatched":
        tq, oq = _pair(torch, rng, (L, E), device)
        tk, ok = _pair(torch, rng, (S, E), device)
        tv, ov = _pair(torch, rng, (S, E), device)
        kpm = rng.random(S) < 0.3
        kpm[0] = False
        _compare(torch, tm, om, device, (tq, tk, tv), (oq, ok, ov), grad_inputs=(0, 1, 2),
                 t_kwargs=dict(key_padding_mask=to_torch(kpm)), o_kwargs=dict(key_padding_mask=_bool(kpm, device)))
        return
    tq, oq = _pair(torch, rng, (N, L, E) if bf else (L, N, E), device)
    if case in ("self_bool_masks", "causal"):
        tk = tv = tq
        ok = ov = oq
        S = L
    else:
        tk, ok = _pair(torch, rng, (S, N, kw.get("kdim", E)), device)
        tv, ov = _pair(torch, rng, (S, N, kw.get("vdim", E)), device)
        if bf:
            tk, ok = _pair(torch, rng, (N, S, E), device)
            tv, ov = tk, ok
    kpm = rng.random((N, S)) < 0.3
    kpm[:, 0] = False
    mask = rng.random((L, S)) < 0.3
    mask[:, 1] = False
    t_kw, o_kw = {}, {}
    if case in ("self_bool_masks", "kdim_bias_kv_zero_attn"):
        t_kw = dict(key_padding_mask=to_torch(kpm), attn_mask=to_torch(mask))
        o_kw = dict(key_padding_mask=_bool(kpm, device), attn_mask=_bool(mask, device))
    elif case == "cross_float_masks":  # a float key_padding_mask is additive in torch >= 2.0 only
        fm = rng.standard_normal((N * H, L, S))
        t_kw = dict(key_padding_mask=to_torch(kpm), attn_mask=to_torch(fm))
        o_kw = dict(key_padding_mask=_bool(kpm, device), attn_mask=oar.tensor(fm, device=device))
    elif case == "causal":  # PyTorch 1.13 has no is_causal: its reference is the explicit causal mask
        t_kw = dict(attn_mask=to_torch(np.triu(np.ones((L, L), dtype=bool), 1)), key_padding_mask=to_torch(kpm[:, :L]))
        o_kw = dict(is_causal=True, key_padding_mask=_bool(kpm[:, :L], device))
    else:
        t_kw = o_kw = dict(average_attn_weights=False)
    _compare(torch, tm, om, device, (tq, tk, tv), (oq, ok, ov), grad_inputs=(0,) if tk is tq else (0, 1),
             t_kwargs=t_kw, o_kwargs=o_kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_torch(torch, device, norm_first, activation):
    torch.manual_seed(1)
    rng = np.random.default_rng(7)
    args = (8, 2, 16, 0.1, activation)
    tm = torch.nn.TransformerEncoderLayer(*args, norm_first=norm_first, batch_first=True).double().eval()
    om = nn.TransformerEncoderLayer(*args, norm_first=norm_first, batch_first=True).to(device).to(oar.float64).eval()
    _load_from_torch(tm, om, device)
    tx, ox = _pair(torch, rng, (3, 5, 8), device)
    kpm = np.array([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    _compare(torch, tm, om, device, (tx,), (ox,), grad_inputs=(0,),
             t_kwargs=dict(src_mask=to_torch(mask), src_key_padding_mask=to_torch(kpm)),
             o_kwargs=dict(src_mask=_bool(mask, device), src_key_padding_mask=_bool(kpm, device)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(torch, device, norm_first):
    torch.manual_seed(2)
    rng = np.random.default_rng(8)
    tm = torch.nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first).double().eval()
    om = nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first).to(device).to(oar.float64).eval()
    _load_from_torch(tm, om, device)
    tt, ot = _pair(torch, rng, (4, 2, 8), device)
    tmem, omem = _pair(torch, rng, (6, 2, 8), device)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4).double()
    mkpm = np.array([[False] * 6, [False] * 4 + [True] * 2])
    _compare(torch, tm, om, device, (tt, tmem), (ot, omem), grad_inputs=(0, 1),
             t_kwargs=dict(tgt_mask=tgt_mask, memory_key_padding_mask=to_torch(mkpm)),
             o_kwargs=dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, device=device,
                                                                                   dtype=oar.float64),
                           memory_key_padding_mask=_bool(mkpm, device)))


@pytest.mark.parametrize("device", DEVICES)
def test_encoder_and_decoder_stacks_match_torch(torch, device):
    """TransformerEncoder (3 layers + final norm, is_causal vs PyTorch's explicit mask) and TransformerDecoder
    (2 layers + final norm, every mask), in training mode with dropout=0 (deterministic, float64)."""
    torch.manual_seed(4)
    rng = np.random.default_rng(10)
    t_enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 3,
                                        norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).double()
    o_enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 3,
                                  norm=nn.LayerNorm(8)).to(device).to(oar.float64)
    assert list(o_enc.state_dict()) == list(t_enc.state_dict())
    _load_from_torch(t_enc, o_enc, device)
    tx, ox = _pair(torch, rng, (2, 5, 8), device)
    kpm = np.array([[False] * 5, [False] * 4 + [True]])
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    _compare(torch, t_enc, o_enc, device, (tx,), (ox,), grad_inputs=(0,),
             t_kwargs=dict(mask=causal, src_key_padding_mask=to_torch(kpm)),
             o_kwargs=dict(is_causal=True, src_key_padding_mask=_bool(kpm, device)))
    ox.grad = None
    again = o_enc(ox, is_causal=True, src_key_padding_mask=_bool(kpm, device))
    np.testing.assert_array_equal(_np(again), _np(o_enc(ox, is_causal=True, src_key_padding_mask=_bool(kpm, device))))

    t_dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2,
                                        norm=torch.nn.LayerNorm(8)).double()
    o_dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2,
                                  norm=nn.LayerNorm(8)).to(device).to(oar.float64)
    _load_from_torch(t_dec, o_dec, device)
    tt, ot = _pair(torch, rng, (4, 2, 8), device)
    tmem, omem = _pair(torch, rng, (6, 2, 8), device)
    mem_mask = rng.standard_normal((4, 6))
    tkpm = np.array([[False] * 4, [False] * 2 + [True] * 2])
    mkpm = np.array([[False] * 6, [False] * 5 + [True]])
    _compare(torch, t_dec, o_dec, device, (tt, tmem), (ot, omem), grad_inputs=(0, 1),
             t_kwargs=dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4).double(),
                           memory_mask=to_torch(mem_mask), tgt_key_padding_mask=to_torch(tkpm),
                           memory_key_padding_mask=to_torch(mkpm)),
             o_kwargs=dict(tgt_is_causal=True, memory_mask=oar.tensor(mem_mask, device=device),
                           tgt_key_padding_mask=_bool(tkpm, device), memory_key_padding_mask=_bool(mkpm, device)))


@pytest.mark.parametrize("device", DEVICES)
def test_transformer_matches_torch(torch, device):
    torch.manual_seed(3)
    rng = np.random.default_rng(9)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
              batch_first=True)
    tm = torch.nn.Transformer(**kw).double().eval()
    om = nn.Transformer(**kw).to(device).to(oar.float64).eval()
    assert list(om.state_dict()) == list(tm.state_dict())
    _load_from_torch(tm, om, device)
    tsrc, osrc = _pair(torch, rng, (2, 5, 8), device)
    ttgt, otgt = _pair(torch, rng, (2, 4, 8), device)
    skpm = np.array([[False] * 5, [False] * 3 + [True] * 2])
    _compare(torch, tm, om, device, (tsrc, ttgt), (osrc, otgt), grad_inputs=(0, 1),
             t_kwargs=dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4).double(),
                           src_key_padding_mask=to_torch(skpm), memory_key_padding_mask=to_torch(skpm)),
             o_kwargs=dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, device=device,
                                                                                   dtype=oar.float64),
                           src_key_padding_mask=_bool(skpm, device), memory_key_padding_mask=_bool(skpm, device)))


def test_bad_shapes_raise_clear_errors():
    m = nn.MultiheadAttention(8, 2)
    x = oar.randn(4, 3, 8)
    with pytest.raises(oar.ShapeError, match="embedding dimension of 8"):
        m(oar.randn(4, 3, 6), x, x)
    with pytest.raises(oar.ShapeError, match="2D attn_mask"):
        m(x, x, x, attn_mask=oar.zeros(4, 5))
    with pytest.raises(oar.ShapeError, match="3D attn_mask"):
        m(x, x, x, attn_mask=oar.zeros(3, 4, 4))
    with pytest.raises(oar.ShapeError, match="key_padding_mask shape"):
        m(x, x, x, key_padding_mask=oar.zeros(3, 5, dtype=oar.bool))
    with pytest.raises(oar.ShapeError, match="3-D"):
        m(x, x, oar.randn(4, 8))
    with pytest.raises(TypeError, match="attn_mask"):
        m(x, x, x, attn_mask=oar.zeros(4, 4, dtype=oar.int64))
    with pytest.raises(ValueError, match="embed_dim and num_heads"):
        nn.MultiheadAttention(0, 2)
    t = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8)
    with pytest.raises(RuntimeError, match="batch number"):
        t(oar.randn(5, 2, 8), oar.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="d_model"):
        t(oar.randn(5, 2, 6), oar.randn(4, 2, 6))
    with pytest.raises(oar.ShapeError, match="same sequence length"):
        F.scaled_dot_product_attention(oar.randn(2, 3, 4), oar.randn(2, 5, 4), oar.randn(2, 6, 4))
    with pytest.raises(TypeError, match="query must be a Tensor"):
        F.scaled_dot_product_attention([1.0], oar.randn(2, 5, 4), oar.randn(2, 5, 4))


# ---- training ----
class _TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(1, 16)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), 2)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x))).squeeze(-1)


def _toy(rng, n=16, T=6):
    x = rng.standard_normal((n, T, 1)).astype(np.float32)
    y = np.repeat(x.mean(axis=1), T, axis=1).astype(np.float32)  # every position predicts the sequence mean
    return x, y


@pytest.mark.parametrize("device", DEVICES)
def test_small_transformer_encoder_trains(device):
    oar.manual_seed(12)
    rng = np.random.default_rng(12)
    model = _TinyEncoder().to(device)
    opt = oar.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(40):
        x, y = _toy(rng)
        loss = F.mse_loss(model(oar.tensor(x, device=device)), oar.tensor(y, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses


@pytest.mark.parametrize("device", DEVICES)
def test_transformer_encoder_under_jit(device):
    oar.manual_seed(13)
    rng = np.random.default_rng(13)
    model = _TinyEncoder().to(device)
    x = oar.tensor(_toy(rng)[0], device=device)
    want = model(x)
    static = oar.jit.to_static(model)
    for _ in range(2):
        np.testing.assert_allclose(_np(static(x)), _np(want), rtol=1e-5, atol=1e-5)

    m1, m2 = _TinyEncoder().to(device), _TinyEncoder().to(device)
    m2.load_state_dict(m1.state_dict())
    o1, o2 = oar.optim.SGD(m1.parameters(), lr=0.05), oar.optim.SGD(m2.parameters(), lr=0.05)

    def step(x, y):
        loss = F.mse_loss(m2(x), y)
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss
    train_step = oar.jit.TrainGraph(step, o2, model=m2)
    for i in range(4):
        xb, yb = (oar.tensor(a, device=device) for a in _toy(rng))
        want = F.mse_loss(m1(xb), yb)
        want.backward()
        o1.step()
        o1.zero_grad()
        got = train_step(xb, yb)
        assert abs(got.item() - want.item()) < 1e-4, (i, got.item(), want.item())
