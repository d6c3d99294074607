"""In-place operations on tensors in an autograd graph, as PyTorch documents them: version counters on the
memory, in-place ops recorded (the tensor takes a new grad_fn), writes through views rebasing the base,
"modified by an inplace operation" when a saved value a gradient needs was overwritten, and leaves refused.
Gradients are checked against hand-derived values and finite differences, on every present device."""
import numpy as np
import pytest

import oar
import oar.nn as nn
import oar.nn.functional as F

DEVICES = oar._C.info()["devices"]


def N(t):
    return t.detach().cpu().numpy()


def T(values, device, grad=False):
    return oar.tensor(np.asarray(values, dtype=np.float32), device=device, requires_grad=grad)


@pytest.mark.parametrize("device", DEVICES)
def test_mul_and_relu_in_place(device):
    xv = np.array([[1.0, -2.0, 3.0], [-0.5, 0.25, 2.0]], np.float32)
    x = T(xv, device, True)
    y = x * 2
    assert y.mul_(3) is y
    assert y.relu_() is y
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(N(x.grad), 6.0 * (xv > 0))
    np.testing.assert_allclose(N(y), np.maximum(6 * xv, 0))


@pytest.mark.parametrize("device", DEVICES)
def test_residual_add_in_place(device):
    # out = relu(bn(conv(x))); out += shortcut(x): the ResNet block idiom
    oar.manual_seed(0)
    conv = nn.Conv2d(2, 2, 3, padding=1).to(device)
    bn = nn.BatchNorm2d(2).to(device)
    x = oar.randn(2, 2, 5, 5, device=device, requires_grad=True)

    def block(inplace):
        out = bn(conv(x))
        if inplace:
            out += x
            out = F.relu(out, inplace=True)
        else:
            out = F.relu(out + x)
        return out

    for p in list(conv.parameters()) + list(bn.parameters()) + [x]:
        p.grad = None
    block(False).sum().backward()
    ref = [N(p.grad) for p in (x, conv.weight, bn.weight)]
    for p in list(conv.parameters()) + list(bn.parameters()) + [x]:
        p.grad = None
    block(True).sum().backward()
    for r, p in zip(ref, (x, conv.weight, bn.weight)):
        np.testing.assert_allclose(N(p.grad), r, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_records_into_the_graph(device):
    a, b = T([1.0, 2.0, 3.0], device, True), T([4.0, 5.0, 6.0], device, True)
    buf = oar.zeros(2, 3, device=device)
    buf[1] = a * b
    assert buf.requires_grad and buf.grad_fn is not None
    (buf * T([[1, 1, 1], [2, 2, 2]], device)).sum().backward()
    np.testing.assert_allclose(N(a.grad), 2 * N(b))
    np.testing.assert_allclose(N(b.grad), 2 * N(a))


@pytest.mark.parametrize("device", DEVICES)
def test_write_through_a_view_rebases_base_and_views(device):
    x = T([1.0, 2.0, 3.0, 4.0], device, True)
    y = x * 1
    head = y[:2]                 # a view made before the write
    tail = y[2:]
    tail.mul_(10)                # in place through another view
    (y * T([1, 2, 3, 4], device)).sum().backward(retain_graph=True)
    np.testing.assert_allclose(N(x.grad), [1, 2, 30, 40])
    x.grad = None
    head.sum().backward()        # head's values did not change; its gradient reaches x
    np.testing.assert_allclose(N(x.grad), [1, 1, 0, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_stale_view_takes_values_from_base(device):
    x = T([1.0, 2.0, 3.0], device, True)
    y = x * 1
    v = y[1:]                    # made before y[1:] is overwritten
    a = T([5.0, 6.0], device, True)
    y[1:] = a * 3
    v.sum().backward()           # v now reads a*3: the gradient must go to a, not to x
    np.testing.assert_allclose(N(a.grad), [3.0, 3.0])
    np.testing.assert_allclose(N(x.grad), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("device", DEVICES)
def test_version_counter_and_modified_error(device):
    x = T([0.5, -1.0, 2.0], device, True)
    s = x.sigmoid()
    view = s[:]                  # someone else sees s's memory: it cannot be swapped away
    v0 = s._version
    view.mul_(2)
    assert s._version == v0 + 1 and view._version == s._version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_when_the_value_is_not_needed_is_allowed(device):
    x = T([0.5, -1.0, 2.0], device, True)
    y = x * 3                    # mul saved x, but not y
    z = y + 1                    # add saves nothing it needs
    y.add_(100)
    z.sum().backward()
    np.testing.assert_allclose(N(x.grad), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_keeps_saved_values_when_no_one_else_sees_them(device):
    xv = np.array([0.5, -1.0, 2.0], np.float32)
    x = T(xv, device, True)
    s = x.sigmoid()              # sigmoid's gradient needs s
    s.mul_(2)                    # s had no other observer: its memory was swapped, the saved s is intact
    s.sum().backward()
    sig = 1 / (1 + np.exp(-xv))
    np.testing.assert_allclose(N(x.grad), 2 * sig * (1 - sig), rtol=1e-5)
    np.testing.assert_allclose(N(s), 2 * sig, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_leaf_and_view_of_leaf_are_refused(device):
    w = T([1.0, 2.0], device, True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="leaf"):
        w[0] = 3.0
    with oar.no_grad():
        w.add_(1)                # optimizers do this
        w[0] = 7.0
    np.testing.assert_allclose(N(w), [7.0, 3.0])


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_matches_finite_differences(device):
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((3, 4))

    def f(xt):
        y = xt * xt
        y[:, 1:3] *= 2
        y[0] = xt[0].exp()
        y += xt
        return (y * y).sum()

    x = oar.tensor(xv, dtype=oar.float64, device=device, requires_grad=True)
    f(x).backward()
    eps, num = 1e-6, np.zeros_like(xv)
    for i in np.ndindex(xv.shape):
        for sgn in (1, -1):
            xp = xv.copy()
            xp[i] += sgn * eps
            with oar.no_grad():
                num[i] += sgn * f(oar.tensor(xp, dtype=oar.float64, device=device)).item() / (2 * eps)
    np.testing.assert_allclose(N(x.grad), num, rtol=1e-5, atol=1e-6)
