"""Module hooks with PyTorch's semantics: forward pre-hooks and hooks (with_kwargs, prepend, always_call),
full backward pre-hooks and hooks (gradients w.r.t. outputs and tensor inputs, checked against hand-derived
and finite-difference gradients, replacements flowing on), global module hooks, and removable handles."""
import warnings

import numpy as np
import pytest

import oar
from oar import nn
from oar.nn import module as module_mod

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(0)


def T(a, device="cpu", requires_grad=False):
    """A float64 tensor on `device`; with requires_grad, a leaf there."""
    t = oar.tensor(np.asarray(a, dtype=np.float64), dtype=oar.float64).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def N(t):
    return t.detach().cpu().numpy()


class Scale(nn.Module):
    """forward(x, s=1.0, *, bias=0.0) = x * s + bias, to see kwargs flow."""

    def forward(self, x, s=1.0, *, bias=0.0):
        return x * s + bias


class TwoInOut(nn.Module):
    """forward(x, y, k, z) = (x * y, 2 * x, k): y may not require grad, k is not a tensor, z is unused."""

    def forward(self, x, y, k, z):
        return x * y, x * 2.0, k


# ---------------------------------------------------------------- forward hooks
def test_forward_pre_hook_with_kwargs_replaces_args_and_kwargs():
    m = Scale()
    seen = []

    def pre(mod, args, kwargs):
        seen.append((mod, len(args), dict(kwargs)))
        return (args[0] + 1.0,), {"s": 10.0, "bias": kwargs.get("bias", 0.0)}
    h = m.register_forward_pre_hook(pre, with_kwargs=True)
    out = m(T([1.0, 2.0]), bias=0.5)
    np.testing.assert_array_equal(N(out), [20.5, 30.5])
    assert seen[0][0] is m and seen[0][1] == 1 and seen[0][2] == {"bias": 0.5}
    h.remove()
    assert not m._forward_pre_hooks and not m._forward_pre_hooks_with_kwargs
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)  # not (args, kwargs)
    with pytest.raises(RuntimeError, match=r"tuple of \(new_args, new_kwargs\)"):
        m(T([1.0]))


def test_forward_pre_hook_without_kwargs_wraps_a_single_result():
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args: args[0] * 3.0)  # not a tuple: wrapped
    np.testing.assert_array_equal(N(m(T([1.0]), 2.0)), [3.0])  # all positional args replaced: s is 1.0 again
    np.testing.assert_array_equal(N(m(T([1.0]), bias=0.5)), [3.5])  # kwargs are kept


def test_forward_hook_with_kwargs_and_prepend_order():
    m = Scale()
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("a") or out + 1.0)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("b", dict(kwargs))) or out * 2.0,
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    out = m(T([1.0]), s=3.0)
    assert order == ["first", "a", ("b", {"s": 3.0})]
    np.testing.assert_array_equal(N(out), [(1.0 * 3.0 + 1.0) * 2.0])


def test_always_call_forward_hook_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    m = Boom()
    calls = []
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    m.register_forward_hook(lambda mod, args, kwargs, out: 1 / 0, always_call=True, with_kwargs=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="boom"):  # the forward error, not the hook's
            m(T([1.0]))
    assert calls == [("always", None)]
    assert any("always_call=True" in str(x.message) for x in w)
    m2 = Scale()  # when forward succeeds an always_call hook runs once, like any hook
    m2.register_forward_hook(lambda mod, args, out: calls.append("ok"), always_call=True)
    m2(T([1.0]))
    assert calls[-1] == "ok" and calls.count("ok") == 1


def test_handles_remove_hooks_and_their_flags():
    m = Scale()
    calls = []
    with m.register_forward_hook(lambda *a: calls.append(1), with_kwargs=True, always_call=True):
        m(T([1.0]))
        assert len(m._forward_hooks_with_kwargs) == 1 and len(m._forward_hooks_always_called) == 1
    m(T([1.0]))
    assert calls == [1]
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs and not m._forward_hooks_always_called
    h = m.register_full_backward_hook(lambda *a: calls.append(2))
    h.remove()
    h.remove()  # idempotent
    x = T([1.0], requires_grad=True)
    m(x).sum().backward()
    assert calls == [1]


def test_global_forward_hooks_see_every_module():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seen = []
    h1 = module_mod.register_module_forward_pre_hook(lambda mod, args: seen.append(("pre", type(mod).__name__)))
    h2 = module_mod.register_module_forward_hook(lambda mod, args, out: seen.append(("post", type(mod).__name__)))
    try:
        seq(oar.ones(1, 2))
    finally:
        h1.remove()
        h2.remove()
    assert seen == [("pre", "Sequential"), ("pre", "Linear"), ("post", "Linear"), ("pre", "ReLU"), ("post", "ReLU"),
                    ("post", "Sequential")]
    seq(oar.ones(1, 2))
    assert len(seen) == 6


# ---------------------------------------------------------------- full backward hooks
@pytest.mark.parametrize("device", DEVICES)
def test_full_backward_hook_gets_hand_computed_gradients(device):
    lin = nn.Linear(3, 2, dtype=oar.float64).to(device)
    w, b = N(lin.weight), N(lin.bias)
    xv = RNG.standard_normal((4, 3))
    calls = []
    lin.register_full_backward_pre_hook(lambda mod, go: calls.append(("pre", mod, [N(g) for g in go])))
    lin.register_full_backward_hook(lambda mod, gi, go: calls.append(("full", mod, [N(g) for g in gi],
                                                                      [N(g) for g in go])))
    x = T(xv, device, requires_grad=True)
    y = lin(x)
    (y * y).sum().backward()  # dL/dy = 2y, dL/dx = 2y W
    yv = xv @ w.T + b
    assert [c[0] for c in calls] == ["pre", "full"] and calls[0][1] is lin and calls[1][1] is lin
    np.testing.assert_allclose(calls[0][2][0], 2 * yv, rtol=1e-12)
    np.testing.assert_allclose(calls[1][2][0], 2 * yv @ w, rtol=1e-12)
    np.testing.assert_allclose(calls[1][3][0], 2 * yv, rtol=1e-12)
    np.testing.assert_allclose(N(x.grad), 2 * yv @ w, rtol=1e-12)
    np.testing.assert_allclose(N(lin.weight.grad), (2 * yv).T @ xv, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_full_backward_hook_matches_finite_differences(device):
    oar.manual_seed(1)
    net = nn.Sequential(nn.Linear(3, 4, dtype=oar.float64), nn.Tanh(), nn.Linear(4, 1, dtype=oar.float64))
    net = net.to(device)
    got = []
    net.register_full_backward_hook(lambda mod, gi, go: got.append(N(gi[0])))
    xv = RNG.standard_normal((2, 3))

    def loss(v):
        with oar.no_grad():
            return float(N(net(T(v, device)).pow(2).sum()))
    x = T(xv, device, requires_grad=True)
    net(x).pow(2).sum().backward()
    eps, fd = 1e-6, np.zeros_like(xv)
    for i in np.ndindex(xv.shape):
        d = np.zeros_like(xv)
        d[i] = eps
        fd[i] = (loss(xv + d) - loss(xv - d)) / (2 * eps)
    assert len(got) == 1
    np.testing.assert_allclose(got[0], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(N(x.grad), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", DEVICES)
def test_full_backward_hook_positions_and_multiple_outputs(device):
    m = TwoInOut()
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append((gi, go)))
    xv, yv = np.array([1.0, -2.0]), np.array([3.0, 4.0])
    x, y, z = T(xv, device, requires_grad=True), T(yv, device), T([5.0], device, requires_grad=True)
    p, q, k = m(x, y, "k", z)
    assert k == "k"
    (p * 3.0 + q).sum().backward()  # dL/dp = 3, dL/dq = 1, dL/dx = 3y + 2
    assert len(calls) == 1
    gi, go = calls[0]
    assert len(gi) == 4 and gi[1] is None and gi[2] is None and gi[3] is None  # y: no grad, "k": no tensor, z unused
    np.testing.assert_allclose(N(gi[0]), 3 * yv + 2)
    assert len(go) == 3 and go[2] is None
    np.testing.assert_allclose(N(go[0]), [3.0, 3.0])
    np.testing.assert_allclose(N(go[1]), [1.0, 1.0])


@pytest.mark.parametrize("device", DEVICES)
def test_backward_hooks_replace_gradients(device):
    lin = nn.Linear(2, 2, dtype=oar.float64).to(device)
    w = N(lin.weight)
    xv = np.array([[1.0, 2.0]])
    x = T(xv, device, requires_grad=True)
    h = lin.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0.0 + 7.0,))
    lin(x).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [[7.0, 7.0]])  # the replacement flows on
    np.testing.assert_allclose(N(lin.weight.grad), np.ones((2, 1)) @ xv)  # parameters: unaffected
    h.remove()
    x.grad, lin.weight.grad = None, None
    lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3.0,))
    lin(x).sum().backward()  # grad_output scaled by 3 before it enters the module
    np.testing.assert_allclose(N(x.grad), 3.0 * np.ones((1, 2)) @ w)
    np.testing.assert_allclose(N(lin.weight.grad), 3.0 * np.ones((2, 1)) @ xv)
    x.grad = None
    lin.register_full_backward_hook(lambda mod, gi, go: (None,))  # None: no gradient flows to x
    lin(x).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [[0.0, 0.0]])
    with lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0])):
        with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
            lin(x).sum().backward()


def test_backward_hook_without_input_grads_fires_at_the_outputs():
    lin = nn.Linear(2, 1, dtype=oar.float64)
    calls = []
    lin.register_full_backward_hook(lambda mod, gi, go: calls.append((gi, N(go[0]))))
    lin(T([[1.0, 2.0], [3.0, 4.0]])).sum().backward()  # the data input does not require grad
    assert len(calls) == 1 and calls[0][0] == (None,)
    np.testing.assert_array_equal(calls[0][1], [[1.0], [1.0]])
    np.testing.assert_array_equal(N(lin.weight.grad), [[4.0, 6.0]])
    lin.register_full_backward_hook(lambda mod, gi, go: (oar.ones(2, 2),))
    with pytest.raises(RuntimeError, match="no input requires gradient"):
        lin(T([[1.0, 2.0]])).sum().backward()


def test_backward_hooks_in_a_network_fire_in_backward_order_once_per_backward():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    order = []
    for i, m in enumerate(net):
        m.register_full_backward_hook(lambda mod, gi, go, i=i: order.append(i))
    x = oar.randn(4, 2)
    x.requires_grad_(True)
    out = net(x).sum()
    out.backward(retain_graph=True)
    assert order == [2, 1, 0]
    out.backward()
    assert order == [2, 1, 0, 2, 1, 0]
    with oar.no_grad():  # nothing recorded, nothing hooked
        net(x)
    assert len(order) == 6


def test_hooks_leave_values_bit_exact():
    m = nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    x = oar.tensor([-0.0, 0.0, float("inf"), float("nan"), 1e-45])
    x.requires_grad_(True)
    y = m(x)
    np.testing.assert_array_equal(N(y).view(np.uint32), N(x).view(np.uint32))  # -0.0 stays -0.0
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(N(x.grad), np.ones(5))


def test_global_backward_hooks():
    lin = nn.Linear(2, 2, dtype=oar.float64)
    seen = []
    h = module_mod.register_module_full_backward_hook(lambda mod, gi, go: seen.append(type(mod).__name__))
    hp = module_mod.register_module_full_backward_pre_hook(lambda mod, go: seen.append("pre"))
    try:
        lin(T([[1.0, 2.0]], requires_grad=True)).sum().backward()
    finally:
        h.remove()
        hp.remove()
    assert seen == ["pre", "Linear"]
    lin(T([[1.0, 2.0]], requires_grad=True)).sum().backward()
    assert seen == ["pre", "Linear"]
