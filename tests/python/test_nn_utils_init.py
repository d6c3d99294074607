"""oar.nn.init (every initializer, against the distributions' definitions) and oar.nn.utils (parametrize,
parametrizations.weight_norm / spectral_norm / orthogonal, the hook-based weight_norm / spectral_norm,
batch-norm fusion, flat parameter vectors): values, gradients against finite differences on every present
device, state_dict keys and errors; and against torch where it is importable."""
import copy
import math

import numpy as np
import pytest

import oar
from oar_testing import T, N, close
from torch_ref import import_torch, to_torch, from_torch
from oar import nn
import oar.nn.functional as F
from oar.nn.utils import parametrize, parametrizations as P

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(99)


def well_conditioned(rows, cols, svals=(5.0, 2.0, 1.0, 0.5, 0.25)):
    """A rows x cols matrix with singular values svals (well separated: power iteration converges fast)."""
    u = np.linalg.qr(RNG.standard_normal((rows, rows)))[0]
    v = np.linalg.qr(RNG.standard_normal((cols, cols)))[0]
    s = np.zeros((rows, cols))
    k = min(rows, cols)
    s[np.arange(k), np.arange(k)] = svals[:k]
    return u @ s @ v.T


def check_param_grad(loss_fn, params, eps=1e-6, tol=1e-6, mask=None):
    """autograd's gradient of loss_fn() w.r.t. each parameter against central differences along random
    directions (the parameters perturbed in place, where mask is nonzero if given)."""
    for p in params:
        p.grad = None
    loss_fn().backward()
    for p in params:
        g, p0 = N(p.grad), N(p)
        for _ in range(2):
            d = RNG.standard_normal(p0.shape) * (1 if mask is None else mask)
            vals = []
            for s in (1, -1):
                with oar.no_grad():
                    p.copy_(T(p0 + s * eps * d, str(p.device)))
                    vals.append(float(N(loss_fn())))
            with oar.no_grad():
                p.copy_(T(p0, str(p.device)))
            num = (vals[0] - vals[1]) / (2 * eps)
            assert abs(num - float(np.sum(g * d))) <= tol * max(1.0, abs(num)), (num, float(np.sum(g * d)))


# ================================================================ nn.init
def test_calculate_gain_table():
    g = nn.init.calculate_gain
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid"):
        assert g(name) == 1
    assert g("tanh") == pytest.approx(5 / 3) and g("relu") == pytest.approx(math.sqrt(2))
    assert g("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert g("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04)) and g("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        g("foo")
    with pytest.raises(ValueError, match="negative_slope"):
        g("leaky_relu", "x")


@pytest.mark.parametrize("dev", DEVICES)
def test_orthogonal_(dev):
    for shape, gain in [((4, 4), 1.0), ((3, 7), 2.0), ((8, 3), 0.5), ((6, 2, 3), 1.0)]:
        w = oar.empty(*shape, dtype=oar.float64, device=dev)
        assert nn.init.orthogonal_(w, gain) is w
        a = N(w).reshape(shape[0], -1)
        if a.shape[0] <= a.shape[1]:
            close(a @ a.T, gain ** 2 * np.eye(a.shape[0]))
        else:
            close(a.T @ a, gain ** 2 * np.eye(a.shape[1]))
    oar.manual_seed(3)
    a = N(nn.init.orthogonal_(oar.empty(5, 5)))
    oar.manual_seed(3)
    close(nn.init.orthogonal_(oar.empty(5, 5)), a)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        nn.init.orthogonal_(oar.empty(3))


@pytest.mark.parametrize("dev", DEVICES)
def test_sparse_dirac_eye_constant(dev):
    w = oar.empty(20, 6, device=dev)
    nn.init.sparse_(w, 0.25, std=0.5)
    a = N(w)
    assert ((a == 0).sum(0) == 5).all() and 0.2 < a[a != 0].std() < 1.0
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse_(oar.empty(2, 3, 4), 0.1)
    # dirac: a convolution with this weight copies its input channels
    x = T(RNG.standard_normal((1, 3, 5, 5)), dev)
    w = oar.empty(3, 3, 3, 3, dtype=oar.float64, device=dev)
    nn.init.dirac_(w)
    close(F.conv2d(x, w, padding=1), N(x))
    w = oar.empty(4, 2, 3, 3, dtype=oar.float64, device=dev)
    nn.init.dirac_(w, groups=2)
    close(F.conv2d(T(RNG.standard_normal((1, 4, 5, 5)), dev), w, padding=1, groups=2).shape, (1, 4, 5, 5))
    assert N(w)[:, :, 1, 1].tolist() == [[1, 0], [0, 1], [1, 0], [0, 1]] and N(w).sum() == 4
    w1 = N(nn.init.dirac_(oar.empty(2, 3, 3)))
    assert w1[0, 0, 1] == 1 and w1[1, 1, 1] == 1 and w1.sum() == 2
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        nn.init.dirac_(oar.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(oar.empty(3, 3, 3), groups=2)
    close(nn.init.eye_(oar.empty(2, 3, device=dev)), np.eye(2, 3))
    close(nn.init.constant_(oar.empty(2, device=dev), 0.25), [0.25, 0.25])
    close(nn.init.ones_(oar.empty(2, device=dev)), [1, 1])
    close(nn.init.zeros_(oar.empty(2, device=dev)), [0, 0])


@pytest.mark.parametrize("dev", DEVICES)
def test_random_initializers_follow_their_distributions(dev):
    n = 40000
    a = N(nn.init.uniform_(oar.empty(n, device=dev), -2, 1))
    assert a.min() >= -2 and a.max() <= 1 and abs(a.mean() + 0.5) < 0.03
    a = N(nn.init.normal_(oar.empty(n, device=dev), 1.0, 0.5))
    assert abs(a.mean() - 1) < 0.02 and abs(a.std() - 0.5) < 0.02

    def trunc_moments(mean, std, lo, hi):
        al, be = (lo - mean) / std, (hi - mean) / std
        phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
        Z = Phi(be) - Phi(al)
        m = mean + (phi(al) - phi(be)) / Z * std
        v = std ** 2 * (1 + (al * phi(al) - be * phi(be)) / Z - ((phi(al) - phi(be)) / Z) ** 2)
        return m, math.sqrt(v)
    for mean, std, lo, hi in [(0, 1, -2, 2), (1, 2, -1, 2), (0, 1, 1.5, 4)]:
        for dtype in (oar.float32, oar.float64):
            a = N(nn.init.trunc_normal_(oar.empty(n, dtype=dtype, device=dev), mean, std, lo, hi))
            m, s = trunc_moments(mean, std, lo, hi)
            assert a.min() >= lo and a.max() <= hi
            assert abs(a.mean() - m) < 0.03 * std and abs(a.std() - s) < 0.03 * std, (a.mean(), m, a.std(), s)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        nn.init.trunc_normal_(oar.empty(10), 5.0, 1.0, -1.0, 1.0)
    w = oar.empty(400, 300, device=dev)
    a = N(nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    assert abs(a.std() - math.sqrt(2 / 400)) < 0.003
    a = N(nn.init.kaiming_uniform_(w, a=math.sqrt(5)))
    bound = math.sqrt(6 / ((1 + 5) * 300))
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.95 * bound
    a = N(nn.init.xavier_normal_(w, gain=2.0))
    assert abs(a.std() - 2 * math.sqrt(2 / 700)) < 0.003
    a = N(nn.init.xavier_uniform_(w))
    assert a.max() <= math.sqrt(6 / 700)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        nn.init.kaiming_uniform_(oar.empty(0, 3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_normal_(w, mode="fan_avg")
    assert nn.init.orthogonal is nn.init.orthogonal_ and nn.init.sparse is nn.init.sparse_
    for name in ("orthogonal_", "sparse_", "dirac_", "trunc_normal_", "eye_", "kaiming_normal_"):
        assert name in nn.init.__all__


# ================================================================ flat vectors and clipping
@pytest.mark.parametrize("dev", DEVICES)
def test_parameters_to_vector_roundtrip_and_clipping(dev):
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1)).to(dev)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (11,)
    nn.utils.vector_to_parameters(v * 2, m.parameters())
    close(nn.utils.parameters_to_vector(m.parameters()), 2 * N(v), 1e-6)
    with pytest.raises(TypeError):
        nn.utils.vector_to_parameters(N(v), m.parameters())
    for p in m.parameters():
        p.grad = oar.ones(*p.shape, device=dev) * 3
    total = nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    assert abs(float(total.item()) - 3 * math.sqrt(11)) < 1e-4
    assert abs(float(N(nn.utils.parameters_to_vector(p.grad for p in m.parameters())).std())) < 1e-6
    nn.utils.clip_grad_value_(m.parameters(), 0.01)
    assert all(np.abs(N(p.grad)).max() <= 0.01 + 1e-7 for p in m.parameters())


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("norm_type", [2.0, float("inf")])
def test_clip_grad_norm_in_train_graph_matches_eager(dev, norm_type):
    """clip_grad_norm_ computes its scale on the device, so a TrainGraph step records it and gives the
    eager numbers (the norm crosses max_norm during the run: both branches of the clamp are taken)."""
    def run(static):
        oar.manual_seed(5)
        m = nn.Linear(4, 3).to(dev)
        opt = oar.optim.SGD(m.parameters(), lr=0.02)

        def step(x, y):
            loss = ((m(x) - y) ** 2).sum()
            loss.backward()
            total = nn.utils.clip_grad_norm_(m.parameters(), 10.0, norm_type=norm_type)
            opt.step()
            opt.zero_grad()
            return loss, total
        fn = oar.jit.TrainGraph(step, opt, model=m) if static else step
        x, y = oar.randn(8, 4, device=dev), oar.randn(8, 3, device=dev) * 0.1
        out = [tuple(float(t.item()) for t in fn(x, y)) for _ in range(8)]
        return out, (fn.graph if static else None)
    eager, _ = run(False)
    static, graph = run(True)
    assert graph is not None
    assert min(t for _, t in eager) < 10.0 < max(t for _, t in eager)
    np.testing.assert_allclose(static, eager, rtol=1e-5, atol=1e-6)


# ================================================================ parametrize
class Symmetric(nn.Module):
    def forward(self, X):
        return _sym(X)

    def right_inverse(self, A):
        return A


def _sym(X):
    n = X.shape[0]
    upper = oar.tensor(np.triu(np.ones((n, n))), dtype=X.dtype, device=X.device)
    strict = oar.tensor(np.triu(np.ones((n, n)), 1), dtype=X.dtype, device=X.device)
    return X * upper + (X * strict).mT


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, X):
        return X * self.s

    def right_inverse(self, A):
        return A / self.s


class SplitSum(nn.Module):  # two originals (right_inverse returns a pair)
    def forward(self, a, b):
        return a + b

    def right_inverse(self, X):
        return X * 0.25, X * 0.75


@pytest.mark.parametrize("dev", DEVICES)
def test_register_parametrization_basics(dev):
    lin = nn.Linear(3, 3, dtype=oar.float64, device=dev)
    w0 = N(lin.weight)
    orig_param = lin.weight
    parametrize.register_parametrization(lin, "weight", Symmetric())
    assert type(lin).__name__ == "ParametrizedLinear" and isinstance(lin, nn.Linear)
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias")
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    assert lin.parametrizations.weight.original is orig_param
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in lin.named_parameters()] == ["bias", "parametrizations.weight.original"]
    W = N(lin.weight)
    close(W, np.triu(w0) + np.triu(w0, 1).T)
    x = T(RNG.standard_normal((2, 3)), dev)
    close(lin(x), N(x) @ W.T + N(lin.bias))
    check_param_grad(lambda: (lin(x) ** 2).sum(), [lin.parametrizations.weight.original, lin.bias])
    # assignment goes through right_inverse; a second parametrization chains
    S = np.arange(9.0).reshape(3, 3)
    S = S + S.T
    lin.weight = T(S, dev)
    close(lin.parametrizations.weight.original, S)
    parametrize.register_parametrization(lin, "weight", Scale(2.0))
    close(lin.weight, 2 * S)
    lin.weight = T(S, dev)
    close(lin.parametrizations.weight.original, S / 2)
    assert repr(lin).startswith("ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
                                "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
                                "      (0): Symmetric()\n      (1): Scale()")
    # cached(): one computation per tensor inside the block
    with parametrize.cached():
        assert lin.weight is lin.weight
    assert lin.weight is not lin.weight
    # a copy is independent; state_dict round-trips
    lin2 = copy.deepcopy(lin)
    assert type(lin2).__name__ == "ParametrizedLinear" and isinstance(lin2, nn.Linear)
    assert lin2.parametrizations.weight.original is not orig_param
    close(lin2.weight, N(lin.weight))
    sd = lin.state_dict()
    lin3 = parametrize.register_parametrization(
        parametrize.register_parametrization(nn.Linear(3, 3, dtype=oar.float64, device=dev), "weight", Symmetric()),
        "weight", Scale(2.0))
    lin3.load_state_dict(sd)
    close(lin3.weight, N(lin.weight))
    # removal: the parametrized value (default) or the original stays
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and not hasattr(lin, "parametrizations")
    assert lin.weight is orig_param and type(lin.weight) is nn.Parameter
    close(lin.weight, S)
    assert list(lin.state_dict()) == ["bias", "weight"]  # re-registered last, as in PyTorch
    parametrize.remove_parametrizations(lin2, "weight", leave_parametrized=False)
    close(lin2.weight, S / 2)


@pytest.mark.parametrize("dev", DEVICES)
def test_parametrization_with_several_originals_and_buffers(dev):
    m = nn.Linear(2, 2, dtype=oar.float64, device=dev)
    w = N(m.weight)
    parametrize.register_parametrization(m, "weight", SplitSum())
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    close(m.parametrizations.weight.original0, w * 0.25)
    close(m.weight, w)
    m.weight = T(np.ones((2, 2)), dev)
    close(m.parametrizations.weight.original1, np.full((2, 2), 0.75))
    check_param_grad(lambda: (m(T(np.ones((1, 2)), dev)) ** 3).sum(),
                     [m.parametrizations.weight.original0, m.parametrizations.weight.original1])
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m.weight) is nn.Parameter and m.weight.requires_grad
    bn = nn.BatchNorm1d(2, dtype=oar.float64, device=dev)
    parametrize.register_parametrization(bn, "running_var", Scale(3.0))
    assert "parametrizations.running_var.original" in bn.state_dict()
    assert [n for n, _ in bn.named_buffers()][:2] == ["running_mean", "num_batches_tracked"]
    close(bn.parametrizations.running_var.original, [1 / 3, 1 / 3])  # right_inverse of Scale(3)
    close(bn.running_var, [1.0, 1.0])


def test_parametrize_errors():
    lin = nn.Linear(3, 2)

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]
    with pytest.raises(ValueError, match="may not change the shape of the tensor"):
        parametrize.register_parametrization(lin, "weight", Shrink())
    assert not parametrize.is_parametrized(lin) and type(lin) is nn.Linear
    parametrize.register_parametrization(lin, "weight", Shrink(), unsafe=True)
    assert lin.weight.shape == (1, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name "
                                         "'nope'"):
        parametrize.register_parametrization(lin, "nope", Scale(1.0))
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(lin, "bias")
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        lin.weight = oar.zeros(2, 3)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        lin.weight = nn.Parameter(oar.zeros(2, 3))
    import pickle
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)


# ================================================================ parametrizations
@pytest.mark.parametrize("dev", DEVICES)
def test_weight_norm_parametrization(dev):
    for dim in (0, 1, None):
        conv = nn.Conv2d(2, 3, 2, dtype=oar.float64, device=dev)
        w = N(conv.weight)
        P.weight_norm(conv, dim=dim)
        g, v = conv.parametrizations.weight.original0, conv.parametrizations.weight.original1
        axes = tuple(i for i in range(4) if i != dim) if dim is not None else None
        want_g = np.sqrt((w ** 2).sum(axis=axes, keepdims=dim is not None))
        close(g, want_g)
        close(v, w)
        close(conv.weight, w)
        with oar.no_grad():
            g.mul_(2.0)
        close(conv.weight, 2 * w)
        x = T(RNG.standard_normal((1, 2, 3, 3)), dev)
        check_param_grad(lambda: (conv(x) ** 2).sum(), [g, v, conv.bias])
    lin = P.weight_norm(nn.Linear(3, 4), dim=1)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert lin.parametrizations.weight.original0.shape == (1, 3)


@pytest.mark.parametrize("dev", DEVICES)
def test_spectral_norm_parametrization(dev):
    lin = nn.Linear(5, 4, dtype=oar.float64, device=dev)
    with oar.no_grad():
        lin.weight.copy_(T(well_conditioned(4, 5), dev))
    w = N(lin.weight)
    P.spectral_norm(lin)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                      "parametrizations.weight.0._v"]
    for _ in range(10):
        W = N(lin.weight)
    sv = np.linalg.svd(w, compute_uv=False)
    np.testing.assert_allclose(np.linalg.svd(W, compute_uv=False)[0], 1.0, rtol=1e-4)
    close(W * sv[0], w, 1e-4)
    lin.eval()
    u = N(lin.parametrizations.weight[0]._u)
    lin.weight
    close(lin.parametrizations.weight[0]._u, u)  # no power iteration in eval
    x = T(RNG.standard_normal((2, 5)), dev)
    check_param_grad(lambda: (lin(x) ** 2).sum(), [lin.parametrizations.weight.original])
    conv = P.spectral_norm(nn.ConvTranspose2d(3, 2, 2, dtype=oar.float64, device=dev))
    assert conv.parametrizations.weight[0].dim == 1
    assert N(conv.parametrizations.weight[0]._u).shape == (2,)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 6)])
def test_orthogonal_parametrization(dev, shape):
    lin = nn.Linear(shape[1], shape[0], bias=False, dtype=oar.float64, device=dev)
    P.orthogonal(lin)
    kind = lin.parametrizations.weight[0].orthogonal_map
    assert kind == ("matrix_exp" if shape[0] == shape[1] else "householder")
    W = N(lin.weight)
    k = min(shape)
    close(W @ W.T if shape[0] <= shape[1] else W.T @ W, np.eye(k), 1e-10)
    opt = oar.optim.SGD(lin.parameters(), lr=0.1)
    x = T(RNG.standard_normal((3, shape[1])), dev)
    for _ in range(3):
        opt.zero_grad()
        ((lin(x) - 1.0) ** 2).sum().backward()
        opt.step()
    W2 = N(lin.weight)
    assert np.abs(W2 - W).max() > 1e-3
    close(W2 @ W2.T if shape[0] <= shape[1] else W2.T @ W2, np.eye(k), 1e-9)
    # householder casts the original's diagonal (+-1) to int, a step function: it is left unperturbed
    mask = None if kind == "matrix_exp" else (np.tril(np.ones(shape), -1) if shape[0] > shape[1]
                                              else np.triu(np.ones(shape), 1))
    check_param_grad(lambda: ((lin(x) - 1.0) ** 2).sum(), [lin.parametrizations.weight.original], mask=mask)
    # assigning an orthogonal matrix makes it the weight
    q = np.linalg.qr(RNG.standard_normal((max(shape), min(shape))))[0]
    q = q if shape[0] >= shape[1] else q.T
    lin.weight = T(q, dev)
    close(lin.weight, q, 1e-10)
    with pytest.raises(NotImplementedError, match="cayley"):
        P.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley")


# ================================================================ hook-based weight_norm / spectral_norm
@pytest.mark.parametrize("dev", DEVICES)
def test_hook_weight_norm_and_spectral_norm(dev):
    lin = nn.Linear(3, 4, dtype=oar.float64, device=dev)
    w = N(lin.weight)
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(lin)
    assert list(lin.state_dict()) == ["bias", "weight_g", "weight_v"]
    close(lin.weight_g, np.linalg.norm(w, axis=1, keepdims=True))
    x = T(RNG.standard_normal((2, 3)), dev)
    close(lin(x), N(x) @ w.T + N(lin.bias))
    check_param_grad(lambda: (lin(x) ** 2).sum(), [lin.weight_g, lin.weight_v])
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            pytest.warns(FutureWarning):
        nn.utils.weight_norm(lin)
    nn.utils.remove_weight_norm(lin)
    assert list(lin.state_dict()) == ["bias", "weight"] and type(lin.weight) is nn.Parameter
    close(lin.weight, w)
    assert not lin._forward_pre_hooks and not lin._any_hooks
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(lin)

    lin = nn.Linear(5, 4, dtype=oar.float64, device=dev)
    with oar.no_grad():
        lin.weight.copy_(T(well_conditioned(4, 5), dev))
    w = N(lin.weight)
    nn.utils.spectral_norm(lin, n_power_iterations=30)
    assert list(lin.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    lin(x[:, :1].expand(2, 5))
    np.testing.assert_allclose(np.linalg.svd(N(lin.weight), compute_uv=False)[0], 1.0, rtol=1e-6)
    lin.eval()
    check_param_grad(lambda: (lin(T(np.ones((1, 5)), dev)) ** 2).sum(), [lin.weight_orig])
    nn.utils.remove_spectral_norm(lin)
    assert list(lin.state_dict()) == ["bias", "weight"]
    close(lin.weight, w / np.linalg.svd(w, compute_uv=False)[0], 1e-6)


@pytest.mark.parametrize("dev", DEVICES)
def test_fusion(dev):
    conv = nn.Conv2d(2, 3, 3, padding=1, dtype=oar.float64, device=dev)
    bn = nn.BatchNorm2d(3, dtype=oar.float64, device=dev)
    x = T(RNG.standard_normal((2, 2, 4, 4)), dev)
    bn(conv(x))
    bn(conv(x * 2))
    with oar.no_grad():
        bn.weight.copy_(T(RNG.standard_normal(3), dev))
    conv.eval()
    bn.eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    close(fused(x), N(bn(conv(x))), 1e-10)
    assert type(fused.weight) is nn.Parameter and fused.weight is not conv.weight
    lin = nn.Linear(3, 4, bias=False, dtype=oar.float64, device=dev).eval()
    bn1 = nn.BatchNorm1d(4, dtype=oar.float64, device=dev)
    bn1(lin(T(RNG.standard_normal((5, 3)), dev)))
    bn1.eval()
    fl = nn.utils.fuse_linear_bn_eval(lin, bn1)
    xl = T(RNG.standard_normal((2, 3)), dev)
    close(fl(xl), N(bn1(lin(xl))), 1e-10)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_utils_exports():
    for n in ("clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "weight_norm",
              "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval",
              "fuse_linear_bn_eval", "parametrize", "parametrizations"):
        assert hasattr(nn.utils, n) and n in nn.utils.__all__, n
    for n in ("register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
              "type_before_parametrizations", "ParametrizationList"):
        assert hasattr(parametrize, n), n
    for n in ("weight_norm", "spectral_norm", "orthogonal"):
        assert hasattr(P, n), n


# ================================================================ against torch
def _torch():
    return import_torch()


def test_torch_spectral_and_orthogonal_parametrizations_match():
    torch = _torch()
    tP = torch.nn.utils.parametrizations
    x = RNG.standard_normal((3, 5))
    for shape, kind in [((4, 5), "spectral"), ((5, 5), "matrix_exp"), ((5, 3), "householder"),
                        ((3, 5), "householder")]:
        om = nn.Linear(shape[1], shape[0], dtype=oar.float64)
        tm = torch.nn.Linear(shape[1], shape[0]).double()
        tm.load_state_dict({k: to_torch(N(v)) for k, v in om.state_dict().items()})
        if kind == "spectral":
            P.spectral_norm(om)
            tP.spectral_norm(tm)
        else:
            P.orthogonal(om, orthogonal_map=kind)
            tP.orthogonal(tm, orthogonal_map=kind)
            with torch.no_grad():
                tm.parametrizations.weight[0].base.copy_(to_torch(N(om.parametrizations.weight[0].base)))
                tm.parametrizations.weight.original.copy_(to_torch(N(om.parametrizations.weight.original)))
        sd = om.state_dict()
        assert list(sd) == list(tm.state_dict())
        tm.load_state_dict({k: to_torch(N(v)) for k, v in sd.items()})
        # a step away from the initial point, so the parametrization's derivative is exercised
        with oar.no_grad():
            om.parametrizations.weight.original.add_(T(RNG.standard_normal(shape) * 0.1))
        with torch.no_grad():
            tm.parametrizations.weight.original.copy_(to_torch(N(om.parametrizations.weight.original)))
        for _ in range(2):
            yo = om(T(x[:, :shape[1]]))
            yt = tm(to_torch(np.ascontiguousarray(x[:, :shape[1]])))
            close(yo, from_torch(yt), 1e-9)
            (yo ** 2).sum().backward()
            (yt ** 2).sum().backward()
            close(om.parametrizations.weight.original.grad, from_torch(tm.parametrizations.weight.original.grad), 1e-8)
            om.zero_grad()
            tm.zero_grad()


def test_torch_init_and_hook_norms_match():
    torch = _torch()
    for fn in ("dirac_",):
        w = N(getattr(nn.init, fn)(oar.empty(4, 2, 3, 3), groups=2))
        tw = getattr(torch.nn.init, fn)(torch.empty(4, 2, 3, 3), groups=2)
        close(w, from_torch(tw))
    for name in ("linear", "tanh", "relu", "selu", "leaky_relu"):
        assert nn.init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    lin = nn.Linear(3, 4, dtype=oar.float64)
    tl = torch.nn.Linear(3, 4).double()
    tl.load_state_dict({k: to_torch(N(v)) for k, v in lin.state_dict().items()})
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(lin, dim=1)
    torch.nn.utils.weight_norm(tl, dim=1)
    assert list(lin.state_dict()) == list(tl.state_dict())
    for k, v in tl.state_dict().items():
        close(lin.state_dict()[k], from_torch(v))
    x = RNG.standard_normal((2, 3))
    yo, yt = lin(T(x)), tl(to_torch(x))
    close(yo, from_torch(yt))
    (yo ** 2).sum().backward()
    (yt ** 2).sum().backward()
    close(lin.weight_g.grad, from_torch(tl.weight_g.grad))
    close(lin.weight_v.grad, from_torch(tl.weight_v.grad))
    lin = nn.Linear(5, 4, dtype=oar.float64)
    tl = torch.nn.Linear(5, 4).double()
    tl.load_state_dict({k: to_torch(N(v)) for k, v in lin.state_dict().items()})
    nn.utils.spectral_norm(lin)
    torch.nn.utils.spectral_norm(tl)
    assert list(lin.state_dict()) == list(tl.state_dict())
    tl.load_state_dict({k: to_torch(N(v)) for k, v in lin.state_dict().items()})
    x = RNG.standard_normal((2, 5))
    for _ in range(2):
        yo, yt = lin(T(x)), tl(to_torch(x))
        close(yo, from_torch(yt))
        (yo ** 2).sum().backward()
        (yt ** 2).sum().backward()
        close(lin.weight_orig.grad, from_torch(tl.weight_orig.grad), 1e-8)
        close(lin.weight_u, from_torch(tl.weight_u))
        lin.zero_grad()
        tl.zero_grad()
