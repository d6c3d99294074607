"""NumPy interop and the object identities PyTorch code relies on: numpy() and from_numpy share memory both
ways, __array__ / __array_priority__ / __dlpack__ let NumPy take tensors, requires_grad_() returns the tensor,
`p.grad is p.grad`, register_hook returns a removable handle, and parameters are nn.Parameter by type."""
import numpy as np
import pytest

import oar
import oar.nn as nn

DEVICES = oar._C.info()["devices"]


@pytest.mark.parametrize("dtype", [oar.float32, oar.float64, oar.float16, oar.int8, oar.uint8, oar.int32,
                                   oar.int64, oar.bool])
def test_numpy_shares_memory_both_ways(dtype):
    t = oar.arange(6).to(dtype).reshape(2, 3)
    a = t.numpy()
    assert a.flags.writeable and a.shape == (2, 3)
    a[1, 2] = 0
    assert t[1, 2].item() == 0
    t[0, 0] = 1
    assert a[0, 0] == 1
    tv = t.t()                   # a strided view keeps its strides in NumPy
    assert np.array_equal(tv.numpy(), a.T)


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = oar.from_numpy(a)
    a[0, 1] = 42
    assert t[0, 1].item() == 42
    t.mul_(2)
    assert a[0, 1] == 84 and a[1, 2] == 10


def test_numpy_array_outlives_tensor_and_in_place_updates():
    t = oar.ones(4)
    a = t.numpy()
    t.add_(1)                    # an in-place op must write into the memory the array sees
    assert a.tolist() == [2, 2, 2, 2]
    del t
    assert a.sum() == 8          # the array keeps the memory alive


def test_numpy_refusals_name_the_problem():
    with pytest.raises(RuntimeError, match="requires grad"):
        oar.ones(2, requires_grad=True).numpy()
    assert oar.ones(2, requires_grad=True).numpy(force=True).tolist() == [1, 1]
    with pytest.raises(TypeError, match="bfloat16"):
        oar.ones(2, dtype=oar.bfloat16).numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_array_protocol(device):
    t = oar.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    a = np.asarray(t)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.tolist() == [[1, 2], [3, 4]]
    assert np.array(t, dtype=np.float64).dtype == np.float64
    np.testing.assert_allclose(np.exp(t), np.exp([[1, 2], [3, 4]]), rtol=1e-6)
    assert np.array(oar.ones(2, dtype=oar.bfloat16)).dtype == np.float32
    # ndarray (op) tensor defers to the tensor, as with PyTorch
    r = np.ones((2, 2), np.float32) + oar.ones(2, 2)
    assert isinstance(r, oar.Tensor) and r.tolist() == [[2, 2], [2, 2]]
    assert (oar.ones(2) * np.array([2.0, 3.0], np.float32)).tolist() == [2, 3]
    c = np.from_dlpack(oar.arange(3))
    assert c.tolist() == [0, 1, 2]


def test_requires_grad_and_grad_identity():
    t = oar.zeros(3)
    assert t.requires_grad_() is t and t.requires_grad
    (t * 2).sum().backward()
    g = t.grad
    assert t.grad is g and t.grad is t.grad
    assert g.tolist() == [2, 2, 2]


def test_register_hook_returns_removable_handle():
    x = oar.ones(2, requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3, 3]] and x.grad.tolist() == [30, 30]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert seen == [[3, 3]] and x.grad.tolist() == [3, 3]
    y = x * 1
    with y.register_hook(lambda g: g * 0):
        pass                     # the context exit removes it
    y.sum().backward()
    assert x.grad.tolist() == [4, 4]


@pytest.mark.parametrize("device", DEVICES)
def test_parameters_are_parameter_instances(device):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Conv2d(1, 1, 1), nn.Embedding(3, 2),
                          nn.LayerNorm(2))
    for m in (model, model.to(device), model.double()):
        for name, p in m.named_parameters():
            assert type(p) is nn.Parameter, name
            assert isinstance(p, oar.Tensor) and p.is_leaf and p.requires_grad
    p = nn.Parameter(oar.ones(2))
    assert type(p) is nn.Parameter and "Parameter containing" in repr(p)
    q = nn.Parameter(oar.ones(2), requires_grad=False)
    assert not q.requires_grad
    base = oar.arange(3.0)
    shared = nn.Parameter(base)
    base[0] = 9                  # Parameter(t) shares t's memory
    assert shared[0].item() == 9
    assert not isinstance(oar.ones(2), nn.Parameter)
