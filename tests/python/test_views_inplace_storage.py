"""Tensor.as_strided with gradients (overlapping windows, expanded inputs, double backward), the in-place
view ops on tensors autograd tracks (unsqueeze_, t_, transpose_, squeeze_, as_strided_), detach_(),
storage()/untyped_storage()/storage_offset(), and grad_fn.register_hook/register_prehook: values against
NumPy and plain loops on every device, behaviour against PyTorch 1.13 where it is installed."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch, to_torch

DEVICES = oar._C.info()["devices"]


def _windows(values, size, stride, offset):
    """as_strided by a plain loop over a flat storage."""
    out = np.empty(size, dtype=values.dtype)
    for index in np.ndindex(*size):
        out[index] = values[offset + sum(i * s for i, s in zip(index, stride))]
    return out


# -- as_strided -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_as_strided_values_match_a_loop(device):
    base = np.arange(24, dtype=np.float32)
    t = oar.tensor(base, device=device)
    for size, stride, offset in [((3, 4), (2, 1), 1), ((5, 3), (3, 1), 0), ((2, 3, 2), (6, 0, 1), 2), ((0, 4), (1, 1), 0)]:
        got = t.as_strided(size, stride, offset)
        assert got.shape == size and got.stride() == stride and got.storage_offset() == offset
        np.testing.assert_array_equal(got.cpu().numpy(), _windows(base, size, stride, offset))
    # the offset defaults to the tensor's own, and is counted from the storage's start, not the view's
    view = t[4:]
    np.testing.assert_array_equal(view.as_strided((2, 2), (1, 1)).cpu().numpy(), [[4, 5], [5, 6]])
    np.testing.assert_array_equal(oar.as_strided(view, (2,), (3,), 0).cpu().numpy(), [0, 3])


@pytest.mark.parametrize("device", DEVICES)
def test_as_strided_gradient_adds_overlapping_windows(device):
    rng = np.random.default_rng(0)
    x = oar.tensor(rng.standard_normal(10), device=device, requires_grad=True)
    y = x * 2  # a computed (non-leaf) tensor, as in sliding-window code
    windows = y.as_strided((4, 4), (2, 1), 0)  # rows overlap by two entries
    upstream = rng.standard_normal((4, 4)).astype(np.float32)
    (windows * oar.tensor(upstream, device=device)).sum().backward()
    expected = np.zeros(10, dtype=np.float32)
    for r in range(4):
        for c in range(4):
            expected[2 * r + c] += 2 * upstream[r, c]
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=1e-6)
    assert windows.grad_fn.name() == "AsStridedBackward0"


def test_as_strided_gradcheck_and_double_backward():
    x = oar.randn(12, dtype=oar.float64, requires_grad=True)
    f = lambda t: (t.sin().as_strided((3, 4), (3, 1), 1) ** 2)
    assert oar.autograd.gradcheck(f, (x,))
    assert oar.autograd.gradgradcheck(f, (x,))


def test_as_strided_of_an_expanded_input_shares_the_gradient_like_pytorch():
    torch = import_torch()
    rng = np.random.default_rng(1)
    a = rng.standard_normal(3)
    up = rng.standard_normal(3)
    grads = []
    for lib, tensor in ((oar, oar.tensor), (torch, torch.tensor)):
        leaf = tensor(a.tolist(), dtype=lib.float64, requires_grad=True)
        e = leaf.exp().unsqueeze(0).expand(4, 3)  # every storage entry shown 4 times
        e.as_strided((3,), (1,), 0).mul(tensor(up.tolist(), dtype=lib.float64)).sum().backward()
        grads.append(np.array(leaf.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_as_strided_errors():
    t = oar.arange(6.0)
    with pytest.raises(IndexError, match="exceeds the storage of 6 elements"):
        t.as_strided((3, 3), (2, 1), 0)
    with pytest.raises(ValueError, match="differ in length"):
        t.as_strided((3, 3), (1,))


def test_as_strided_traces_into_a_static_graph():
    f = lambda t: (t * 2).as_strided((3, 4), (2, 1), 1).sum(1)
    g = oar.jit.to_static(f)
    x = oar.arange(10.0)
    np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())
    np.testing.assert_array_equal(g(x + 1).numpy(), [28, 44, 60])
    leaf = oar.arange(10.0, requires_grad=True)
    g(leaf).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [0, 2, 2, 4, 4, 4, 4, 2, 2, 0])


# -- in-place view ops under autograd ------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["unsqueeze_", "squeeze_", "t_", "transpose_", "swapdims_", "as_strided_"])
def test_inplace_view_ops_keep_the_gradient_path(device, op):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 1, 4)).astype(np.float32) if op == "squeeze_" else rng.standard_normal((3, 4)).astype(np.float32)
    x = oar.tensor(a, device=device, requires_grad=True)
    y = x * 3
    args = {"unsqueeze_": (0,), "squeeze_": (), "t_": (), "transpose_": (0, 1), "swapdims_": (0, 1),
            "as_strided_": ((2, 2), (1, 4), 1)}[op]
    ref = {"unsqueeze_": lambda v: v[None], "squeeze_": lambda v: v.squeeze(), "t_": lambda v: v.T,
           "transpose_": lambda v: v.T, "swapdims_": lambda v: v.T,
           "as_strided_": lambda v: np.lib.stride_tricks.as_strided(v.reshape(-1)[1:], (2, 2), (v.itemsize, 4 * v.itemsize))}[op]
    assert getattr(y, op)(*args) is y
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref(3 * a), rtol=1e-6)
    weights = rng.standard_normal(y.shape).astype(np.float32)
    (y * oar.tensor(weights, device=device)).sum().backward()
    expected = np.zeros(a.size, dtype=np.float32)
    flat_positions = ref(np.arange(a.size).reshape(a.shape))
    np.add.at(expected, flat_positions.reshape(-1), 3 * weights.reshape(-1))
    np.testing.assert_allclose(x.grad.cpu().numpy().reshape(-1), expected, rtol=1e-5)


def test_inplace_view_ops_match_pytorch():
    torch = import_torch()
    out = []
    for lib in (oar, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x * 2
        y.unsqueeze_(0)
        first = (y.grad_fn.name()[:-1], tuple(y.shape), y.grad_fn.next_functions[0][0].name())  # torch: ...Backward1
        v = (x * 1)[1]
        v.unsqueeze_(0)  # a view of a computed tensor stays a view, with its history
        (y.sum() + (v * lib.tensor([1.0, 10.0, 100.0])).sum()).backward()
        with pytest.raises(Exception, match="leaf"):
            x.unsqueeze_(0)
        with pytest.raises(Exception, match="leaf"):
            x[0].unsqueeze_(0)
        with lib.no_grad():
            leaf = lib.zeros(3, requires_grad=True)
            leaf.unsqueeze_(0)  # allowed outside grad mode, as in PyTorch
        out.append((first, x.grad.tolist(), tuple(leaf.shape)))
    assert out[0] == out[1]


def test_inplace_view_op_on_a_view_follows_later_writes_to_the_base():
    x = oar.ones(2, 3, requires_grad=True)
    y = x * 1
    v = y[1]
    v.unsqueeze_(0)
    y.mul_(oar.tensor([[1.0], [5.0]]))  # the base is written after: v shows, and differentiates, the new values
    np.testing.assert_array_equal(v.detach().numpy(), [[5, 5, 5]])
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0], [5, 5, 5]])


# -- detach_ -------------------------------------------------------------------------------------------------------

def test_detach_inplace_cuts_only_that_tensor():
    torch = import_torch()
    seen = []
    for lib in (oar, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * 3  # recorded before the detach: still differentiable
        assert y.detach_() is y
        z.sum().backward()
        leaf = lib.tensor([1.0], requires_grad=True)
        (leaf * 2).sum().backward()
        leaf.detach_()
        seen.append((y.requires_grad, y.grad_fn is None, y.is_leaf, x.grad.tolist(), leaf.requires_grad,
                     leaf.grad.tolist()))
        with pytest.raises(Exception, match="view"):
            (x * 1)[0].detach_()
    assert seen[0] == seen[1] == (False, True, True, [6.0, 6.0], False, [2.0])


# -- storage -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_storage_views_share_one_storage(device):
    t = oar.arange(12.0, device=device).reshape(3, 4)
    view = t[1:, 2:]
    assert view.storage_offset() == 6 and t.storage_offset() == 0
    assert view.untyped_storage().nbytes() == 48 and len(view.storage()) == 12
    assert view.storage().dtype == oar.float32 and view.storage().element_size() == 4
    assert view.storage().tolist() == list(range(12))  # the whole memory, outside the view too
    assert view.storage()[7] == 7.0
    assert oar.is_storage(view.storage()) and not oar.is_storage(view)
    if device.startswith("cpu"):
        assert view.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() == t.data_ptr()
        assert t.clone().untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
        assert view.untyped_storage().tolist()[:4] == list(np.float32(0).tobytes())
    assert "of size 12]" in repr(t.storage())


def test_storage_matches_pytorch():
    torch = import_torch()
    facts = []
    for lib in (oar, torch):
        t = lib.arange(10.0)[3:7:2]
        facts.append((t.storage_offset(), t.storage().size(), t.storage().tolist(), t.storage().element_size()))
    assert facts[0] == facts[1]


# -- grad_fn hooks --------------------------------------------------------------------------------------------------

def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def test_grad_fn_hooks_see_and_replace_gradients_like_pytorch():
    torch = import_torch()
    results = []
    for lib in (oar, torch):
        seen = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = lib.tensor([4.0, 5.0, 6.0])
        y = x * c
        y.grad_fn.register_prehook(lambda go: seen.append(("pre", _shapes(go))))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", _shapes(gi), _shapes(go))))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: seen.append(("acc", _shapes(gi), go[0].tolist())))
        y.sum().backward()
        z = x.exp()
        z.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7,))  # replaces the input gradient
        z.grad_fn.register_prehook(lambda go: (go[0] * 2,))  # doubles the output gradient first
        x.grad = None
        z.sum().backward()
        replaced = x.grad.tolist()
        w = x * 2
        handle = w.grad_fn.register_hook(lambda gi, go: (gi[0] * 0,))
        handle.remove()
        x.grad = None
        w.sum().backward()
        results.append((seen, replaced, x.grad.tolist()))
    assert results[0] == results[1]
    assert results[0][1] == [7.0, 7.0, 7.0] and results[0][2] == [2.0, 2.0, 2.0]


def test_grad_fn_hook_bad_results_are_named():
    x = oar.ones(3, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (oar.ones(2), None))
    with pytest.raises(ValueError, match="shape"):
        y.sum().backward()
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: "nope")
    with pytest.raises(TypeError, match="tuple of gradients"):
        y.sum().backward()
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (None, None))
    with pytest.raises(ValueError, match="returned 2 gradients for 1"):
        y.sum().backward()
