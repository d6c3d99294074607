"""oar.nn against NumPy references: layer forwards (plain loops over the definitions), gradients through
modules (hand-derived NumPy backprop and finite differences), Module mechanics (registration, naming,
hooks, state_dict, to()), losses, initializers and error handling."""
import math

import numpy as np
import pytest

import oar
from oar import nn
import oar.nn.functional as F

RNG = np.random.default_rng(0)


def T(a, dtype=oar.float64, requires_grad=False):
    return oar.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def N(t):
    return t.detach().numpy()


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(N(a) if isinstance(a, oar.Tensor) else a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------- references
def ref_conv2d(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    co, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * padding[0], wd + 2 * padding[1]))
    xp[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd] = x
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, co, oh, ow))
    per = co // groups
    for ni in range(n):
        for o in range(co):
            g = o // per
            for i in range(oh):
                for j in range(ow):
                    s = 0.0 if b is None else b[o]
                    for ci in range(cg):
                        for p in range(kh):
                            for q in range(kw):
                                s += w[o, ci, p, q] * xp[ni, g * cg + ci, i * stride[0] + p * dilation[0],
                                                         j * stride[1] + q * dilation[1]]
                    y[ni, o, i, j] = s
    return y


def ref_pool(x, k, s, p, op, count_include_pad=True):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            vals = [x[:, :, a, b] for a in range(h0, h0 + k[0]) for b in range(w0, w0 + k[1])
                    if 0 <= a < h and 0 <= b < w]
            st = np.stack(vals, -1)
            if op == "max":
                y[:, :, i, j] = st.max(-1)
            else:
                y[:, :, i, j] = st.sum(-1) / (k[0] * k[1] if count_include_pad else len(vals))
    return y


# ---------------------------------------------------------------- layers forward
def test_linear_forward_matches_numpy_and_init_bounds():
    oar.manual_seed(1)
    lin = nn.Linear(5, 3, dtype=oar.float64)
    w, b = N(lin.weight), N(lin.bias)
    assert w.shape == (3, 5) and b.shape == (3,)
    bound = 1 / math.sqrt(5)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound and np.abs(w).max() > bound / 4
    x = RNG.standard_normal((2, 4, 5))
    close(lin(T(x)), x @ w.T + b)
    close(nn.Linear(5, 3, bias=False, dtype=oar.float64)(T(x[0])).shape, (4, 3))


def test_functional_linear_shapes_grads_and_errors():
    x, w, b = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((4, 6)), RNG.standard_normal(4)
    close(F.linear(T(x), T(w), T(b)), x @ w.T + b)
    close(F.linear(T(x[0, 0]), T(w)), x[0, 0] @ w.T)          # 1-D input
    close(F.linear(T(x), T(w[0]), T(b[:1])), x @ w[0] + b[0])  # vector weight, as in torch
    close(F.linear(input=T(x), weight=T(w), bias=None), x @ w.T)
    xt, wt, bt = T(x, requires_grad=True), T(w, requires_grad=True), T(b, requires_grad=True)
    F.linear(xt, wt, bt).sum().backward()
    close(xt.grad, np.broadcast_to(w.sum(0), x.shape))
    close(wt.grad, np.broadcast_to(x.reshape(-1, 6).sum(0), w.shape))
    close(bt.grad, np.full(4, 6.0))
    with pytest.raises(ValueError, match="in_features=6"):
        F.linear(T(x[..., :5]), T(w))
    with pytest.raises(ValueError, match="bias"):
        F.linear(T(x), T(w), T(b[:3]))
    with pytest.raises(TypeError):
        F.linear(x, T(w))  # a NumPy array is not a tensor
    with pytest.raises(TypeError):
        F.linear(T(x), [[1.0] * 6])


def test_parameters_stay_attributes_through_every_mutation():
    import copy
    import pickle
    lin = nn.Linear(3, 2)
    assert lin.weight is lin._parameters["weight"]
    p = nn.Parameter(oar.zeros(2, 3))
    lin._parameters["weight"] = p           # direct dict writes are seen by attribute reads
    assert lin.weight is p
    del lin._parameters["bias"]
    with pytest.raises(AttributeError):
        lin.bias
    lin.bias = nn.Parameter(oar.ones(2))
    assert lin.bias is lin._parameters["bias"]
    lin._parameters.pop("bias")
    assert not hasattr(lin, "bias")
    lin.register_parameter("bias", None)
    assert lin.bias is None
    lin.bias = nn.Parameter(oar.ones(2))
    lin.bias = 5                            # a plain attribute replaces the parameter
    assert lin.bias == 5 and "bias" not in lin._parameters
    for clone in (copy.deepcopy(lin), pickle.loads(pickle.dumps(lin))):
        assert clone.weight is clone._parameters["weight"] and clone.weight is not lin.weight
        new = nn.Parameter(oar.ones(2, 3))
        clone._parameters["weight"] = new   # the clone mirrors into its own attributes only
        assert clone.weight is new and lin.weight is p
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    del seq[0]
    assert len(seq) == 1 and isinstance(seq[0], nn.ReLU)
    assert not hasattr(seq, "1") or getattr(seq, "0") is seq[0]


@pytest.mark.parametrize("stride,padding,dilation,groups,bias", [
    (1, 0, 1, 1, True), (2, 1, 1, 1, False), ((1, 2), (2, 1), (2, 1), 2, True)])
def test_conv2d_forward_matches_loops(stride, padding, dilation, groups, bias):
    conv = nn.Conv2d(4, 6, (3, 2), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias,
                     dtype=oar.float64)
    assert tuple(conv.weight.shape) == (6, 4 // groups, 3, 2)
    x = RNG.standard_normal((2, 4, 7, 6))
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    ref = ref_conv2d(x, N(conv.weight), N(conv.bias) if bias else None, pair(stride), pair(padding),
                     pair(dilation), groups)
    close(conv(T(x)), ref)


def test_conv2d_same_padding_and_unbatched():
    conv = nn.Conv2d(2, 3, 4, padding="same", dtype=oar.float64)
    x = RNG.standard_normal((1, 2, 5, 5))
    y = conv(T(x))
    assert y.shape == (1, 3, 5, 5)
    # PyTorch pads (k-1)//2 before and the rest after for even kernels
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (1, 2)))
    close(y, ref_conv2d(xp, N(conv.weight), N(conv.bias), (1, 1), (0, 0), (1, 1), 1))
    assert conv(T(x[0])).shape == (3, 5, 5)


def test_batchnorm2d_train_eval_and_running_stats():
    bn = nn.BatchNorm2d(3, momentum=0.2, dtype=oar.float64)
    with oar.no_grad():
        bn.weight.copy_(T([1.0, 2.0, 0.5]))
        bn.bias.copy_(T([0.0, -1.0, 3.0]))
    x = RNG.standard_normal((4, 3, 2, 5)) * 3 + 1
    y = bn(T(x))
    mean = x.mean((0, 2, 3))
    var = x.var((0, 2, 3))
    g, b = np.array([1, 2, 0.5]), np.array([0, -1, 3.0])
    ref = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * g[None, :, None, None] \
        + b[None, :, None, None]
    close(y, ref, 1e-9)
    n = x.size // 3
    close(bn.running_mean, 0.8 * 0 + 0.2 * mean)
    close(bn.running_var, 0.8 * 1 + 0.2 * var * n / (n - 1))
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    x2 = RNG.standard_normal((2, 3, 2, 2))
    rm, rv = N(bn.running_mean), N(bn.running_var)
    ref2 = (x2 - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5) * g[None, :, None, None] \
        + b[None, :, None, None]
    close(bn(T(x2)), ref2, 1e-9)
    close(bn.running_mean, rm)  # eval leaves the running stats alone
    assert int(bn.num_batches_tracked.item()) == 1


def test_batchnorm1d_2d_and_3d_inputs_and_no_tracking():
    bn = nn.BatchNorm1d(4, affine=False, dtype=oar.float64)
    x = RNG.standard_normal((6, 4))
    close(bn(T(x)), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), 1e-9)
    x3 = RNG.standard_normal((3, 4, 5))
    m, v = x3.mean((0, 2)), x3.var((0, 2))
    close(bn(T(x3)), (x3 - m[None, :, None]) / np.sqrt(v[None, :, None] + 1e-5), 1e-9)
    free = nn.BatchNorm1d(4, track_running_stats=False, dtype=oar.float64).eval()
    assert free.running_mean is None
    close(free(T(x)), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), 1e-9)  # batch stats even in eval


def test_layernorm_forward():
    ln = nn.LayerNorm((3, 4), dtype=oar.float64)
    with oar.no_grad():
        ln.weight.copy_(T(RNG.standard_normal((3, 4))))
        ln.bias.copy_(T(RNG.standard_normal((3, 4))))
    x = RNG.standard_normal((2, 3, 4))
    m = x.mean((1, 2), keepdims=True)
    v = x.var((1, 2), keepdims=True)
    close(ln(T(x)), (x - m) / np.sqrt(v + 1e-5) * N(ln.weight) + N(ln.bias), 1e-9)
    ln1 = nn.LayerNorm(4, elementwise_affine=False, dtype=oar.float64)
    assert list(ln1.parameters()) == []
    close(ln1(T(x)), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5), 1e-9)


def test_pooling_layers():
    x = RNG.standard_normal((2, 3, 7, 6))
    close(nn.MaxPool2d(2)(T(x)), ref_pool(x, (2, 2), (2, 2), (0, 0), "max"))
    close(nn.MaxPool2d((3, 2), stride=(2, 1), padding=1)(T(x)), ref_pool(x, (3, 2), (2, 1), (1, 1), "max"))
    close(nn.AvgPool2d(3, stride=2, padding=1)(T(x)), ref_pool(x, (3, 3), (2, 2), (1, 1), "avg"))
    close(nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)(T(x)),
          ref_pool(x, (3, 3), (2, 2), (1, 1), "avg", count_include_pad=False))
    close(nn.AdaptiveAvgPool2d(1)(T(x)), x.mean((2, 3), keepdims=True))
    close(nn.AdaptiveAvgPool2d((7, 3))(T(x)), x.reshape(2, 3, 7, 3, 2).mean(-1))
    # uneven bins: [floor(i*H/o), ceil((i+1)*H/o))
    y = nn.AdaptiveAvgPool2d((3, 4))(T(x))
    ref = np.zeros((2, 3, 3, 4))
    for i in range(3):
        for j in range(4):
            h0, h1 = i * 7 // 3, -(-(i + 1) * 7 // 3)
            w0, w1 = j * 6 // 4, -(-(j + 1) * 6 // 4)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    close(y, ref)


def test_activations_and_softmax():
    x = RNG.standard_normal((3, 5)) * 2
    t = T(x)
    erf = np.vectorize(math.erf)
    sig = 1 / (1 + np.exp(-x))
    cases = [(nn.ReLU(), np.maximum(x, 0)), (nn.Sigmoid(), sig), (nn.Tanh(), np.tanh(x)), (nn.SiLU(), x * sig),
             (nn.GELU(), 0.5 * x * (1 + erf(x / math.sqrt(2)))),
             (nn.GELU("tanh"), 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
             (nn.LeakyReLU(0.2), np.where(x > 0, x, 0.2 * x)), (nn.Identity(), x),
             (nn.ELU(), np.where(x > 0, x, np.exp(x) - 1)), (nn.Softplus(), np.log1p(np.exp(x)))]
    for mod, ref in cases:
        close(mod(t), ref, 1e-7)
    e = np.exp(x - x.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    close(nn.Softmax(dim=1)(t), sm)
    close(nn.LogSoftmax(dim=-1)(t), np.log(sm))
    close(F.softmax(t, 0), np.exp(x) / np.exp(x).sum(0))
    assert nn.Flatten()(T(np.zeros((2, 3, 4)))).shape == (2, 12)
    assert nn.Unflatten(1, (3, 4))(T(np.zeros((2, 12)))).shape == (2, 3, 4)


def test_functional_pad_batch_norm_layer_norm():
    x = RNG.standard_normal((2, 3, 4))
    close(F.pad(T(x), (1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))))
    close(F.pad(T(x), (1, 0, 0, 2), value=-1.5), np.pad(x, ((0, 0), (0, 2), (1, 0)), constant_values=-1.5))
    close(F.pad(T(x), (2, 1), mode="reflect"), np.pad(x, ((0, 0), (0, 0), (2, 1)), mode="reflect"))
    close(F.pad(T(x), (1, 1, 2, 0), mode="replicate"), np.pad(x, ((0, 0), (2, 0), (1, 1)), mode="edge"))
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    y = F.batch_norm(T(x), rm, rv, training=True, momentum=0.5)
    m, v = x.mean((0, 2)), x.var((0, 2))
    close(y, (x - m[None, :, None]) / np.sqrt(v[None, :, None] + 1e-5), 1e-9)
    close(rm, 0.5 * m)
    close(rv, 0.5 + 0.5 * v * 8 / 7)
    close(F.batch_norm(T(x), rm, rv), (x - N(rm)[None, :, None]) / np.sqrt(N(rv)[None, :, None] + 1e-5), 1e-9)
    w = RNG.standard_normal(4)
    close(F.layer_norm(T(x), (4,), T(w), eps=1e-3),
          (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3) * w, 1e-9)


def test_dropout_train_and_eval():
    oar.manual_seed(3)
    d = nn.Dropout(0.3)
    x = oar.ones(200, 50)
    y = N(d(x))
    kept = y != 0
    assert 0.25 < 1 - kept.mean() < 0.35
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    d.eval()
    assert np.array_equal(N(d(x)), np.ones((200, 50)))
    assert np.array_equal(N(F.dropout(x, 0.5, training=False)), np.ones((200, 50)))
    assert N(F.dropout(x, 1.0)).sum() == 0
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_embedding_forward_and_padding_grad():
    emb = nn.Embedding(6, 3, padding_idx=2, dtype=oar.float64)
    w = N(emb.weight)
    assert np.all(w[2] == 0)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    out = emb(oar.tensor(idx))
    close(out, w[idx])
    out.sum().backward()
    g = N(emb.weight.grad)
    counts = np.bincount(idx.ravel(), minlength=6).astype(float)
    counts[2] = 0
    close(g, np.repeat(counts[:, None], 3, 1))
    pre = nn.Embedding.from_pretrained(T(w))
    assert not pre.weight.requires_grad and len(list(pre.parameters())) == 1


# ---------------------------------------------------------------- losses
def log_softmax_np(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_cross_entropy_and_nll_against_numpy():
    x = RNG.standard_normal((6, 4))
    tgt = np.array([0, 3, 1, -100, 2, 3])
    lp = log_softmax_np(x)
    valid = tgt != -100
    picked = -lp[np.arange(6), np.where(valid, tgt, 0)] * valid
    close(nn.CrossEntropyLoss()(T(x), oar.tensor(tgt)), picked.sum() / valid.sum())
    close(nn.CrossEntropyLoss(reduction="sum")(T(x), oar.tensor(tgt)), picked.sum())
    close(nn.CrossEntropyLoss(reduction="none")(T(x), oar.tensor(tgt)), picked)
    close(nn.NLLLoss()(T(lp), oar.tensor(tgt)), picked.sum() / valid.sum())
    # class weights: weighted mean divides by the summed weights of the used targets
    w = np.array([1.0, 2.0, 0.5, 3.0])
    wt = np.where(valid, w[np.where(valid, tgt, 0)], 0)
    ref_w = (picked * wt).sum() / wt.sum()
    close(nn.CrossEntropyLoss(weight=T(w))(T(x), oar.tensor(tgt)), ref_w)
    close(nn.NLLLoss(weight=T(w))(T(lp), oar.tensor(tgt)), ref_w)
    # label smoothing: (1-e) * nll + e/C * sum_c -logp
    e = 0.1
    smooth = (-lp.sum(1) * valid).sum() / valid.sum()
    close(nn.CrossEntropyLoss(label_smoothing=e)(T(x), oar.tensor(tgt)),
          (1 - e) * picked.sum() / valid.sum() + e / 4 * smooth)
    smooth_w = (-(lp * w).sum(1) * valid).sum() / wt.sum()
    close(F.cross_entropy(T(x), oar.tensor(tgt), weight=T(w), label_smoothing=e), (1 - e) * ref_w + e / 4 * smooth_w)
    # probability targets
    p = np.abs(RNG.standard_normal((6, 4)))
    p /= p.sum(1, keepdims=True)
    close(F.cross_entropy(T(x), T(p)), -(p * lp).sum(1).mean())


def test_cross_entropy_spatial_and_gradient():
    x = RNG.standard_normal((2, 3, 4))
    tgt = RNG.integers(0, 3, (2, 4))
    xt = T(x, requires_grad=True)
    loss = F.cross_entropy(xt, oar.tensor(tgt))
    lp = log_softmax_np(x)
    ref = -np.take_along_axis(lp, tgt[:, None, :], 1).mean()
    close(loss, ref)
    loss.backward()
    onehot = np.zeros_like(x)
    np.put_along_axis(onehot, tgt[:, None, :], 1, 1)
    close(xt.grad, (np.exp(lp) - onehot) / 8)


def test_regression_losses():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    close(nn.MSELoss()(T(a), T(b)), ((a - b) ** 2).mean())
    close(nn.MSELoss(reduction="sum")(T(a), T(b)), ((a - b) ** 2).sum())
    close(nn.L1Loss(reduction="none")(T(a), T(b)), np.abs(a - b))
    close(nn.SmoothL1Loss()(T(a), T(b)), np.where(np.abs(a - b) < 1, 0.5 * (a - b) ** 2, np.abs(a - b) - 0.5).mean())
    y = (RNG.random((3, 4)) > 0.5).astype(float)
    close(nn.BCEWithLogitsLoss()(T(a), T(y)), (np.log1p(np.exp(-np.abs(a))) + np.maximum(a, 0) - a * y).mean())
    s = 1 / (1 + np.exp(-a))
    close(nn.BCELoss()(T(s), T(y)), -(y * np.log(s) + (1 - y) * np.log(1 - s)).mean(), 1e-9)


# ---------------------------------------------------------------- gradients through modules
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 5, dtype=oar.float64)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(5, 2, dtype=oar.float64)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_mlp_gradients_match_numpy_backprop():
    model = MLP()
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    loss = nn.MSELoss()(model(T(x)), T(y))
    loss.backward()
    w1, b1, w2, b2 = (N(p) for p in model.parameters())
    h = np.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    d_out = 2 * (out - y) / out.size
    d_h = d_out @ w2 * (1 - h ** 2)
    close(model.fc2.weight.grad, d_out.T @ h)
    close(model.fc2.bias.grad, d_out.sum(0))
    close(model.fc1.weight.grad, d_h.T @ x)
    close(model.fc1.bias.grad, d_h.sum(0))
    close(loss, ((out - y) ** 2).mean())


def test_conv_bn_pool_net_gradients_match_finite_differences():
    oar.manual_seed(5)
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, dtype=oar.float64), nn.BatchNorm2d(3, dtype=oar.float64),
                        nn.GELU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(12, 1, dtype=oar.float64))
    x = T(RNG.standard_normal((2, 2, 4, 4)))
    net(x).sum().backward()

    def f():
        with oar.no_grad():
            return float(net(x).sum().item())
    eps = 1e-6
    for name, p in net.named_parameters():
        flat_grad = N(p.grad).ravel()
        for k in (0, p.numel() - 1):
            base = N(p).copy()
            plus, minus = base.copy().ravel(), base.copy().ravel()
            plus[k] += eps
            minus[k] -= eps
            with oar.no_grad():
                p.copy_(T(plus.reshape(base.shape)))
                fp = f()
                p.copy_(T(minus.reshape(base.shape)))
                fm = f()
                p.copy_(T(base))
            assert abs((fp - fm) / (2 * eps) - flat_grad[k]) < 1e-5, name


# ---------------------------------------------------------------- module mechanics
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2))
        self.heads = nn.ModuleList([nn.Linear(2, 1), nn.Linear(2, 1, bias=False)])
        self.table = nn.ModuleDict({"bn": nn.BatchNorm1d(2)})
        self.scale = nn.Parameter(oar.ones(1))
        self.register_buffer("steps", oar.zeros(1))
        self.register_buffer("scratch", oar.zeros(1), persistent=False)
        self.plain = oar.zeros(2)  # a tensor that doesn't require grad stays a plain attribute

    def forward(self, x):
        h = self.table["bn"](self.layer(x)) * self.scale
        return sum(head(h) for head in self.heads)


def test_named_parameters_buffers_children():
    m = Block()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "layer.0.weight", "layer.0.bias", "layer.2.weight", "layer.2.bias",
                     "heads.0.weight", "heads.0.bias", "heads.1.weight", "table.bn.weight", "table.bn.bias"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch", "table.bn.running_mean",
                                                 "table.bn.running_var", "table.bn.num_batches_tracked"]
    assert [n for n, _ in m.named_children()] == ["layer", "heads", "table"]
    assert len(list(m.modules())) == 10
    assert isinstance(m.scale, nn.Parameter) and not isinstance(m.plain, nn.Parameter)
    assert "plain" not in dict(m.named_buffers())
    assert m.get_submodule("layer.2") is m.layer[2]
    assert list(m.state_dict().keys()) == ["scale", "steps"] + names[1:] + [
        "table.bn.running_mean", "table.bn.running_var", "table.bn.num_batches_tracked"]
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2  # shared modules are listed once


def test_train_eval_zero_grad_apply_requires_grad():
    m = Block()
    m.eval()
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    m(oar.randn(4, 2)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Block" and seen.count("Linear") == 4

    def init_fn(mod):
        if isinstance(mod, nn.Linear):
            nn.init.constant_(mod.weight, 0.5)
    m.apply(init_fn)
    assert np.all(N(m.layer[0].weight) == 0.5)
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_forward_hooks_fire_modify_and_remove():
    lin = nn.Linear(2, 2, dtype=oar.float64)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = lin.register_forward_hook(lambda mod, args, out: calls.append(N(args[0])) or out + 1)
    x = T([[1.0, 2.0]])
    w, b = N(lin.weight), N(lin.bias)
    close(lin(x), np.array([[2.0, 4.0]]) @ w.T + b + 1)
    close(calls[0], [[2.0, 4.0]])
    h1.remove()
    h2.remove()
    close(lin(x), np.array([[1.0, 2.0]]) @ w.T + b)
    assert len(calls) == 1
    with lin.register_forward_hook(lambda *a: None):
        assert len(lin._forward_hooks) == 1
    assert len(lin._forward_hooks) == 0


def test_state_dict_round_trip_gives_identical_outputs():
    oar.manual_seed(7)
    a = Block()
    a(oar.randn(8, 2))  # updates the BN running stats
    a.eval()
    sd = a.state_dict()
    assert "scratch" not in sd and not any(v.requires_grad for v in sd.values())
    b = Block()
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    b.eval()
    x = oar.randn(5, 2)
    assert np.array_equal(N(a(x)), N(b(x)))
    assert b.scale.requires_grad and b.scale.is_leaf


def test_load_state_dict_errors():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    sd = m.state_dict()
    bad = dict(sd)
    del bad["1.bias"]
    bad["extra.weight"] = oar.zeros(1)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\).*"1.bias"') as e:
        m.load_state_dict(bad)
    assert '"extra.weight"' in str(e.value)
    res = m.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["1.bias"] and res.unexpected_keys == ["extra.weight"]
    wrong = dict(sd)
    wrong["0.weight"] = oar.zeros(4, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight.*\(4, 2\).*\(3, 2\)"):
        m.load_state_dict(wrong, strict=False)
    with pytest.raises(TypeError):
        m.load_state_dict(["not", "a", "dict"])


def test_to_dtype_keeps_parameters_trainable():
    m = Block()
    same = [id(p) for p in m.parameters()]
    m.to("cpu")
    assert [id(p) for p in m.parameters()] == same  # no-op moves keep the objects
    m.to(oar.float64)
    assert all(p.dtype == oar.float64 and p.requires_grad and p.is_leaf for p in m.parameters())
    assert m.table["bn"].num_batches_tracked.dtype == oar.int64  # non-floating buffers keep their dtype
    assert m.steps.dtype == oar.float64
    m.float()
    assert m.layer[0].weight.dtype == oar.float32
    with pytest.raises(TypeError):
        m.to(oar.int64)


def test_repr_like_pytorch():
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.1),
                      nn.Flatten(), nn.Linear(16, 2))
    assert repr(m) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
        "  (1): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
        "  (2): ReLU()\n"
        "  (3): Dropout(p=0.1, inplace=False)\n"
        "  (4): Flatten(start_dim=1, end_dim=-1)\n"
        "  (5): Linear(in_features=16, out_features=2, bias=True)\n"
        ")")


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.append(nn.Linear(2, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[:2]) == 2
    ml = nn.ModuleList()
    ml.append(nn.Linear(1, 1))
    ml += [nn.Linear(1, 1)]
    assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "b" in md
    with pytest.raises(IndexError):
        seq[5]
    with pytest.raises(TypeError):
        nn.ModuleList([1])


def test_parameter_containers():
    pl = nn.ParameterList([nn.Parameter(oar.ones(2)), oar.zeros(3)])
    assert len(pl) == 2 and pl[1].requires_grad and [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"a": oar.ones(1)})
    pd["b"] = nn.Parameter(oar.zeros(2))
    assert list(pd.keys()) == ["a", "b"] and pd["a"].requires_grad

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = pl
    assert [n for n, _ in Holder().named_parameters()] == ["ps.0", "ps.1"]


def test_init_functions():
    oar.manual_seed(11)
    w = nn.Parameter(oar.zeros(64, 32))
    nn.init.kaiming_uniform_(w, a=0, nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / 32)
    a = N(w)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound and w.requires_grad
    nn.init.xavier_uniform_(w)
    assert np.abs(N(w)).max() <= math.sqrt(6 / 96)
    nn.init.normal_(w, 2.0, 0.5)
    assert abs(N(w).mean() - 2) < 0.05 and abs(N(w).std() - 0.5) < 0.05
    nn.init.uniform_(w, -3, -2)
    assert N(w).min() >= -3 and N(w).max() < -2
    nn.init.zeros_(w)
    assert not N(w).any()
    nn.init.ones_(w)
    assert np.all(N(w) == 1)
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    with pytest.raises(ValueError):
        nn.init.xavier_uniform_(oar.zeros(3))


def test_clip_grad_norm():
    p = nn.Parameter(oar.zeros(4, dtype=oar.float64))
    p.grad = T([3.0, 4.0, 0.0, 0.0])
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert float(total) == pytest.approx(5.0)
    close(p.grad, [0.6, 0.8, 0, 0], 1e-6)


# ---------------------------------------------------------------- errors
def test_bad_input_raises_python_exceptions():
    lin = nn.Linear(4, 2)
    with pytest.raises(ValueError, match="in_features=4"):
        lin(oar.zeros(3, 5))
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3)(oar.zeros(1, 2, 5, 5))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(oar.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(oar.zeros(1, 3))
    with pytest.raises(ValueError):
        nn.LayerNorm(5)(oar.zeros(2, 4))
    with pytest.raises(ValueError):
        nn.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError):
        F.mse_loss(oar.zeros(2), oar.zeros(2), reduction="bogus")
    with pytest.raises(IndexError):
        F.cross_entropy(oar.zeros(2, 3), oar.tensor([0, 7]))
    with pytest.raises(IndexError):
        nn.Embedding(4, 2)(oar.tensor([4]))
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(TypeError):
        nn.Linear(2.5, 3)
    with pytest.raises(TypeError):
        F.linear([1, 2], lin.weight)
    with pytest.raises(AttributeError):
        Block().does_not_exist
    with pytest.raises(NotImplementedError):
        nn.Module()(1)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(oar.zeros(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(TypeError):
        nn.Parameter(oar.zeros(2, dtype=oar.int64))


def test_deepcopy_and_pickle_of_tensors_and_models():
    import copy
    import pickle
    for dt in (oar.float32, oar.float64, oar.float16, oar.bfloat16, oar.int64, oar.bool):
        t = oar.arange(6).to(dt).reshape(2, 3).t()
        for c in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
            assert c.dtype == dt and c.shape == (3, 2)
            np.testing.assert_array_equal(N(c.to(oar.float64)), N(t.to(oar.float64)))
    p = nn.Parameter(oar.ones(2))
    p.grad = oar.full((2,), 3.0)
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.is_leaf and c.requires_grad
    np.testing.assert_array_equal(N(c.grad), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="leaf"):
        copy.deepcopy(p * 2)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = oar.randn(5, 4)
    twin = copy.deepcopy(model)
    with oar.no_grad():
        close(twin(x), N(model(x)), 0)
        twin[0].weight += 1.0  # the twin's parameters are its own
        assert not np.allclose(N(twin(x)), N(model(x)))
        close(pickle.loads(pickle.dumps(model))(x), N(model(x)), 0)
