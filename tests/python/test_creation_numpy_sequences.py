"""torch.tensor / torch.as_tensor on NumPy data as RL and data-loading code writes it: a list of NumPy arrays
(a replay buffer's states) becomes one tensor typed by the arrays, and as_tensor shares a NumPy array's memory
as from_numpy does, copying only when asked for another dtype or device. The expected dtypes are what
PyTorch 1.13 gives (its NumPy bridge can't be used from here: torch_ref.py)."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch


@pytest.fixture(scope="module")
def torch():
    return import_torch()


# name: (data, the dtype torch.tensor(data) has in PyTorch 1.13)
LISTS = {
    "float64 arrays": (lambda: [np.zeros(2), np.ones(2)], oar.float64),
    "float32 arrays": (lambda: [np.arange(3, dtype=np.float32), np.ones(3, np.float32)], oar.float32),
    "int32 arrays": (lambda: [np.arange(3, dtype=np.int32)] * 2, oar.int32),
    "bool arrays": (lambda: [np.array([True, False])] * 3, oar.bool),
    "float32 and int64 promote": (lambda: [np.zeros(2, np.float32), np.ones(2, np.int64)], oar.float32),
    "array and a list of floats": (lambda: [np.zeros(2, np.float32), [1.5, 2.0]], oar.float32),
    "nested one level deeper": (lambda: [[np.zeros(2, np.float32)], [np.ones(2, np.float32)]], oar.float32),
    "tuple of 2-D states": (lambda: tuple(np.random.RandomState(i).randn(2, 3) for i in range(4)), oar.float64),
}


@pytest.mark.parametrize("name", LISTS)
def test_tensor_of_numpy_arrays(name):
    make, dtype = LISTS[name]
    ours = oar.tensor(make())
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours.numpy(), np.array(make()))


def test_tensor_of_numpy_arrays_with_dtype():
    t = oar.tensor([np.zeros(2), np.full(2, 0.5)], dtype=oar.float32)
    assert t.dtype == oar.float32 and t.tolist() == [[0.0, 0.0], [0.5, 0.5]]
    states = [np.random.RandomState(i).randn(5).astype(np.float32) for i in range(64)]
    np.testing.assert_array_equal(oar.tensor(states).numpy(), np.stack(states))


def test_tensor_of_ragged_arrays_is_an_error():
    with pytest.raises(ValueError):
        oar.tensor([np.zeros(2), np.ones(3)])


def test_tensor_of_numpy_arrays_is_a_copy():
    a = np.zeros(2, np.float32)
    t = oar.tensor([a, a])
    a[0] = 7
    assert t.tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_])
def test_as_tensor_shares_numpy_memory(dtype):
    a = np.zeros(3, dtype)
    t = oar.as_tensor(a)
    assert t.dtype == oar.from_numpy(np.zeros(3, dtype)).dtype
    t[1] = 1
    assert a[1] == 1  # torch.as_tensor(ndarray) is torch.from_numpy(ndarray): no copy


def test_as_tensor_copies_for_another_dtype_and_keeps_other_arrays_working():
    a = np.zeros(3, np.float32)
    t = oar.as_tensor(a, dtype=oar.float64)
    t += 1
    assert t.dtype == oar.float64 and a.tolist() == [0.0, 0.0, 0.0]
    frozen = np.arange(3, dtype=np.float32)
    frozen.flags.writeable = False                   # from_numpy refuses these: as_tensor copies instead
    assert oar.as_tensor(frozen).tolist() == [0.0, 1.0, 2.0]
    strided = np.arange(12.0).reshape(3, 4)[:, ::2]  # a view with NumPy strides is shared as it is
    s = oar.as_tensor(strided)
    strided[0, 1] = -1
    assert s[0, 1].item() == -1 and s.tolist()[1] == [4.0, 6.0]


def test_as_tensor_of_a_tensor_converts_with_autograd():
    x = oar.ones(2, requires_grad=True)
    assert oar.as_tensor(x) is x
    y = oar.as_tensor(x, dtype=oar.float64)
    assert y.dtype == oar.float64 and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_distribution_shapes_are_sizes(torch):
    # torch's batch_shape / event_shape are torch.Size; code calls .numel() on them or prints them
    import oar.distributions as D
    d = D.Independent(D.Normal(oar.zeros(3, 2), oar.ones(3, 2)), 1)
    assert isinstance(d.batch_shape, oar.Size) and isinstance(d.event_shape, oar.Size)
    assert d.batch_shape == (3,) and d.event_shape == (2,) and d.event_shape.numel() == 2
    assert isinstance(D.MultivariateNormal(oar.zeros(2), oar.eye(2)).event_shape, oar.Size)
    assert isinstance(D.Normal(0.0, 1.0).batch_shape, oar.Size)
    assert d.expand((5, 3)).batch_shape == (5, 3) and isinstance(d.expand((5, 3)).batch_shape, oar.Size)
    theirs = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(3, 2), torch.ones(3, 2)), 1)
    assert tuple(d._extended_shape((4,))) == tuple(theirs._extended_shape((4,)))
