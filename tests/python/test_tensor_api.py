"""The PyTorch-like oar.Tensor API against NumPy: creation, properties, views, indexing, arithmetic and
broadcasting, in-place updates, NumPy/DLPack exchange, reductions, autograd basics and typed errors."""
import numpy as np
import pytest

import oar

RNG = np.random.default_rng(2)


def N(t):
    return t.detach().numpy()


def test_creation_functions():
    t = oar.tensor([[1, 2], [3, 4]])
    assert t.dtype == oar.int64 and t.shape == (2, 2) and t.ndim == 2 and t.numel() == 4
    assert oar.tensor([1.5]).dtype == oar.float32 and oar.tensor([True]).dtype == oar.bool
    assert oar.tensor(np.zeros(3, np.float64)).dtype == oar.float64
    assert np.array_equal(N(oar.zeros(2, 3)), np.zeros((2, 3))) and oar.zeros((2, 3)).shape == (2, 3)
    assert np.array_equal(N(oar.ones(2, dtype=oar.float64)), np.ones(2))
    assert np.array_equal(N(oar.full((2,), 7)), [7, 7]) and oar.full((2,), 7).dtype == oar.int64
    assert np.array_equal(N(oar.arange(5)), np.arange(5))
    np.testing.assert_allclose(N(oar.arange(0, 1, 0.25)), [0, 0.25, 0.5, 0.75])
    assert np.array_equal(N(oar.eye(3)), np.eye(3))
    like = oar.zeros_like(oar.ones(2, 2, dtype=oar.float64))
    assert like.dtype == oar.float64 and not N(like).any()
    oar.manual_seed(0)
    u = N(oar.rand(2000))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    n = N(oar.randn(4000))
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    r = N(oar.randint(3, 7, (1000,)))
    assert r.min() == 3 and r.max() == 6
    oar.manual_seed(5)
    a = N(oar.rand(5))
    oar.manual_seed(5)
    assert np.array_equal(a, N(oar.rand(5)))


def test_from_numpy_shares_memory_and_dlpack():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = oar.from_numpy(arr)
    arr[0, 0] = 100
    assert t[0, 0].item() == 100
    back = np.from_dlpack(t)
    assert np.array_equal(back, arr)
    t2 = oar.from_dlpack(np.ones(4, dtype=np.float64))
    assert t2.dtype == oar.float64 and N(t2).sum() == 4
    with pytest.raises(TypeError):
        oar.from_numpy([1, 2])


def test_views_and_shapes():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = oar.tensor(a)
    assert np.array_equal(N(t.view(6, 4)), a.reshape(6, 4))
    assert np.array_equal(N(t.reshape(-1)), a.ravel())
    assert np.array_equal(N(t.reshape((4, 6))), a.reshape(4, 6))
    assert np.array_equal(N(t.permute(2, 0, 1)), a.transpose(2, 0, 1))
    assert np.array_equal(N(t.transpose(0, 2)), a.swapaxes(0, 2))
    assert np.array_equal(N(t[0].t()), a[0].T) and np.array_equal(N(t.T), a.T)
    assert t.unsqueeze(1).shape == (2, 1, 3, 4) and t.unsqueeze(1).squeeze(1).shape == (2, 3, 4)
    assert oar.zeros(1, 3, 1).squeeze().shape == (3,)
    assert np.array_equal(N(t.flatten(1)), a.reshape(2, 12))
    assert np.array_equal(N(t.narrow(2, 1, 2)), a[:, :, 1:3])
    assert np.array_equal(N(oar.tensor([1.0, 2.0]).expand(3, 2)), [[1, 2]] * 3)
    p = t.permute(1, 0, 2)
    assert not p.is_contiguous() and p.contiguous().is_contiguous()
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.stride() == (12, 4, 1)
    with pytest.raises(ValueError):
        t.view(5, 5)


def test_indexing_and_setitem():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = oar.tensor(a)
    for key in [1, -1, (1, 2), (slice(None), 1), (slice(0, 3, 2), slice(1, None), -2), (Ellipsis, 3),
                (None, 1), (1, None, slice(None, None, 2)), (slice(None), slice(None), slice(1, 4))]:
        assert np.array_equal(N(t[key]), a[key]), key
    assert np.array_equal(N(t[[2, 0]]), a[[2, 0]])
    assert np.array_equal(N(t[:, oar.tensor([3, 1, 1])]), a[:, [3, 1, 1]])
    assert np.array_equal(N(t[oar.tensor([[0, 1], [2, 2]])]), a[np.array([[0, 1], [2, 2]])])
    t[0, 1] = 7.0
    a[0, 1] = 7.0
    t[1, :, 2:4] = oar.zeros(4, 2)
    a[1, :, 2:4] = 0
    assert np.array_equal(N(t), a)
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]


def test_arithmetic_broadcasting_and_scalars():
    a = RNG.standard_normal((3, 1, 4))
    b = RNG.standard_normal((2, 4))
    ta, tb = oar.tensor(a), oar.tensor(b)
    np.testing.assert_allclose(N(ta + tb), a + b)
    np.testing.assert_allclose(N(ta - tb), a - b)
    np.testing.assert_allclose(N(ta * tb), a * b)
    np.testing.assert_allclose(N(ta / (tb + 10)), a / (b + 10))
    np.testing.assert_allclose(N(2 - ta), 2 - a)
    np.testing.assert_allclose(N(1 / (ta * ta + 1)), 1 / (a * a + 1))
    np.testing.assert_allclose(N(ta ** 2), a ** 2)
    np.testing.assert_allclose(N(-ta), -a)
    np.testing.assert_allclose(N(abs(ta)), np.abs(a))
    assert np.array_equal(N(ta > 0), a > 0) and np.array_equal(N(ta <= tb), a <= b)
    assert np.array_equal(N(oar.tensor([1, 2]) == 2), [False, True])
    m, k = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 5))
    np.testing.assert_allclose(N(oar.tensor(m) @ oar.tensor(k)), m @ k, rtol=1e-12)
    np.testing.assert_allclose(N(oar.matmul(oar.tensor(k[:, 0]), oar.tensor(k))), k[:, 0] @ k, rtol=1e-12)
    assert (oar.tensor([1, 2]) / 2).is_floating_point()
    assert oar.tensor([1, 2], dtype=oar.int32).float().dtype == oar.float32
    np.testing.assert_allclose(N(oar.tensor([1.7, -1.7]).long()), [1, -1])


def test_functions_and_reductions():
    a = RNG.standard_normal((3, 4))
    t = oar.tensor(a)
    np.testing.assert_allclose(N(t.sum()), a.sum())
    np.testing.assert_allclose(N(t.sum(1)), a.sum(1))
    np.testing.assert_allclose(N(t.mean(0, keepdim=True)), a.mean(0, keepdims=True))
    np.testing.assert_allclose(N(t.var(1)), a.var(1, ddof=1))
    np.testing.assert_allclose(N(t.std()), a.std(ddof=1))
    v, i = t.max(1)
    assert np.array_equal(N(v), a.max(1)) and np.array_equal(N(i), a.argmax(1))
    assert t.max(dim=0).indices.tolist() == a.argmax(0).tolist()
    assert t.argmin().item() == a.argmin()
    np.testing.assert_allclose(N(oar.exp(t)), np.exp(a))
    np.testing.assert_allclose(N(t.clamp(-0.5, 0.5)), np.clip(a, -0.5, 0.5))
    np.testing.assert_allclose(N(oar.where(t > 0, t, 0.0)), np.where(a > 0, a, 0))
    np.testing.assert_allclose(N(oar.cat([t, t], 1)), np.concatenate([a, a], 1))
    np.testing.assert_allclose(N(oar.stack([t, t])), np.stack([a, a]))
    parts = t.split(3, dim=1)
    assert [p.shape for p in parts] == [(3, 3), (3, 1)]
    assert len(oar.chunk(t, 2, 0)) == 2


def test_in_place_updates():
    t = oar.zeros(3, dtype=oar.float64)
    ptr = t.data_ptr()
    t += 1
    t.mul_(3)
    t.add_(oar.ones(3, dtype=oar.float64), alpha=2)
    t -= 1
    t /= 2
    assert N(t).tolist() == [2.0, 2.0, 2.0] and t.data_ptr() == ptr
    t.copy_(oar.tensor([1.0, 2.0, 3.0]))
    assert N(t).tolist() == [1.0, 2.0, 3.0] and t.dtype == oar.float64
    t.fill_(4)
    assert N(t).tolist() == [4.0] * 3
    t.zero_()
    assert not N(t).any()
    w = oar.ones(2, requires_grad=True)
    with pytest.raises(ValueError):
        w.add_(1)
    with oar.no_grad():
        w -= 0.5
    assert N(w).tolist() == [0.5, 0.5] and w.requires_grad and w.is_leaf
    w.data = oar.tensor([3.0, 4.0])
    assert N(w).tolist() == [3.0, 4.0] and w.requires_grad
    assert not w.data.requires_grad


def test_numpy_item_tolist_and_conversions():
    t = oar.tensor([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]] and t[0, 1].item() == 2.0 and float(t[0, 0]) == 1.5
    assert len(t) == 1 and int(oar.tensor(3)) == 3
    with pytest.raises(ValueError):
        t.item()
    with pytest.raises(ValueError):
        bool(t)
    r = oar.ones(2, requires_grad=True)
    with pytest.raises(ValueError):
        r.numpy()
    assert np.array_equal(r.detach().numpy(), [1, 1])
    assert repr(oar.tensor([1.0, 2.0])).startswith("tensor(") and "requires_grad=True" in repr(r)
    assert str(oar.float32) == "oar.float32" and oar.tensor([1]).device == oar.device("cpu")


def test_autograd_basics():
    a = RNG.standard_normal((3, 2))
    x = oar.tensor(a, requires_grad=True)
    y = (x * x).sum() + (x.exp() * 2).mean()
    assert y.grad_fn is not None and x.is_leaf and not y.is_leaf
    y.backward()
    np.testing.assert_allclose(N(x.grad), 2 * a + 2 * np.exp(a) / 6, rtol=1e-12)
    (x * 3).sum().backward()  # gradients accumulate
    np.testing.assert_allclose(N(x.grad), 2 * a + 2 * np.exp(a) / 6 + 3, rtol=1e-12)
    x.grad = None
    with oar.no_grad():
        z = x * 2
    assert not z.requires_grad and x.detach().requires_grad is False
    seen = []
    h = x * 1.0
    h.register_hook(lambda grad: seen.append(N(grad)) or grad * 2)
    h.retain_grad()
    (h * 5).sum().backward()
    assert len(seen) == 1 and np.allclose(seen[0], 5)
    np.testing.assert_allclose(N(x.grad), 10 * np.ones_like(a))
    with pytest.raises(RuntimeError, match="one element"):
        (x * 2).backward()  # non-scalar output without a gradient
    (x * 2).backward(oar.ones(3, 2, dtype=oar.float64))
    np.testing.assert_allclose(N(x.grad), 12 * np.ones_like(a))


def test_autograd_functional_api():
    a = RNG.standard_normal((3, 2))
    x = oar.tensor(a, requires_grad=True)
    g, = oar.autograd.grad((x ** 3).sum(), [x])
    np.testing.assert_allclose(N(g), 3 * a ** 2, rtol=1e-12)
    assert x.grad is None
    oar.autograd.backward((x * 4).sum())
    np.testing.assert_allclose(N(x.grad), 4 * np.ones_like(a))


def test_typed_errors_are_python_exceptions():
    with pytest.raises(ValueError) as e:
        oar.zeros(2, 3) @ oar.zeros(4, 5)
    assert isinstance(e.value, oar.ShapeError) and isinstance(e.value, RuntimeError)
    with pytest.raises(ValueError):
        oar.zeros(2, 3) + oar.zeros(4)
    with pytest.raises(TypeError):
        oar.zeros(2) + "a"
    with pytest.raises(TypeError):
        oar.tensor([1, 2]).requires_grad_(True)
    with pytest.raises(TypeError):
        oar.zeros("a")
    with pytest.raises(TypeError):
        oar.ops.relu(oar.zeros(1), bogus=1)
    with pytest.raises(IndexError):
        oar.zeros(3).index_select(0, oar.tensor([5]))


def test_pytorch_idioms_matmul_masks_and_helpers():
    a, b = np.arange(3.0), np.arange(6.0).reshape(3, 2)
    ta, tb = oar.tensor(a), oar.tensor(b)
    assert (ta @ ta).shape == () and (ta @ ta).item() == a @ a
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b)
    np.testing.assert_allclose((tb.T @ ta).numpy(), b.T @ a)
    np.testing.assert_allclose(oar.matmul(oar.ones(4, 2, 3), ta).numpy(), np.ones((4, 2, 3)) @ a)
    with pytest.raises(ValueError):
        oar.tensor(1.0) @ ta
    x = oar.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(x[oar.tensor([True, False, True])].numpy(), np.arange(12.0).reshape(3, 4)[[0, 2]])
    np.testing.assert_array_equal(x[x > 8].numpy(), [9.0, 10.0, 11.0])
    with pytest.raises(IndexError):
        x[oar.tensor([True, False])]
    x[x > 8] = -1.0
    assert x.numpy()[2].tolist() == [8.0, -1.0, -1.0, -1.0]
    g = oar.tensor([1.0, -2.0, 3.0], requires_grad=True)
    g[g > 0].sum().backward()
    assert g.grad.tolist() == [1.0, 0.0, 1.0]
    assert oar.ones(4, 2, 3).mT.shape == (4, 3, 2)
    y = oar.tensor([-2.0, 0.5, 4.0])
    y.clamp_(-1, 1)
    assert y.tolist() == [-1.0, 0.5, 1.0]
    assert y.masked_fill(y > 0, 0.0).tolist() == [-1.0, 0.0, 0.0]
    assert [t.tolist() for t in oar.ones(2, 3).unbind(1)] == [[1.0, 1.0]] * 3
    assert oar.ones(1, 3).expand_as(oar.ones(2, 3)).shape == (2, 3)
    assert oar.ones(2).type_as(oar.ones(1, dtype=oar.float64)).dtype == oar.float64
    np.testing.assert_allclose(oar.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5), atol=1e-7)
    oar.manual_seed(3)
    p = oar.randperm(10)
    oar.manual_seed(3)
    assert sorted(p.tolist()) == list(range(10)) and oar.randperm(10).tolist() == p.tolist()
    assert oar.randn_like(oar.ones(2, 3, dtype=oar.float64)).dtype == oar.float64
    assert oar.cuda.is_available() == ("cuda" in [d.split(":")[0] for d in oar.info()["devices"]])
    with oar.inference_mode():
        assert not oar.is_grad_enabled()

    @oar.inference_mode
    def f():
        return oar.is_grad_enabled()
    assert f() is False and oar.is_grad_enabled()


# -- tensor() of sequences holding tensors or NumPy scalars: each element's dtype counts, as in torch.tensor --------

_TENSOR_LEAVES = {
    "0d_tensors": lambda m: [m.tensor(1.5), m.tensor(2.5)],
    "0d_float64_tensor": lambda m: [m.tensor(1.0, dtype=m.float64)],
    "int_tensors": lambda m: [m.tensor(1), m.tensor(2)],
    "int_tensor_and_float": lambda m: [m.tensor(1), 2.5],
    "int32_tensor_and_int": lambda m: [m.tensor(1, dtype=m.int32), 5],
    "half_tensor_and_float": lambda m: [m.tensor(1.0, dtype=m.float16), 2.0],
    "one_element_tensor": lambda m: [m.tensor([3.0])],
    "nested_0d": lambda m: [[m.tensor(1.0), m.tensor(2.0)], [3.0, 4.0]],
    "bool_tensors": lambda m: [m.tensor(True), m.tensor(False)],
}


@pytest.mark.parametrize("name", sorted(_TENSOR_LEAVES))
def test_tensor_of_tensor_elements_matches_torch(name):
    from torch_ref import import_torch
    torch = import_torch()
    make = _TENSOR_LEAVES[name]
    ours, theirs = oar.tensor(make(oar)), torch.tensor(make(torch))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()
    assert not ours.requires_grad


# What PyTorch 1.13 gives for NumPy scalars (alone and in lists); written out, since the PyTorch that tests
# may import is built for another NumPy and can't read NumPy 2's scalars.
@pytest.mark.parametrize("data, dtype", [
    (np.float64(2.5), oar.float64), (np.float32(2.5), oar.float32), (np.int32(7), oar.int32),
    (np.bool_(True), oar.bool), ([np.float64(1.0), np.float64(2.0)], oar.float64), ([np.float64(1.0), 1], oar.float64),
    ([np.float32(1.0), 2.0], oar.float32), ([np.int32(1), 5], oar.int64), ([True, np.bool_(False)], oar.bool),
    ([oar.tensor(1, dtype=oar.int32), np.int32(5)], oar.int32),
])
def test_tensor_of_numpy_scalars_keeps_their_dtype(data, dtype):
    t = oar.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=object).astype(t.numpy().dtype))


def test_tensor_of_typed_leaves_rules():
    assert oar.tensor([np.float64(1.0)], dtype=oar.float32).dtype == oar.float32  # an explicit dtype wins
    assert not oar.tensor([oar.tensor(1.0, requires_grad=True)]).requires_grad
    with pytest.raises(ValueError, match="only one element tensors"):
        oar.tensor([oar.tensor([1.0, 2.0])])
    oar.set_default_dtype(oar.float64)
    try:  # a Python float counts as the default dtype, a float32 tensor as float32
        assert oar.tensor([oar.tensor(1.0, dtype=oar.float32), 2.0]).dtype == oar.float64
        assert oar.tensor([oar.tensor(1.0, dtype=oar.float32)]).dtype == oar.float32
    finally:
        oar.set_default_dtype(oar.float32)


def test_sizes_take_integer_tensors_and_numpy_ints():
    n = oar.tensor(2)  # as torch: anything with __index__ stands for an int (x.size(0) of another tensor, ...)
    for t in (oar.zeros(n, 3), oar.ones((n, 3)), oar.randn(n, np.int64(3)), oar.rand(n, 3), oar.empty(n, 3),
              oar.full((n, 3), 1.0), oar.randint(0, 5, (n, 3))):
        assert tuple(t.shape) == (2, 3)
    for bad in (oar.tensor(2.0), oar.tensor([1, 2]), 2.5, True):
        with pytest.raises(TypeError, match="size must be a sequence of ints"):
            oar.zeros(bad, 3)
