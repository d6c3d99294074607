"""The fused, memory-efficient attention op (catalog attention_fused, kernel_primitives' attention
family) on every device: values and log-sum-exp against NumPy, gradients against finite
differences and against the composite (matmul/softmax) path, causal and additive masks, fully
masked rows, and F.scaled_dot_product_attention taking the fused path."""
import numpy as np
import pytest

import oar
import oar.nn.functional as F

DEVICES = oar._C.info()["devices"]
rng = np.random.default_rng(3)


def reference(q, k, v, mask=None, causal=False, scale=None):
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + mask
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    lse = (m + np.log(e.sum(-1, keepdims=True)))[..., 0]
    return (e / e.sum(-1, keepdims=True)) @ v, lse


def T(a, device, grad=False, dtype=oar.float64):
    t = oar.tensor(a, dtype=dtype, device=device)
    return t.requires_grad_() if grad else t


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_mask", [False, True])
def test_values_and_lse(device, causal, with_mask):
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 7, 4)), rng.standard_normal((2, 7, 3))
    mask = rng.standard_normal((2, 5, 7)) if with_mask else None
    out, lse = oar.ops.attention_fused(T(q, device), T(k, device), T(v, device),
                                       T(mask, device) if with_mask else None, causal=causal, scale=0.4)
    want, want_lse = reference(q, k, v, mask, causal, 0.4)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lse.cpu().numpy(), want_lse, rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_and_fully_masked_rows(device):
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((6, 4)), rng.standard_normal((6, 2))
    out, _ = oar.ops.attention_fused(T(q, device, dtype=oar.float32), T(k, device, dtype=oar.float32),
                                     T(v, device, dtype=oar.float32), None, causal=False, scale=0.5)
    np.testing.assert_allclose(out.cpu().numpy(), reference(q, k, v, scale=0.5)[0], rtol=2e-5, atol=2e-6)
    mask = np.zeros((3, 6))
    mask[1] = -np.inf  # row 1 sees nothing: NaN, as PyTorch's math path
    out, lse = oar.ops.attention_fused(T(q, device), T(k, device), T(v, device), T(mask, device), causal=False,
                                       scale=0.5)
    o = out.cpu().numpy()
    assert np.isnan(o[1]).all() and np.isfinite(o[[0, 2]]).all()
    assert lse.cpu().numpy()[1] == -np.inf


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_gradients_match_finite_differences(device, causal):
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    mask = rng.standard_normal((2, 4, 5))
    inputs = (T(q, device, True), T(k, device, True), T(v, device, True))

    def fused(a, b, c):
        out, lse = oar.ops.attention_fused(a, b, c, T(mask, device), causal=causal, scale=0.6)
        return out, lse  # lse's gradient is checked too

    assert oar.autograd.gradcheck(fused, inputs, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_float_mask_gets_its_gradient(device, causal):
    # PyTorch's math path differentiates an additive mask; the fused op does too (out and lse).
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    inputs = (T(q, device, True), T(k, device, True), T(v, device, True), T(rng.standard_normal((2, 4, 5)), device, True))

    def fused(a, b, c, m):
        return oar.ops.attention_fused(a, b, c, m, causal=causal, scale=0.6)

    assert oar.autograd.gradcheck(fused, inputs, atol=1e-6, rtol=1e-4)
    out, lse = fused(*inputs)
    (out.sum() + lse.sum()).backward()
    g = inputs[3].grad.cpu().numpy()
    if causal:  # masked-out scores have no influence
        assert np.all(g[:, np.triu_indices(4, 1, 5)[0], np.triu_indices(4, 1, 5)[1]] == 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_second_derivatives_match_finite_differences(device, causal):
    # Under create_graph the gradient is written in ops, so it differentiates again (gradient penalties,
    # meta-learning); the first-order pass keeps the fused backward kernel.
    q, k, v = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 2))
    inputs = (T(q, device, True), T(k, device, True), T(v, device, True),
              T(rng.standard_normal((2, 3, 4)), device, True))

    def fused(a, b, c, m):
        return oar.ops.attention_fused(a, b, c, m, causal=causal, scale=0.6)

    assert oar.autograd.gradgradcheck(fused, inputs, atol=1e-6, rtol=1e-4)


def test_sdpa_gradient_penalty_matches_the_composite_path():
    # d/dq of |d loss / dk|^2 through F.scaled_dot_product_attention equals the math written out in ops.
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 6, 4)), rng.standard_normal((2, 6, 4))

    def penalty_grads(attend):
        a, b, c = T(q, "cpu", True), T(k, "cpu", True), T(v, "cpu", True)
        (gk,) = oar.autograd.grad(attend(a, b, c).pow(2).sum(), b, create_graph=True)
        gk.pow(2).sum().backward()
        return [t.grad.numpy() for t in (a, b, c)]

    fused = penalty_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True))
    math = penalty_grads(lambda a, b, c: oar.softmax(
        (a @ b.transpose(-1, -2) / 2.0).masked_fill(oar.ones(5, 6).tril() == 0, float("-inf")), -1) @ c)
    for x, y in zip(fused, math):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_broadcast_float_mask_gradient_matches_composite(device):
    q, k, v = (rng.standard_normal((2, 3, 6, 8)) for _ in range(3))
    m = rng.standard_normal((6, 6))
    a = [T(x, device, True) for x in (q, k, v, m)]
    b = [T(x, device, True) for x in (q, k, v, m)]
    out = F.scaled_dot_product_attention(a[0], a[1], a[2], attn_mask=a[3])
    comp = F.softmax(b[0] @ b[1].mT / np.sqrt(8) + b[3], dim=-1) @ b[2]
    np.testing.assert_allclose(out.detach().cpu().numpy(), comp.detach().cpu().numpy(), rtol=1e-10, atol=1e-12)
    w = T(rng.standard_normal(out.shape), device)
    (out * w).sum().backward()
    (comp * w).sum().backward()
    assert tuple(a[3].grad.shape) == (6, 6)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.grad.cpu().numpy(), y.grad.cpu().numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_uses_the_fused_kernel_and_matches_composite(device):
    q, k, v = (rng.standard_normal((2, 3, 6, 8)) for _ in range(3))
    bool_mask = rng.random((6, 6)) > 0.3
    np.fill_diagonal(bool_mask, True)
    for kwargs in [dict(is_causal=True), dict(attn_mask=T(bool_mask, device, dtype=oar.bool)), dict()]:
        a = [T(x, device, True) for x in (q, k, v)]
        b = [T(x, device, True) for x in (q, k, v)]
        out = F.scaled_dot_product_attention(*a, **kwargs)
        mask = kwargs.get("attn_mask")
        s = a[0].detach() @ a[1].detach().mT / np.sqrt(8)
        ref = F.softmax(oar.where(mask, s, float("-inf")) if mask is not None else s, dim=-1) @ a[2].detach() \
            if not kwargs.get("is_causal") else None
        if ref is not None:
            np.testing.assert_allclose(out.detach().cpu().numpy(), ref.cpu().numpy(), rtol=1e-10, atol=1e-12)
        # composite path (attention weights requested) for the gradients
        scores = b[0] @ b[1].mT / np.sqrt(8)
        if kwargs.get("is_causal"):
            scores = oar.where(T(np.tril(np.ones((6, 6), bool)), device, dtype=oar.bool), scores, float("-inf"))
        if mask is not None:
            scores = oar.where(mask, scores, float("-inf"))
        comp = F.softmax(scores, dim=-1) @ b[2]
        np.testing.assert_allclose(out.detach().cpu().numpy(), comp.detach().cpu().numpy(), rtol=1e-10, atol=1e-12)
        w = T(rng.standard_normal(out.shape), device)
        (out * w).sum().backward()
        (comp * w).sum().backward()
        for x, y in zip(a, b):
            np.testing.assert_allclose(x.grad.cpu().numpy(), y.grad.cpu().numpy(), rtol=1e-9, atol=1e-11)


def test_long_sequence_runs_without_the_score_matrix():
    # 4096 x 4096 scores in float32 would be 64 MiB per head; the fused kernel stores 4096 floats.
    L, E = 4096, 16
    q = oar.randn(1, L, E)
    out, lse = oar.ops.attention_fused(q, q, q, None, causal=True, scale=0.25)
    assert tuple(out.shape) == (1, L, E) and tuple(lse.shape) == (1, L)
    qa = q[0, :64].numpy()
    want = reference(qa[None], q.numpy()[:, :64], q.numpy()[:, :64], causal=True, scale=0.25)[0][0]
    np.testing.assert_allclose(out[0, :64].numpy(), want, rtol=1e-4, atol=1e-5)


def test_bad_inputs():
    q = oar.randn(2, 3, 4)
    with pytest.raises(oar.ShapeError, match="do not fit"):
        oar.ops.attention_fused(q, oar.randn(2, 5, 3), oar.randn(2, 5, 2), None, scale=1.0)
    with pytest.raises(oar.ShapeError, match="attn_mask"):
        oar.ops.attention_fused(q, q, q, oar.randn(3, 3), scale=1.0)
    with pytest.raises(oar.DTypeError):
        oar.ops.attention_fused(q, q, q.to(oar.float64), None, scale=1.0)
