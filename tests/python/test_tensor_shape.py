"""Shape, indexing/scatter, matrix and einsum functions of oar (_tensor_shape.py and the modules it gathers)
against NumPy, plain loops, finite differences and PyTorch 1.13, on every device."""
import itertools

import numpy as np
import pytest

import oar
from torch_ref import from_torch, import_torch, to_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(11)
np_trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")


def T(a, device, dtype=None, grad=False):
    return oar.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=grad)


def N(t):
    return t.detach().cpu().numpy()


def close(t, ref, **kw):
    np.testing.assert_allclose(N(t), np.asarray(ref), rtol=kw.get("rtol", 1e-5), atol=kw.get("atol", 1e-6))


def same(t, ref):
    ref = np.asarray(ref)
    assert tuple(t.shape) == ref.shape, (tuple(t.shape), ref.shape)
    assert np.array_equal(N(t), ref), (N(t), ref)


def gradcheck(fn, arrays, device, eps=1e-6):
    """fn's gradient (autograd, f64) against central differences of sum(fn(...) * w) for fixed random w."""
    xs = [T(a, device, oar.float64, grad=True) for a in arrays]
    out = fn(*xs)
    w = T(np.random.default_rng(3).standard_normal(tuple(out.shape)), device, oar.float64)
    grads = oar.autograd.grad((out * w).sum(), xs)

    def value(k, a):
        args = [T(a if j == k else arrays[j], device, oar.float64) for j in range(len(arrays))]
        return float((fn(*args) * w).sum())
    for k, a in enumerate(arrays):
        numeric = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            up, down = a.copy(), a.copy()
            up[idx] += eps
            down[idx] -= eps
            numeric[idx] = (value(k, up) - value(k, down)) / (2 * eps)
        np.testing.assert_allclose(N(grads[k]), numeric, rtol=1e-5, atol=1e-7, err_msg=f"input {k} on {device}")


def test_every_function_and_method_exists():
    from oar import _tensor_shape
    assert all(callable(getattr(oar, n)) or n == "Size" for n in _tensor_shape.__all__)
    for n in ("repeat", "tile", "flip", "roll", "scatter_", "scatter_reduce_", "index_put", "index_copy_",
              "masked_scatter_", "put_", "tril_", "triu_", "addmm_", "addbmm_", "diagonal", "take_along_dim"):
        assert callable(getattr(oar.Tensor, n)), n


# ---- shape ----
@pytest.mark.parametrize("device", DEVICES)
def test_squeeze_unsqueeze_movedim_transpose(device):
    a = np.arange(24.0).reshape(2, 1, 3, 1, 4)
    x = T(a, device)
    assert oar.squeeze(x).shape == (2, 3, 4) and oar.squeeze(x, 1).shape == (2, 3, 1, 4)
    assert oar.squeeze(x, (1, -2)).shape == (2, 3, 4) and x.squeeze((0, 1)).shape == (2, 3, 1, 4)
    assert oar.unsqueeze(x, -1).shape == (2, 1, 3, 1, 4, 1)
    b = a.reshape(2, 3, 4)
    y = T(b, device)
    same(oar.movedim(y, 0, -1), np.moveaxis(b, 0, -1))
    same(y.moveaxis((0, 1), (2, 0)), np.moveaxis(b, (0, 1), (2, 0)))
    same(oar.swapaxes(y, 0, 2), np.swapaxes(b, 0, 2))
    same(y.swapdims(-1, 1), np.swapaxes(b, -1, 1))
    same(oar.transpose(y, 0, 1), b.transpose(1, 0, 2))
    same(oar.t(T(b[0], device)), b[0].T)
    same(y.mT, np.swapaxes(b, -1, -2))
    same(y.mH, np.swapaxes(b, -1, -2))
    same(oar.adjoint(y), np.swapaxes(b, -1, -2))
    same(oar.ravel(y.transpose(0, 2)), b.transpose(2, 1, 0).ravel())
    same(oar.narrow(y, -1, -3, 2), b[..., 1:3])
    same(oar.select(y, 1, 2), b[:, 2])
    parts = oar.unbind(y, -1)
    assert len(parts) == 4 and all(np.array_equal(N(p), b[..., i]) for i, p in enumerate(parts))
    same(y.view_as(T(np.zeros((6, 4)), device)), b.reshape(6, 4))
    same(y.reshape_as(T(np.zeros((4, 6)), device)), b.reshape(4, 6))
    with pytest.raises(IndexError):
        oar.squeeze(x, 5)
    with pytest.raises(IndexError):
        oar.movedim(y, 3, 0)
    with pytest.raises(ValueError):
        oar.movedim(y, (0, 1), 0)
    with pytest.raises(ValueError):
        oar.adjoint(T([1.0], device))


@pytest.mark.parametrize("device", DEVICES)
def test_flip_roll_rot90(device):
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    x = T(a, device)
    same(oar.flip(x, [0, 2]), np.flip(a, (0, 2)))
    same(x.flip(-1), np.flip(a, -1))
    same(oar.fliplr(x), np.fliplr(a))
    same(oar.flipud(x), np.flipud(a))
    same(oar.roll(x, 2), np.roll(a, 2))
    same(oar.roll(x, -7, 1), np.roll(a, -7, 1))
    same(x.roll((1, -2), (0, 2)), np.roll(a, (1, -2), (0, 2)))
    for k in range(-2, 6):
        same(oar.rot90(x, k, (0, 2)), np.rot90(a, k, (0, 2)))
    same(oar.rot90(x), np.rot90(a))
    same(oar.flip(T(np.array(3.0), device), []), np.array(3.0))
    with pytest.raises(ValueError):
        oar.roll(x, (1, 2), 0)
    with pytest.raises(ValueError):
        oar.fliplr(T([1.0], device))
    with pytest.raises(ValueError):
        oar.rot90(x, 1, (1, 1))
    with pytest.raises(IndexError):
        oar.flip(x, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_repeat_tile_repeat_interleave(device):
    a = np.arange(6).reshape(2, 3)
    x = T(a, device)
    same(x.repeat(2, 1, 3), np.tile(a, (2, 1, 3)))
    same(x.repeat((1, 2)), np.tile(a, (1, 2)))
    same(oar.tile(x, (2,)), np.tile(a, 2))
    same(x.tile((3, 1, 1)), np.tile(a, (3, 1, 1)))
    same(oar.repeat_interleave(x, 2), np.repeat(a, 2))
    same(x.repeat_interleave(3, dim=0), np.repeat(a, 3, 0))
    same(oar.repeat_interleave(x, T([1, 0, 2], device), dim=1), np.repeat(a, [1, 0, 2], 1))
    same(oar.repeat_interleave(x, T([2], device), dim=-1, output_size=6), np.repeat(a, 2, -1))
    same(oar.repeat_interleave(T([2, 0, 1], device)), [0, 0, 2])
    with pytest.raises(ValueError):
        x.repeat(2)
    with pytest.raises(ValueError):
        oar.repeat_interleave(x, T([1, 2], device), dim=1)
    with pytest.raises(ValueError):
        oar.repeat_interleave(x, -1)


@pytest.mark.parametrize("device", DEVICES)
def test_triangles_and_diagonals(device):
    a = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    x = T(a, device)
    for k in (-5, -1, 0, 2, 6):
        same(oar.tril(x, k), np.tril(a, k))
        same(x.triu(diagonal=k), np.triu(a, k))
    y = x.clone()
    assert y.tril_(1) is y and np.array_equal(N(y), np.tril(a, 1))
    same(oar.triu(T(np.ones((3, 3), bool), device)), np.triu(np.ones((3, 3), bool)))
    ints = np.arange(12, dtype=np.int64).reshape(3, 4)
    same(oar.tril(T(ints, device), -1), np.tril(ints, -1))
    same(T(ints, device).triu(2), np.triu(ints, 2))
    v = np.array([1.0, 2.0, 3.0], np.float32)
    for k in (-2, 0, 1):
        same(oar.diag(T(v, device), k), np.diag(v, k))
        same(oar.diag(x[0], k), np.diag(a[0], k))
        same(oar.diagflat(T(v.reshape(3, 1), device), k), np.diagflat(v, k))
    for off, d1, d2 in ((0, 0, 1), (1, 1, 2), (-1, 2, 0), (3, -1, -2), (7, 1, 2)):
        same(oar.diagonal(x, off, d1, d2), np.diagonal(a, off, d1, d2))
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    emb = np.zeros((2, 5, 5), np.float32)
    for i in range(2):
        emb[i] = np.diag(b[i], -2)
    same(oar.diag_embed(T(b, device), -2), emb)
    same(oar.diag_embed(T(b, device), 1, 0, 2), np.stack([np.diag(r, 1) for r in b], 1))
    close(oar.trace(x[1]), np.trace(a[1]))
    assert oar.trace(T(np.arange(6, dtype=np.int32).reshape(2, 3), device)).item() == 4
    with pytest.raises(ValueError):
        oar.tril(T(v, device))
    with pytest.raises(ValueError):
        oar.diag(x)
    with pytest.raises(ValueError):
        oar.diagonal(x, 0, 1, -2)
    with pytest.raises(ValueError):
        oar.trace(x)


@pytest.mark.parametrize("device", DEVICES)
def test_broadcasting_meshgrid_take_unflatten(device):
    a, b = np.arange(3), np.arange(4) * 10
    gx, gy = oar.meshgrid(T(a, device), T(b, device), indexing="ij")
    ex, ey = np.meshgrid(a, b, indexing="ij")
    same(gx, ex)
    same(gy, ey)
    gx, gy, gz = oar.meshgrid([T(a, device), T(b, device), T([7, 8], device)], indexing="xy")
    ex, ey, ez = np.meshgrid(a, b, [7, 8], indexing="xy")
    same(gx, ex)
    same(gy, ey)
    same(gz, ez)
    assert oar.broadcast_shapes((2, 1), (3, 1, 4), 4) == (3, 2, 4)
    assert isinstance(oar.broadcast_shapes((2,), (1,)), oar.Size)
    x = T(a.reshape(3, 1), device)
    same(oar.broadcast_to(x, (2, 3, 5)), np.broadcast_to(a.reshape(3, 1), (2, 3, 5)))
    p, q = oar.broadcast_tensors(x, T(b, device))
    assert p.shape == q.shape == (3, 4)
    same(x.expand_as(q), np.broadcast_to(a.reshape(3, 1), (3, 4)))
    m = RNG.standard_normal((3, 4)).astype(np.float32)
    idx = np.argsort(m, axis=1)
    same(oar.take_along_dim(T(m, device), T(idx, device), 1), np.take_along_axis(m, idx, 1))
    same(T(m, device).take_along_dim(T(idx[:1], device), dim=1), np.take_along_axis(m, np.broadcast_to(idx[:1], m.shape), 1))
    same(oar.take_along_dim(T(m, device), T([[0, 5]], device)), m.ravel()[[0, 5]])
    same(oar.take(T(m, device), T([[0, -1], [4, 7]], device)), np.take(m, [[0, -1], [4, 7]]))
    same(oar.unflatten(T(np.arange(24), device), 0, (2, -1, 3)), np.arange(24).reshape(2, 4, 3))
    same(T(m, device).unflatten(-1, (2, 2)), m.reshape(3, 2, 2))
    with pytest.raises(ValueError):
        oar.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError):
        oar.unflatten(T(m, device), 1, (3, 2))
    with pytest.raises(ValueError):
        oar.meshgrid(T(m, device))


@pytest.mark.parametrize("device", DEVICES)
def test_stacks_atleast_and_splits(device):
    a, b = np.arange(3.0), np.arange(3.0) + 10
    m = np.arange(6.0).reshape(2, 3)
    ta, tb, tm = T(a, device), T(b, device), T(m, device)
    same(oar.hstack([ta, tb]), np.hstack([a, b]))
    same(oar.hstack((tm, tm)), np.hstack([m, m]))
    same(oar.vstack([ta, tb]), np.vstack([a, b]))
    same(oar.row_stack([tm, ta]), np.vstack([m, a]))
    same(oar.dstack([ta, tb]), np.dstack([a, b]))
    same(oar.column_stack([ta, tm.t()]), np.column_stack([a, m.T]))
    s = T(np.array(5.0), device)
    assert oar.atleast_1d(s).shape == (1,) and oar.atleast_2d(s).shape == (1, 1)
    assert oar.atleast_3d(ta).shape == (1, 3, 1) and oar.atleast_3d(tm).shape == (2, 3, 1)
    assert oar.atleast_2d(ta).shape == (1, 3)
    pair = oar.atleast_1d(s, ta)
    assert isinstance(pair, tuple) and pair[0].shape == (1,) and pair[1].shape == (3,)
    assert isinstance(oar.atleast_1d([s]), tuple)
    v = np.arange(11)
    for spec in (3, 4, 11, 13, [2, 5], [1, 5, 3], [-3, 20]):
        got = oar.tensor_split(T(v, device), spec)
        want = np.array_split(v, spec) if isinstance(spec, int) else np.split(v, [min(max(i % 11 if i < 0 else i, 0), 11) for i in spec])
        assert len(got) == len(want) and all(np.array_equal(N(g), w) for g, w in zip(got, want)), spec
    parts = T(m, device).tensor_split(T([1], device), dim=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 2)]
    q = np.arange(24.0).reshape(2, 4, 3)
    for got, want in ((oar.hsplit(T(q, device), 2), np.hsplit(q, 2)), (oar.vsplit(T(q, device), [1]), np.vsplit(q, [1])),
                      (oar.dsplit(T(q, device), 3), np.dsplit(q, 3)), (oar.hsplit(ta, 3), np.hsplit(a, 3))):
        assert len(got) == len(want) and all(np.array_equal(N(g), w) for g, w in zip(got, want))
    with pytest.raises(ValueError):
        oar.hsplit(T(q, device), 3)
    with pytest.raises(ValueError):
        oar.vsplit(ta, 1)
    with pytest.raises(ValueError):
        oar.tensor_split(ta, 0)


# ---- scatter and indexing ----
def scatter_loop(x, dim, index, src, reduce=None, include_self=True):
    """PyTorch's scatter / scatter_reduce, one element at a time (later writes win)."""
    out = x.astype(np.float64).copy()
    groups = {}
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos])
    for target, vals in groups.items():
        vals = ([x[target]] if include_self and reduce else []) + vals
        out[target] = {None: lambda v: v[-1], "sum": np.sum, "prod": np.prod, "mean": np.mean,
                       "amax": np.max, "amin": np.min}[reduce](vals)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_and_scatter_reduce(device):
    x = RNG.standard_normal((3, 5))
    index = np.array([[0, 1, 0, 4], [2, 2, 2, 3], [1, 0, 3, 1]])
    src = RNG.standard_normal((3, 6))
    tx, ti, ts = T(x, device), T(index, device), T(src, device)
    close(oar.scatter(tx, 1, ti, ts), scatter_loop(x, 1, index, src))
    close(tx.scatter(1, ti, 2.5), scatter_loop(x, 1, index, np.full(index.shape, 2.5)))
    close(tx.scatter(1, ti, ts, reduce="add"), scatter_loop(x, 1, index, src, "sum"))
    close(tx.scatter(1, ti, ts, reduce="multiply"), scatter_loop(x, 1, index, src, "prod"))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            close(oar.scatter_reduce(tx, 1, ti, ts, reduce, include_self=include_self),
                  scatter_loop(x, 1, index, src, reduce, include_self))
    index0 = np.array([[0, 2, 2, 1, 0], [2, 2, 0, 1, 1]])
    close(tx.scatter(0, T(index0, device), ts), scatter_loop(x, 0, index0, src))
    y = tx.clone()
    assert y.scatter_(-1, ti, ts) is y and np.allclose(N(y), scatter_loop(x, 1, index, src))
    y = tx.clone()
    y.scatter_reduce_(1, ti, ts, "amax", include_self=False)
    close(y, scatter_loop(x, 1, index, src, "amax", False))
    ints = np.arange(15).reshape(3, 5)
    got = T(ints, device).scatter_reduce(1, ti, T(np.arange(18).reshape(3, 6), device), "mean")
    assert got.dtype == oar.int64
    same(got, np.floor(scatter_loop(ints, 1, index, np.arange(18).reshape(3, 6), "mean")).astype(np.int64))
    flags = T(np.zeros((2, 3), bool), device).scatter(1, T([[2], [0]], device), True)
    same(flags, [[False, False, True], [True, False, False]])
    with pytest.raises(ValueError):
        oar.scatter_reduce(tx, 1, ti, ts, "max")
    with pytest.raises(ValueError):
        oar.scatter(tx, 1, T(index[:, :2].reshape(-1), device), ts)
    with pytest.raises(TypeError):
        oar.scatter(tx, 1, T(index.astype(np.float32), device), ts)
    with pytest.raises(IndexError):
        oar.scatter(tx, 2, ti, ts)


@pytest.mark.parametrize("device", DEVICES)
def test_index_functions(device):
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    tx = T(x, device)
    want = x.copy()
    want[[0, 2]] = -1
    same(oar.index_fill(tx, 0, T([0, 2], device), -1), want)
    want = x.copy()
    want[:, [1, 2]] = 7
    same(tx.index_fill(-1, T([-1, 1], device), T(np.float32(7), device)), want)
    y = tx.clone()
    assert y.index_fill_(0, T([3], device), 0.5) is y and np.all(N(y)[3] == 0.5)
    src = RNG.standard_normal((2, 3)).astype(np.float32)
    want = x.copy()
    want[[3, 1]] = src
    same(oar.index_copy(tx, 0, T([3, 1], device), T(src, device)), want)
    y = tx.clone()
    column = np.arange(4, dtype=np.float32).reshape(4, 1)
    assert y.index_copy_(1, T([0], device), T(column, device)) is y and np.array_equal(N(y)[:, 0], column[:, 0])
    want = x.copy()
    np.add.at(want, ([1, 1, 2],), 2 * np.ones((3, 3), np.float32))
    close(tx.index_add(0, T([1, 1, 2], device), T(np.ones((3, 3)), device, oar.float32), alpha=2), want)
    close(oar.index_add(tx, 0, T([1, 1, 2], device), T(np.ones((3, 3)), device, oar.float32), alpha=2), want)
    vals = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    want = x.copy()
    for i, row in zip([0, 0, 2], vals):
        want[i] = np.maximum(want[i], row)
    close(tx.index_reduce(0, T([0, 0, 2], device), T(vals, device), "amax"), want)
    want = x.copy()
    want[0], want[2] = vals[0] * vals[1], vals[2]
    close(oar.index_reduce(tx, 0, T([0, 0, 2], device), T(vals, device), "prod", include_self=False), want)
    want = x.copy()
    want[[0, 1], [2, 0]] = [5, 6]
    same(oar.index_put(tx, (T([0, 1], device), T([2, 0], device)), T([5.0, 6.0], device, oar.float32)), want)
    want = x.copy()
    np.add.at(want, ([1, 1], [0, 0]), 1)
    same(tx.index_put((T([1, 1], device), T([0, 0], device)), T(np.float32(1), device), accumulate=True), want)
    mask = np.array([[True], [False], [True], [False]])
    source = np.arange(10, dtype=np.float32)
    want = x.copy()
    want[np.broadcast_to(mask, x.shape)] = source[:6]
    same(oar.masked_scatter(tx, T(mask, device), T(source, device)), want)
    y = tx.clone()
    assert y.masked_scatter_(T(mask, device), T(source, device)) is y and np.array_equal(N(y), want)
    same(oar.masked_fill(tx, T(mask, device), 0.0), np.where(mask, 0, x))
    want = x.copy().ravel()
    want[[0, -1, 5]] = [1, 2, 3]
    same(tx.put(T([0, -1, 5], device), T([1.0, 2, 3], device, oar.float32)), want.reshape(4, 3))
    y = tx.clone()
    y.put_(T([1, 1], device), T([1.0, 2], device, oar.float32), accumulate=True)
    assert np.isclose(N(y).ravel()[1], x.ravel()[1] + 3)
    with pytest.raises(ValueError):
        oar.masked_scatter(tx, T(np.ones((4, 3), bool), device), T(source, device))
    with pytest.raises(TypeError):
        oar.masked_scatter(tx, T(np.ones((4, 3)), device), T(source, device))
    with pytest.raises(ValueError):
        oar.index_copy(tx, 0, T([0], device), T(src, device))
    with pytest.raises(ValueError):
        oar.index_fill(tx, 0, T([0], device), T([1.0, 2.0], device))


# ---- matrix products ----
@pytest.mark.parametrize("device", DEVICES)
def test_matrix_products(device):
    r = np.random.default_rng(5)
    A, B, C = (r.standard_normal(s) for s in ((3, 4), (4, 5), (5, 2)))
    v, w = r.standard_normal(4), r.standard_normal(3)
    t = lambda a: T(a, device)  # noqa: E731
    close(oar.mv(t(A), t(v)), A @ v)
    close(t(w).outer(t(v)), np.outer(w, v))
    close(oar.ger(t(w), t(v)), np.outer(w, v))
    close(oar.dot(t(v), t(v)), v @ v)
    close(t(v).vdot(t(v)), v @ v)
    assert oar.dot(T([1, 2, 3], device), T([4, 5, 6], device)).item() == 32
    close(oar.inner(t(A), t(B.T)), np.inner(A, B.T))
    close(oar.inner(t(A), t(np.array(2.0))), A * 2)
    close(oar.addmm(t(w[:, None]), t(A), t(B), beta=0.5, alpha=2), 0.5 * w[:, None] + 2 * A @ B)
    close(oar.addmm(t(np.full((3, 5), np.nan)), t(A), t(B), beta=0), A @ B)
    close(oar.addmv(t(w), t(A), t(v), alpha=-1), w - A @ v)
    close(oar.addr(t(A), t(w), t(v)), A + np.outer(w, v))
    b1, b2 = r.standard_normal((2, 3, 4)), r.standard_normal((2, 4, 5))
    close(oar.baddbmm(t(np.ones((3, 5))), t(b1), t(b2), beta=2), 2 + b1 @ b2)
    close(t(np.ones((3, 5))).addbmm(t(b1), t(b2), alpha=3), 1 + 3 * (b1 @ b2).sum(0))
    y = t(A @ B).clone()
    assert y.addmm_(t(A), t(B), beta=-1) is y and np.allclose(N(y), 0, atol=1e-5)
    close(oar.chain_matmul(t(A), t(B), t(C)), A @ B @ C)
    close(oar.chain_matmul(t(A)), A)
    close(oar.kron(t(A), t(C)), np.kron(A, C))
    close(oar.kron(t(v), t(A)), np.kron(v, A))
    p, q = r.standard_normal((4, 3)), r.standard_normal((1, 3))
    close(oar.cross(t(p), t(q), dim=1), np.cross(p, q))
    close(oar.cross(t(p.T), t(q.T)), np.cross(p, q).T)
    x3, y3 = r.standard_normal((2, 3, 4)), r.standard_normal((4, 3, 5))
    close(oar.tensordot(t(x3), t(y3), ([1, 2], [1, 0])), np.tensordot(x3, y3, ([1, 2], [1, 0])))
    close(oar.tensordot(t(A), t(B), 1), np.tensordot(A, B, 1))
    close(oar.tensordot(t(A), t(A), 0), np.tensordot(A, A, 0))
    with pytest.raises(ValueError):
        oar.mv(t(A), t(w))
    with pytest.raises(ValueError):
        oar.dot(t(v), t(w))
    with pytest.raises(TypeError):
        oar.dot(t(v), T(v, device, oar.float32))
    with pytest.raises(ValueError):
        oar.cross(t(A), t(A), dim=1)
    with pytest.raises(ValueError):
        oar.chain_matmul(t(A), t(A))
    with pytest.raises(ValueError):
        oar.tensordot(t(A), t(B), ([0], [0]))


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii", [(4, 4)]), ("ii->i", [(4, 4)]),
    ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("b...,b->...", [(2, 3, 4), (2,)]), ("iij->j", [(3, 3, 2)]), ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]), ("Ab,a->", [(2, 3), (3,)]),
    ("ba,ab", [(2, 3), (3, 2)]), ("ij,kj,lj->ikl", [(2, 3), (4, 3), (5, 3)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i j , j ->i", [(3, 4), (4,)]), ("...", [(2, 3)]), ("ijj->ij", [(2, 3, 3)]),
]


@pytest.mark.parametrize("device", DEVICES)
def test_einsum_against_numpy(device):
    r = np.random.default_rng(9)
    for eq, shapes in EINSUM_CASES:
        arrays = [r.standard_normal(s) for s in shapes]
        got = oar.einsum(eq, *[T(a, device) for a in arrays])
        want = np.einsum(eq.replace(" ", ""), *arrays)
        assert tuple(got.shape) == np.shape(want), eq
        close(got, want, rtol=1e-10, atol=1e-10)
    # PyTorch sums the ellipsis dims an explicit output leaves out; NumPy refuses the equation.
    a = r.standard_normal((2, 3, 4))
    close(oar.einsum("i...->i", T(a, device)), a.sum((1, 2)), rtol=1e-10, atol=1e-10)
    close(oar.einsum("ij,jk", [T(np.eye(2), device), T(np.ones((2, 2)), device)]), np.ones((2, 2)))
    close(oar.einsum("bi,i->bi", T(np.ones((2, 1)), device), T(np.arange(3.0), device)), np.tile(np.arange(3.0), (2, 1)))
    with pytest.raises(ValueError):
        oar.einsum("ij,jk->ik", T(np.ones((2, 3)), device))
    with pytest.raises(ValueError):
        oar.einsum("ij->k", T(np.ones((2, 3)), device))
    with pytest.raises(ValueError):
        oar.einsum("ijk", T(np.ones((2, 3)), device))
    with pytest.raises(ValueError):
        oar.einsum("ij,jk", T(np.ones((2, 3)), device), T(np.ones((4, 2)), device))
    with pytest.raises(ValueError):
        oar.einsum("i1", T(np.ones((2, 3)), device))


def cdist_ref(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(float)
    if p == np.inf:
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("device", DEVICES)
def test_cdist(device):
    r = np.random.default_rng(4)
    a, b = r.standard_normal((2, 5, 3)), r.standard_normal((4, 3))
    for p in (0, 1, 1.5, 2, np.inf):
        close(oar.cdist(T(a, device), T(b, device), p), cdist_ref(a, np.broadcast_to(b, (2, 4, 3)), p), rtol=1e-6)
    big_a, big_b = r.standard_normal((30, 4)), r.standard_normal((27, 4))
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        close(oar.cdist(T(big_a, device), T(big_b, device), compute_mode=mode), cdist_ref(big_a, big_b, 2), rtol=1e-6)
    assert N(oar.cdist(T(a[0], device), T(a[0], device))).diagonal().max() < 1e-6
    with pytest.raises(ValueError):
        oar.cdist(T(a, device), T(b, device), -1)
    with pytest.raises(ValueError):
        oar.cdist(T(a, device), T(b[:, :2], device))
    with pytest.raises(TypeError):
        oar.cdist(T(a[0], device).long(), T(b, device).long())


@pytest.mark.parametrize("device", DEVICES)
def test_block_products_and_integration(device):
    same(oar.block_diag(T(np.array(1), device), T([2, 3], device), T(np.ones((2, 2), np.int64), device)),
         [[1, 0, 0, 0, 0], [0, 2, 3, 0, 0], [0, 0, 0, 1, 1], [0, 0, 0, 1, 1]])
    assert oar.block_diag(T([1], device), T([0.5], device, oar.float32)).dtype == oar.float32
    assert oar.block_diag(T([1], device), T([0.5], device)).dtype == oar.float64  # torch: promoted to float64
    same(oar.cartesian_prod(T([1, 2], device), T([3, 4, 5], device)), list(itertools.product([1, 2], [3, 4, 5])))
    same(oar.cartesian_prod(T([1, 2], device)), [1, 2])
    x = T([10, 20, 30, 40], device)
    same(oar.combinations(x), list(itertools.combinations([10, 20, 30, 40], 2)))
    same(oar.combinations(x, 3, True), list(itertools.combinations_with_replacement([10, 20, 30, 40], 3)))
    assert oar.combinations(x, 0).shape == (0,) and oar.combinations(x, 5).shape == (0, 5)
    v = np.array([1.0, 2.0, -3.0])
    same(oar.vander(T(v, device)), np.vander(v))
    same(oar.vander(T(v, device), 4, increasing=True), np.vander(v, 4, increasing=True))
    assert oar.vander(T([1, 2], device)).dtype == oar.int64
    same(oar.tril_indices(3, 4, 1), np.stack(np.tril_indices(3, 1, 4)))
    same(oar.triu_indices(4, 3, -1, device=device), np.stack(np.triu_indices(4, -1, 3)))
    y = np.array([[1.0, 2.0, 4.0, 7.0], [0.0, 1.0, 0.0, 1.0]])
    xs = np.array([0.0, 1.0, 3.0, 4.5])
    close(oar.trapezoid(T(y, device)), np_trapezoid(y))
    close(oar.trapz(T(y, device), T(xs, device)), np_trapezoid(y, xs))
    close(oar.trapezoid(T(y, device), dx=0.5, dim=0), np_trapezoid(y, dx=0.5, axis=0))
    steps = (y[:, 1:] + y[:, :-1]) / 2 * np.diff(xs)
    close(oar.cumulative_trapezoid(T(y, device), T(xs, device)), np.cumsum(steps, -1))
    close(oar.cumulative_trapezoid(T(y, device), dx=2.0), np.cumsum((y[:, 1:] + y[:, :-1]), -1))
    with pytest.raises(ValueError):
        oar.block_diag(T(np.ones((1, 1, 1)), device))
    with pytest.raises(ValueError):
        oar.trapezoid(T(y, device), T(xs[:3], device))


# ---- gradients (finite differences, f64) ----
@pytest.mark.parametrize("device", DEVICES)
def test_gradients_of_shape_functions(device):
    r = np.random.default_rng(1)
    a = r.standard_normal((3, 4))
    for fn in (lambda x: oar.roll(x, (1, -1), (0, 1)), lambda x: oar.flip(x, (0, 1)), lambda x: oar.rot90(x, 1),
               lambda x: oar.tril(x, -1), lambda x: oar.triu(x, 1), lambda x: oar.diagonal(x, 1),
               lambda x: oar.diag_embed(x, -1), lambda x: x.repeat(2, 1), lambda x: oar.repeat_interleave(x, 2, 1),
               lambda x: oar.repeat_interleave(x, T([2, 0, 1], device), 0), lambda x: oar.trace(x[:, :3]),
               lambda x: oar.kron(x, x[:2, :2]), lambda x: oar.vander(x[0] - x[0, 0]),
               lambda x: oar.cumulative_trapezoid(x, T([0.0, 1, 3, 4], device, oar.float64)),
               lambda x: oar.cross(x[:, :3], x[:, 1:], dim=1), lambda x: oar.take(x, T([0, 5, 5], device))):
        gradcheck(fn, [a], device)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_of_scatter_and_index_put(device):
    r = np.random.default_rng(2)
    x, src = r.standard_normal((3, 5)), r.standard_normal((3, 4))
    index = T([[0, 1, 0, 4], [2, 2, 2, 3], [1, 0, 3, 1]], device)
    gradcheck(lambda a, s: oar.scatter(a, 1, index, s), [x, src], device)
    for reduce in ("sum", "mean", "prod", "amax", "amin"):
        for include_self in (True, False):
            gradcheck(lambda a, s: oar.scatter_reduce(a, 1, index, s, reduce, include_self=include_self), [x, src], device)
    rows, cols = T([0, 2, 0], device), T([1, 4, 1], device)
    gradcheck(lambda a, v: oar.index_put(a, (rows, cols), v, accumulate=True), [x, src[0, :3]], device)
    gradcheck(lambda a, v: a.index_put((rows[:2], cols[:2]), v), [x, src[0, :2]], device)
    mask = T(r.random((3, 5)) > 0.5, device)
    gradcheck(lambda a, s: oar.masked_scatter(a, mask, s), [x, r.standard_normal(15)], device)
    gradcheck(lambda a, s: oar.index_copy(a, 1, T([4, 0], device), s), [x, src[:, :2]], device)
    gradcheck(lambda a: oar.index_fill(a, 0, T([1], device), 2.0), [x], device)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_of_einsum_and_cdist(device):
    r = np.random.default_rng(6)
    A, B = r.standard_normal((3, 4)), r.standard_normal((4, 3))
    for eq in ("ij,jk->ik", "ij,ji->", "ii->i", "ij,jk->", "i,j->ij"):
        ops = [A, B] if "," in eq else [A[:3, :3]]
        if eq == "i,j->ij":
            ops = [A[0], B[0]]
        gradcheck(lambda *t, eq=eq: oar.einsum(eq, *t), ops, device)
    gradcheck(lambda a: oar.einsum("bii->b", a), [r.standard_normal((2, 3, 3))], device)
    x1, x2 = r.standard_normal((4, 3)), r.standard_normal((5, 3))
    for p in (1, 2, 3):
        gradcheck(lambda a, b, p=p: oar.cdist(a, b, p), [x1, x2], device)
    big1, big2 = r.standard_normal((27, 2)), r.standard_normal((3, 2))
    gradcheck(lambda a, b: oar.cdist(a, b), [big1, big2], device)
    # Zero distance: PyTorch's gradient is 0 there, not NaN.
    a = T(x1, device, oar.float64, grad=True)
    (g,) = oar.autograd.grad(oar.cdist(a, a.detach()).sum(), [a])
    assert np.all(np.isfinite(N(g)))


# ---- against PyTorch 1.13 ----
@pytest.mark.parametrize("device", DEVICES)
def test_against_torch(device):
    torch = import_torch()
    r = np.random.default_rng(8)
    x, src = r.standard_normal((4, 6)).astype(np.float32), r.standard_normal((4, 6)).astype(np.float32)
    index = r.integers(0, 6, (4, 5))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            want = to_torch(x).scatter_reduce(1, to_torch(index), to_torch(src)[:, :5], reduce, include_self=include_self)
            got = oar.scatter_reduce(T(x, device), 1, T(index, device), T(src, device)[:, :5], reduce,
                                     include_self=include_self)
            close(got, from_torch(want), rtol=1e-4)
    idx = np.array([0, 3, 0, 1])
    for reduce in ("prod", "mean", "amax", "amin"):
        want = to_torch(x).index_reduce(0, to_torch(idx), to_torch(src), reduce, include_self=False)
        close(T(x, device).index_reduce(0, T(idx, device), T(src, device), reduce, include_self=False),
              from_torch(want), rtol=1e-4)
    a, b = r.standard_normal((2, 3, 4)).astype(np.float32), r.standard_normal((4, 5)).astype(np.float32)
    for eq in ("bij,jk->bki", "...j,jk", "bij,jk->"):
        close(oar.einsum(eq, T(a, device), T(b, device)), from_torch(torch.einsum(eq, to_torch(a), to_torch(b))),
              rtol=1e-4)
    p, q = r.standard_normal((30, 3)).astype(np.float32), r.standard_normal((26, 3)).astype(np.float32)
    close(oar.cdist(T(p, device), T(q, device)), from_torch(torch.cdist(to_torch(p), to_torch(q))), rtol=1e-4,
          atol=1e-4)
    v = np.arange(7)
    for spec in (3, [1, 5, 3]):
        got = oar.tensor_split(T(v, device), spec)
        want = torch.tensor_split(to_torch(v), spec)
        assert [N(g).tolist() for g in got] == [w.tolist() for w in want]
    m = r.standard_normal((3, 4)).astype(np.float32)
    same(oar.diag_embed(T(m, device), 1, 0, 2), from_torch(torch.diag_embed(to_torch(m), 1, 0, 2)))
    same(oar.diagonal(T(a, device), -1, 2, 1), from_torch(torch.diagonal(to_torch(a), -1, 2, 1)))
    for k in (1, 2, 3):
        same(oar.rot90(T(m, device), k, (1, 0)), from_torch(torch.rot90(to_torch(m), k, (1, 0))))
    same(oar.block_diag(T(m, device), T(m[0], device)), from_torch(torch.block_diag(to_torch(m), to_torch(m[0]))))
    same(oar.vander(T(m[0], device), 3), from_torch(torch.vander(to_torch(m[0]), 3)))
    same(oar.tril_indices(4, 3, -1), from_torch(torch.tril_indices(4, 3, -1)))
    same(oar.triu_indices(3, 5, 2), from_torch(torch.triu_indices(3, 5, 2)))
    for g, w in zip(oar.meshgrid(T(v[:2], device), T(v, device), indexing="xy"),
                    torch.meshgrid(to_torch(v[:2]), to_torch(v), indexing="xy")):
        same(g, from_torch(w))


# ---- Size and printing ----
def test_size_and_print_options():
    x = oar.zeros(2, 3, 4)
    assert isinstance(x.shape, oar.Size) and isinstance(x.size(), oar.Size) and x.shape == (2, 3, 4)
    assert x.size(-1) == 4 and x.shape.numel() == 24 and isinstance(x.shape[1:], oar.Size)
    assert repr(x.shape) == "oar.Size([2, 3, 4])" and isinstance(x.shape + (5,), oar.Size)
    assert oar.zeros(x.shape).shape == x.shape and x.reshape(x.shape[::-1]).shape == (4, 3, 2)
    import pickle
    assert pickle.loads(pickle.dumps(x.shape)) == x.shape
    t = oar.tensor([1.123456789, 2.0])
    before = np.get_printoptions()
    try:
        oar.set_printoptions(precision=2)
        assert "1.12" in repr(t) and "1.123" not in repr(t)
        assert oar.get_printoptions()["precision"] == 2
        oar.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(oar.arange(100))
        oar.set_printoptions(profile="full")
        assert "..." not in repr(oar.arange(2000))
        oar.set_printoptions(sci_mode=True)
        assert "e+00" in repr(t)
        assert np.get_printoptions() == before  # NumPy's own printing is untouched
    finally:
        oar.set_printoptions(profile="default")
    with pytest.raises(ValueError):
        oar.set_printoptions(profile="long")
