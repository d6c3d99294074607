"""oar.<op>, Tensor.<op> and <op>_ come from the op catalog, not from lists; unary functor gradients
(the gradient column of kernel_primitives' unary_ops.def) against finite differences."""
import math

import numpy as np
import pytest

import oar

SCHEMAS = oar._ops.schemas
PUBLIC = sorted(n for n, s in SCHEMAS.items() if s["public"])
INTERNAL = sorted(n for n, s in SCHEMAS.items() if not s["public"])


def _tensor_first(s):
    return not s["creation"] and s["inputs"] and not s["inputs"][0]["variadic"]


def test_every_public_catalog_op_is_a_function_of_oar():
    assert len(PUBLIC) >= 90
    missing = [n for n in PUBLIC if not callable(getattr(oar, n, None))]
    assert not missing, f"public catalog ops missing from oar: {missing}"


def test_every_public_op_taking_a_tensor_first_is_a_tensor_method():
    missing = [n for n in PUBLIC if _tensor_first(SCHEMAS[n]) and not callable(getattr(oar.Tensor, n, None))]
    assert not missing, f"public catalog ops missing from oar.Tensor: {missing}"


def test_backward_kernels_and_fusions_are_by_name_only():
    assert "silu_backward" in INTERNAL and "fused_elementwise" in INTERNAL and "linear_act" in INTERNAL
    leaked = [n for n in INTERNAL if hasattr(oar, n)]
    assert not leaked, f"internal ops exposed as oar.<op>: {leaked}"
    assert all(callable(getattr(oar.ops, n)) for n in INTERNAL)


def test_softsign_function_method_and_inplace_match_numpy():
    # softsign is one line of unary_ops.def and nothing else: it is here with no Python written for it.
    v = np.array([-3.0, -0.5, 0.0, 0.25, 4.0], dtype=np.float32)
    want = v / (1 + np.abs(v))
    np.testing.assert_allclose(oar.softsign(oar.tensor(v)).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(oar.tensor(v).softsign().numpy(), want, rtol=1e-6)
    t = oar.tensor(v)
    assert oar.softsign_(t) is t
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
    u = oar.tensor(v)
    assert u.softsign_() is u
    np.testing.assert_allclose(u.numpy(), want, rtol=1e-6)


def test_generic_wrapper_takes_attributes_positionally_or_by_keyword():
    x = oar.tensor([-2.0, 3.0])
    np.testing.assert_allclose(oar.leaky_relu(x, 0.25).numpy(), [-0.5, 3.0])
    np.testing.assert_allclose(x.leaky_relu(negative_slope=0.5).numpy(), [-1.0, 3.0])
    m = oar.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(oar.select(m, 1, 2).numpy(), [2.0, 5.0])
    with pytest.raises(TypeError, match="multiple values"):
        oar.leaky_relu(x, 0.25, negative_slope=0.5)
    with pytest.raises(TypeError, match="positional"):
        oar.leaky_relu(x, 0.25, 0.5)
    with pytest.raises(TypeError, match="unexpected keyword"):
        oar.softsign(x, slope=1.0)


def test_trailing_optional_inputs_may_be_left_out():
    x, w, b = oar.ones(2, 3), oar.full((4, 3), 2.0), oar.full((4,), 0.5)
    np.testing.assert_allclose(oar.linear(x, w).numpy(), np.full((2, 4), 6.0))
    np.testing.assert_allclose(oar.linear(x, w, b).numpy(), np.full((2, 4), 6.5))
    np.testing.assert_allclose(x.linear(w).numpy(), np.full((2, 4), 6.0))


def test_an_attribute_named_device_is_an_attribute():
    # to_device's target is its attribute; `device=` places only ops without one (creation ops)
    x = oar.ones(2)
    for device in _devices():
        assert oar.to_device(x, device).device == oar.device(device)
        assert oar.ops.to_device(x, device=device).device == oar.device(device)
        assert oar.ops.uniform([3], device=device).device == oar.device(device)
    np.testing.assert_array_equal(oar.ops.concat(x, x, dim=0).numpy(), [1, 1, 1, 1])  # a variadic input, spread


def test_ops_with_torch_signatures_keep_them():
    x = oar.tensor([[1.0, -2.0], [3.0, 0.5]])
    np.testing.assert_array_equal(oar.gt(x, 0).numpy(), x.numpy() > 0)
    np.testing.assert_array_equal(oar.le(0.5, x).numpy(), 0.5 <= x.numpy())
    idx = oar.tensor([[0, 0], [1, 0]])
    got = oar.scatter_add(oar.zeros(2, 2), 0, idx, x)
    want = np.zeros((2, 2))
    np.add.at(want, (idx.numpy(), np.array([[0, 1], [0, 1]])), x.numpy())
    np.testing.assert_allclose(got.numpy(), want)
    got = oar.index_add(oar.zeros(3, 2), 0, oar.tensor([2, 0]), x, alpha=2)
    np.testing.assert_allclose(got.numpy(), [[6.0, 1.0], [0.0, 0.0], [2.0, -4.0]])
    oar.manual_seed(0)
    n = oar.normal(oar.full((1000,), 3.0), 0.5)
    assert n.shape == (1000,) and abs(float(n.mean()) - 3.0) < 0.1 and abs(float(n.std()) - 0.5) < 0.1
    assert oar.normal(1.0, 2.0, size=(4, 5)).shape == (4, 5)
    img, w = oar.randn(1, 2, 5, 5), oar.randn(3, 2, 3, 3)
    np.testing.assert_allclose(oar.conv2d(img, w, None, 1, 1).numpy(),
                               oar.nn.functional.conv2d(img, w, padding=1).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(oar.dropout(x, 0.5, False).numpy(), x.numpy())
    kept = oar.dropout(oar.ones(10000), 0.25, True).numpy()
    assert set(np.unique(kept)) <= {np.float32(0), np.float32(4 / 3)} and abs(kept.mean() - 1) < 0.05


def _devices():
    return [d for d in oar.info()["devices"] if d.split(":")[0] in ("cpu", "opencl")]


def _unary_differentiable():
    """Public elementwise ops of one tensor with a gradient and no required attribute (the unary
    functors of unary_ops.def, copy, ...): derived from the catalog, so a new .def row is checked."""
    return sorted(n for n in PUBLIC
                  if SCHEMAS[n]["elementwise"] and len(SCHEMAS[n]["inputs"]) == 1 and SCHEMAS[n]["gradient"] == "rule"
                  and all(a["has_default"] for a in SCHEMAS[n]["attrs"]))


def _smooth_input(f, device):
    """|x| in [0.15, 0.45] (away from the kinks at 0 and +-0.5), or [1.15, 1.45] where f is undefined there."""
    rng = np.random.default_rng(7)
    v = rng.uniform(0.15, 0.45, size=6) * np.array([-1, 1, -1, 1, -1, 1])
    if not np.all(np.isfinite(f(oar.tensor(v, dtype=oar.float64, device=device)).cpu().numpy())):
        v = np.abs(v) + 1.0
    return v


@pytest.mark.parametrize("name", _unary_differentiable())
def test_unary_gradient_matches_finite_differences(name):
    assert "softsign" in _unary_differentiable()
    f = getattr(oar.ops, name)  # the catalog op itself (a torch-signature wrapper may require arguments: clamp)
    for device in _devices():
        v = _smooth_input(f, device)
        x = oar.tensor(v, dtype=oar.float64, device=device, requires_grad=True)
        (g,) = oar.autograd.grad(f(x).sum(), [x])
        eps = 1e-6
        numeric = [(float(f(oar.tensor(v + eps * e, dtype=oar.float64, device=device)).sum())
                    - float(f(oar.tensor(v - eps * e, dtype=oar.float64, device=device)).sum())) / (2 * eps)
                   for e in np.eye(len(v))]
        np.testing.assert_allclose(g.cpu().numpy(), numeric, rtol=1e-5, atol=1e-7, err_msg=f"{name} on {device}")


def test_softsign_second_derivative():
    # d2/dx2 x / (1 + |x|) = -2 sign(x) / (1 + |x|)^3
    v = np.array([-1.5, -0.3, 0.4, 2.0])
    x = oar.tensor(v, dtype=oar.float64, requires_grad=True)
    (g,) = oar.autograd.grad(oar.softsign(x).sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 1 / (1 + np.abs(v)) ** 2, rtol=1e-12)
    (gg,) = oar.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), -2 * np.sign(v) / (1 + np.abs(v)) ** 3, rtol=1e-12)
    assert math.isclose(float(gg[0]), 2 / 2.5 ** 3)
