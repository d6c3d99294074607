"""inplace=True in nn.functional and the activation/dropout modules, and the in-place Tensor methods
(t.relu_(), t.exp_(), ...), on every present device: the result is written into the input, which
is returned itself (PyTorch: `F.relu(t, inplace=True) is t`); inplace=False leaves the input alone.
Values against NumPy; the autograd tests check that an in-place op on a non-leaf tensor is recorded
in the graph."""
import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.functional as F

DEVICES = oar._C.info()["devices"]
X = np.array([[-3.0, -1.5, -0.5, 0.0], [0.25, 0.75, 2.0, 7.0]], dtype=np.float32)


def _sig(x):
    return 1 / (1 + np.exp(-x))


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
HSIG = np.clip(X / 6 + 0.5, 0, 1)
ACTIVATIONS = {
    "relu": (lambda t, i: F.relu(t, inplace=i), np.maximum(X, 0)),
    "relu6": (lambda t, i: F.relu6(t, inplace=i), np.clip(X, 0, 6)),
    "leaky_relu": (lambda t, i: F.leaky_relu(t, 0.1, inplace=i), np.where(X > 0, X, 0.1 * X)),
    "elu": (lambda t, i: F.elu(t, 0.5, inplace=i), np.where(X > 0, X, 0.5 * (np.exp(X) - 1))),
    "selu": (lambda t, i: F.selu(t, inplace=i), SELU_S * np.where(X > 0, X, SELU_A * (np.exp(X) - 1))),
    "celu": (lambda t, i: F.celu(t, 2.0, inplace=i), np.where(X > 0, X, 2.0 * (np.exp(X / 2.0) - 1))),
    "silu": (lambda t, i: F.silu(t, inplace=i), X * _sig(X)),
    "hardtanh": (lambda t, i: F.hardtanh(t, -0.5, 2.0, inplace=i), np.clip(X, -0.5, 2.0)),
    "hardsigmoid": (lambda t, i: F.hardsigmoid(t, inplace=i), HSIG),
    "hardswish": (lambda t, i: F.hardswish(t, inplace=i), X * HSIG),
    "mish": (lambda t, i: F.mish(t, inplace=i), X * np.tanh(np.log1p(np.exp(X)))),
    "threshold": (lambda t, i: F.threshold(t, 0.5, -1.0, inplace=i), np.where(X > 0.5, X, -1.0)),
}
MODULES = {
    "ReLU": (lambda i: nn.ReLU(inplace=i), np.maximum(X, 0)),
    "ReLU6": (lambda i: nn.ReLU6(inplace=i), np.clip(X, 0, 6)),
    "LeakyReLU": (lambda i: nn.LeakyReLU(0.1, inplace=i), np.where(X > 0, X, 0.1 * X)),
    "ELU": (lambda i: nn.ELU(inplace=i), np.where(X > 0, X, np.exp(X) - 1)),
    "SiLU": (lambda i: nn.SiLU(inplace=i), X * _sig(X)),
    "Hardtanh": (lambda i: nn.activation.Hardtanh(inplace=i), np.clip(X, -1, 1)),
    "Hardswish": (lambda i: nn.activation.Hardswish(inplace=i), X * HSIG),
    "SELU": (lambda i: nn.activation.SELU(inplace=i), SELU_S * np.where(X > 0, X, SELU_A * (np.exp(X) - 1))),
}


def N(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_functional_inplace_writes_into_and_returns_the_input(name, device):
    fn, want = ACTIVATIONS[name]
    t = oar.tensor(X, device=device)
    y = fn(t, False)
    assert y is not t and np.array_equal(N(t), X)
    np.testing.assert_allclose(N(y), want, rtol=1e-5, atol=1e-6)
    y = fn(t, True)
    assert y is t
    np.testing.assert_allclose(N(t), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(MODULES))
def test_activation_modules_honour_inplace(name, device):
    make, want = MODULES[name]
    t = oar.tensor(X, device=device)
    np.testing.assert_allclose(N(make(False)(t)), want, rtol=1e-5, atol=1e-6)
    assert np.array_equal(N(t), X)
    m = make(True)
    assert m(t) is t and "inplace=True" in repr(m)
    np.testing.assert_allclose(N(t), want, rtol=1e-5, atol=1e-6)


def test_underscore_functional_aliases():
    t = oar.tensor(X)
    assert F.relu_(t) is t and np.array_equal(N(t), np.maximum(X, 0))
    t = oar.tensor(X)
    assert F.leaky_relu_(t, 0.2) is t
    np.testing.assert_allclose(N(t), np.where(X > 0, X, 0.2 * X), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_inplace(device):
    x = np.ones((64, 32), np.float32)
    t = oar.tensor(x, device=device)
    oar.manual_seed(1)
    y = F.dropout(t, 0.5, training=True, inplace=True)
    assert y is t
    v = N(t)
    assert set(np.unique(v)) <= {0.0, 2.0} and 0.4 < (v == 0).mean() < 0.6
    t = oar.tensor(x, device=device)
    assert F.dropout(t, 0.5, training=False, inplace=True) is t and np.array_equal(N(t), x)
    assert F.dropout(t, 1.0, training=True, inplace=True) is t and not N(t).any()
    t = oar.tensor(x, device=device)
    m = nn.Dropout(0.25, inplace=True)
    assert m(t) is t and set(np.unique(N(t))) <= {0.0, np.float32(1 / 0.75)}
    m.eval()
    t = oar.tensor(x, device=device)
    assert m(t) is t and np.array_equal(N(t), x)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout2d_zeroes_whole_channels(device):
    x = np.ones((8, 16, 3, 3), np.float32)
    oar.manual_seed(2)
    t = oar.tensor(x, device=device)
    y = N(F.dropout2d(t, 0.5, training=True))
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == per_channel[..., :1]))  # each channel is all kept or all dropped
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7
    assert np.array_equal(N(t), x)
    assert F.dropout2d(t, 0.5, training=True, inplace=True) is t
    assert set(np.unique(N(t))) <= {0.0, 2.0}
    with pytest.raises(oar.ShapeError):
        F.dropout2d(oar.ones(3, 3), 0.5)
    y = N(F.dropout1d(oar.ones(4, 8, 5, device=device), 0.5, training=True)).reshape(4, 8, 5)
    assert np.all(y == y[..., :1])


@pytest.mark.parametrize("device", DEVICES)
def test_alpha_dropout_keeps_zero_mean_unit_variance(device):
    oar.manual_seed(3)
    x = oar.randn(20000, device=device)
    y = F.alpha_dropout(x, 0.2, training=True)
    v = N(y)
    assert abs(v.mean()) < 0.05 and abs(v.std() - 1) < 0.05
    alpha = SELU_A * SELU_S
    a = ((alpha * alpha * 0.2 + 1) * 0.8) ** -0.5
    dropped = np.isclose(v, -alpha * a + alpha * a * 0.2, atol=1e-6)
    np.testing.assert_allclose(v[~dropped], a * N(x)[~dropped] + alpha * a * 0.2, rtol=1e-5, atol=1e-5)
    assert 0.15 < dropped.mean() < 0.25
    assert F.alpha_dropout(x, 0.2) is x  # training=False by default, as in PyTorch
    assert F.alpha_dropout(x, 0.2, training=True, inplace=True) is x


UNARY = {
    "relu_": np.maximum(X, 0), "sigmoid_": _sig(X), "tanh_": np.tanh(X), "exp_": np.exp(X), "neg_": -X,
    "abs_": np.abs(X), "square_": X * X, "sin_": np.sin(X), "cos_": np.cos(X), "floor_": np.floor(X),
    "ceil_": np.ceil(X), "round_": np.round(X), "trunc_": np.trunc(X), "sign_": np.sign(X),
}
with np.errstate(divide="ignore"):
    UNARY["reciprocal_"] = np.float32(1) / X


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(UNARY))
def test_inplace_tensor_methods(name, device):
    t = oar.tensor(X, device=device)
    want = UNARY[name]
    assert getattr(t, name)() is t
    np.testing.assert_allclose(N(t), want, rtol=1e-5, atol=1e-6)
    t = oar.tensor(X, device=device)
    assert getattr(oar, name)(t) is t  # torch.relu_(t) and friends
    np.testing.assert_allclose(N(t), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_methods_with_arguments(device):
    pos = np.abs(X) + 1
    t = oar.tensor(pos, device=device)
    assert t.sqrt_() is t
    np.testing.assert_allclose(N(t), np.sqrt(pos), rtol=1e-6)
    t = oar.tensor(pos, device=device)
    assert t.log_() is t
    np.testing.assert_allclose(N(t), np.log(pos), rtol=1e-6)
    t = oar.tensor(X, device=device)
    assert t.pow_(2) is t
    np.testing.assert_allclose(N(t), X ** 2, rtol=1e-6)
    t = oar.tensor(X, device=device)
    assert t.clamp_(min=-1, max=1) is t and np.array_equal(N(t), np.clip(X, -1, 1))
    t = oar.tensor(X, device=device)
    lo = oar.tensor([[-2.0], [1.0]], device=device)
    assert t.clamp_(min=lo) is t and np.array_equal(N(t), np.maximum(X, [[-2.0], [1.0]]))
    i = oar.tensor([-7, 7, 5], device=device)
    assert i.abs_() is i and i.tolist() == [7, 7, 5] and i.dtype == oar.int64
    assert i.neg_() is i and i.tolist() == [-7, -7, -5]


def test_inplace_float_result_into_integer_tensor_is_refused():
    i = oar.tensor([1, 2, 3])
    with pytest.raises(oar.DTypeError):
        i.exp_()
    with pytest.raises(oar.DTypeError):
        i.sigmoid_()
    assert i.tolist() == [1, 2, 3]


# ---- autograd through in-place ops ----

def test_relu_inplace_on_non_leaf_backpropagates():
    x = oar.tensor([-1.0, 0.5, 2.0, -0.25], requires_grad=True)
    y = x * 2
    out = F.relu(y, inplace=True)
    assert out is y
    y.sum().backward()
    np.testing.assert_allclose(N(x.grad), 2.0 * (N(x) * 2 > 0))


def test_relu_module_inplace_inside_a_model_backpropagates():
    lin = nn.Linear(3, 4)
    x = oar.tensor(np.array([[1.0, -2.0, 0.5], [-1.0, 0.3, 2.0]], np.float32))
    h = lin(x)
    pre = N(h).copy()
    out = nn.ReLU(inplace=True)(h)
    out.sum().backward()
    mask = (pre > 0).astype(np.float32)
    np.testing.assert_allclose(N(lin.bias.grad), mask.sum(0), rtol=1e-6)
    np.testing.assert_allclose(N(lin.weight.grad), mask.T @ N(x), rtol=1e-5)


def test_inplace_tensor_method_chain_backpropagates():
    x = oar.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x * 1.0
    y.exp_().mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(N(x.grad), 3 * np.exp(N(x)), rtol=1e-6)


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    # PyTorch: "a leaf Variable that requires grad is being used in an in-place operation".
    x = oar.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(Exception):
        F.relu(x, inplace=True)
    with oar.no_grad():
        assert F.relu(x, inplace=True) is x
    assert x.tolist() == [1.0, 0.0]


def test_inplace_on_a_view_backpropagates_through_the_base():
    x = oar.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    h = x * 2
    F.relu(h[0], inplace=True)
    assert h.tolist() == [[0.0, 4.0], [6.0, -8.0]]
    h.sum().backward()
    np.testing.assert_allclose(N(x.grad), [[0.0, 2.0], [2.0, 2.0]])


def test_modifying_a_saved_tensor_never_gives_a_wrong_gradient():
    # sigmoid's gradient reads its output. PyTorch refuses the backward once that output was changed
    # in place (version counter); keeping the saved value aside (copy-on-write) is right as well.
    x = oar.tensor([0.5, -0.5], requires_grad=True)
    y = oar.sigmoid(x)
    y.mul_(2)
    try:
        y.sum().backward()
    except oar.ValueError as e:
        assert "modified by an inplace operation" in str(e)
        return
    s = 1 / (1 + np.exp(-N(x)))
    np.testing.assert_allclose(N(x.grad), 2 * s * (1 - s), rtol=1e-6)
