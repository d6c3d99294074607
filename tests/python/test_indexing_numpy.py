"""Tensor indexing against NumPy on a generated grid of keys: ints, slices, None, Ellipsis, boolean masks,
1-D and 2-D integer lists/arrays/tensors, adjacent and separated advanced indices; reading, assigning (a
scalar and a full-shape value) and the gradient of reading, on every present device. The full grid runs on
the CPU; other devices run every fifth key (each key is many small kernels there)."""
import itertools

import numpy as np
import pytest

import oar

DEVICES = oar._C.info()["devices"]
SHAPE = (4, 5, 6)

# Components valid on any dim of SHAPE (every integer value is < 4).
COMPONENTS = [
    ("int", 1), ("negint", -1), ("all", slice(None)), ("range", slice(1, 4)), ("step", slice(None, None, 2)),
    ("none", None), ("ellipsis", Ellipsis), ("list", [0, 2]), ("negarr", np.array([3, -1, 0])),
    ("dup", [1, 1]), ("arr2d", np.array([[0, 1], [2, 3]])), ("tensor", "T"), ("npint", np.int64(2)),
]


def _as_oar(c, device):
    if isinstance(c, str) and c == "T":
        return oar.tensor([2, 0], device=device)
    return c


def _as_np(c):
    return np.array([2, 0]) if isinstance(c, str) and c == "T" else c


def _keys():
    keys = []
    for n in (1, 2, 3):
        for combo in itertools.product(COMPONENTS, repeat=n):
            names = [c[0] for c in combo]
            if names.count("ellipsis") > 1:
                continue
            keys.append(tuple(c[1] for c in combo))
    return keys


KEYS = _keys()
X = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)


def _np_result(key):
    try:
        return X[tuple(_as_np(c) for c in key)]
    except IndexError:
        return None


def _grid(device):
    return KEYS if device.startswith("cpu") else KEYS[::5]


@pytest.mark.parametrize("device", DEVICES)
def test_read_matches_numpy(device):
    t = oar.tensor(X, device=device)
    checked = 0
    for key in _grid(device):
        expected = _np_result(key)
        okey = tuple(_as_oar(c, device) for c in key)
        if expected is None:
            with pytest.raises(IndexError):
                t[okey]
            continue
        got = t[okey]
        assert got.shape == expected.shape, (key, got.shape, expected.shape)
        np.testing.assert_array_equal(got.cpu().numpy(), expected, err_msg=repr(key))
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("device", DEVICES)
def test_assign_matches_numpy(device):
    for i, key in enumerate(_grid(device)):
        expected = _np_result(key)
        if expected is None:
            continue
        okey = tuple(_as_oar(c, device) for c in key)
        nkey = tuple(_as_np(c) for c in key)
        # a scalar, then a value of the result's shape (distinct numbers, so the winner of a repeat shows)
        for value in (-7.0, np.arange(expected.size, dtype=np.float32).reshape(expected.shape) + 1000):
            ref = X.copy()
            ref[nkey] = value
            t = oar.tensor(X, device=device)
            t[okey] = value if np.isscalar(value) else oar.tensor(value, device=device)
            np.testing.assert_array_equal(t.cpu().numpy(), ref, err_msg=repr(key))


@pytest.mark.parametrize("device", DEVICES)
def test_read_gradient_matches_numpy(device):
    rng = np.random.default_rng(0)
    for key in _grid(device)[::3]:
        expected = _np_result(key)
        if expected is None or expected.size == 0:
            continue
        nkey = tuple(_as_np(c) for c in key)
        w = rng.standard_normal(expected.shape).astype(np.float32)
        t = oar.tensor(X, device=device, requires_grad=True)
        (t[tuple(_as_oar(c, device) for c in key)] * oar.tensor(w, device=device)).sum().backward()
        ref = np.zeros_like(X)
        np.add.at(ref, nkey, w)  # repeated indices accumulate, as the gradient must
        np.testing.assert_allclose(t.grad.cpu().numpy(), ref, rtol=1e-6, err_msg=repr(key))


@pytest.mark.parametrize("device", DEVICES)
def test_issue_examples(device):
    x = oar.tensor(np.arange(20.0).reshape(4, 5), device=device)
    rows, cols = [0, 2, 3], [1, 3, 4]
    assert x[rows, cols].tolist() == [1.0, 13.0, 19.0]
    idx = oar.tensor([4, 3, 2, 1], device=device)
    assert x[oar.arange(4, device=device), idx].tolist() == [4.0, 8.0, 12.0, 16.0]
    assert x[oar.tensor(rows, device=device)[:, None], cols].shape == (3, 3)
    cube = oar.tensor(np.arange(24.0).reshape(2, 3, 4), device=device)
    assert cube[[0, 1], :, [1, 2]].shape == (2, 3)
    assert x[None].shape == (1, 4, 5) and x[:, None].shape == (4, 1, 5)


@pytest.mark.parametrize("device", DEVICES)
def test_boolean_masks(device):
    x = oar.tensor(X, device=device)
    m2 = X[..., 0] > 40  # a mask over the first two dims
    np.testing.assert_array_equal(x[oar.tensor(m2, device=device)].cpu().numpy(), X[m2])
    np.testing.assert_array_equal(x[:, [True, False, True, False, True]].cpu().numpy(),
                                  X[:, [True, False, True, False, True]])
    np.testing.assert_array_equal(x[1, :, X[1, 0] > 2].cpu().numpy(), X[1, :, X[1, 0] > 2])
    y = oar.tensor(X, device=device)
    y[y > 50] = 0
    ref = X.copy()
    ref[ref > 50] = 0
    np.testing.assert_array_equal(y.cpu().numpy(), ref)
    with pytest.raises(IndexError, match="mask"):
        x[oar.ones(3, 5, dtype=oar.bool, device=device)]


@pytest.mark.parametrize("device", DEVICES)
def test_index_put_and_augmented_assignment(device):
    y = oar.zeros(3, 4, device=device)
    y[[0, 2], [1, 3]] = oar.tensor([5.0, 6.0], device=device)
    assert y.tolist() == [[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 6]]
    z = oar.zeros(5, device=device)
    idx = oar.tensor([0, 0, 2], device=device)
    z[idx] += 1  # read, add, write back: a repeated index is written once, as in PyTorch and NumPy
    assert z.tolist() == [1, 0, 1, 0, 0]
    assert z.index_put_((idx,), oar.ones(3, device=device), accumulate=True) is z
    assert z.tolist() == [3, 0, 2, 0, 0]
    b = oar.zeros(2, 3, dtype=oar.bool, device=device)
    b[[1], [2]] = True
    assert b.tolist() == [[False] * 3, [False, False, True]]


@pytest.mark.parametrize("device", DEVICES)
def test_assignment_is_differentiable(device):
    a = oar.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = oar.tensor([1.0, 1.0, 1.0, 1.0], device=device, requires_grad=True)
    y = x * 2
    y[[0, 3]] = a * 10
    (y * oar.tensor([1.0, 2.0, 3.0, 4.0], device=device)).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), [10.0, 40.0])
    np.testing.assert_allclose(x.grad.cpu().numpy(), [0.0, 4.0, 6.0, 0.0])


def test_bad_indices_are_typed_errors():
    x = oar.zeros(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 3], [1, 1]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="integer or bool"):
        x[oar.tensor([0.5])]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="valid indices"):
        x["a"]
