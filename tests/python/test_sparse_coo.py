"""oar.sparse COO tensors: construction and its checks, coalesce, to_dense, to_sparse, sparse @ dense and
dense @ sparse with gradients to the values and the dense operand (against NumPy), the legacy
torch.sparse.FloatTensor form, and a GCN layer written as PyTorch code writes it, on every device."""
import numpy as np
import pytest

import oar

RNG = np.random.default_rng(9)


def N(t):
    return t.detach().cpu().numpy()


def _random_sparse(rows, cols, nnz, device, duplicates=True):
    r = RNG.integers(0, rows, nnz)
    c = RNG.integers(0, cols, nnz)
    if duplicates:
        r[1], c[1] = r[0], c[0]
    v = RNG.standard_normal(nnz)
    dense = np.zeros((rows, cols))
    np.add.at(dense, (r, c), v)
    s = oar.sparse_coo_tensor(oar.tensor(np.stack([r, c]), device=device), oar.tensor(v, device=device), (rows, cols))
    return s, dense, (r, c, v)


def test_construction_dense_and_coalesce(device):
    s, dense, (r, c, v) = _random_sparse(5, 4, 9, device)
    assert s.is_sparse and s.shape == (5, 4) and s._nnz() == 9 and s.dtype == oar.float64
    assert not s.is_coalesced()
    np.testing.assert_allclose(N(s.to_dense()), dense, rtol=1e-12)
    merged = s.coalesce()
    assert merged.is_coalesced() and merged._nnz() == len(set(zip(r.tolist(), c.tolist())))
    keys = N(merged.indices()[0]) * 4 + N(merged.indices()[1])
    assert np.all(np.diff(keys) > 0)
    np.testing.assert_allclose(N(merged.values()), dense.reshape(-1)[keys], rtol=1e-12)
    back = oar.tensor(dense, device=device).to_sparse()
    np.testing.assert_allclose(N(back.to_dense()), dense)
    assert back.is_coalesced() and back._nnz() == np.count_nonzero(dense)
    inferred = oar.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0])
    assert inferred.shape == (3, 2)
    legacy = oar.sparse.FloatTensor(oar.tensor([[0, 1], [1, 0]]), oar.tensor([1.0, 2.0]), (2, 2))
    assert legacy.dtype == oar.float32 and np.array_equal(N(legacy.to_dense()), [[0, 1], [2, 0]])
    np.testing.assert_allclose(N((s * 2.0).to_dense()), 2 * dense, rtol=1e-12)
    np.testing.assert_allclose(N((s + s).to_dense()), 2 * dense, rtol=1e-12)
    np.testing.assert_allclose(N(s.t().to_dense()), dense.T, rtol=1e-12)
    np.testing.assert_allclose(N(oar.sparse.sum(s)), dense.sum(), rtol=1e-12)
    by_row = oar.sparse.sum(s, 1)  # sparse, as torch.sparse.sum over some dims
    assert by_row.is_sparse and by_row.shape == (5,)
    np.testing.assert_allclose(N(by_row.to_dense()), dense.sum(1), rtol=1e-12)


def test_products_and_gradients(device):
    s, dense, (r, c, v) = _random_sparse(6, 5, 10, device)
    x = RNG.standard_normal((5, 3))
    xt = oar.tensor(x, device=device, requires_grad=True)
    vt = s._values().detach().requires_grad_(True)
    s = oar.sparse_coo_tensor(s._indices(), vt, s.shape)
    for product in (oar.sparse.mm, oar.spmm, oar.mm, oar.matmul, lambda a, b: a @ b):
        np.testing.assert_allclose(N(product(s, xt)), dense @ x, rtol=1e-12)
    w = RNG.standard_normal((6, 3))
    (oar.sparse.mm(s, xt) * oar.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(N(xt.grad), dense.T @ w, rtol=1e-12)
    np.testing.assert_allclose(N(vt.grad), np.sum(w[r] * x[c], axis=1), rtol=1e-12)  # d/dv_k: w[r_k] . x[c_k]
    vec = RNG.standard_normal(5)
    np.testing.assert_allclose(N(s @ oar.tensor(vec, device=device)), dense @ vec, rtol=1e-12)
    left = RNG.standard_normal((2, 6))
    np.testing.assert_allclose(N(oar.tensor(left, device=device) @ s), left @ dense, rtol=1e-12)
    np.testing.assert_allclose(N(oar.mm(oar.tensor(left, device=device), s)), left @ dense, rtol=1e-12)


def test_gcn_layer_as_pytorch_code_writes_it(device):
    """Kipf & Welling's propagation D^-1/2 (A + I) D^-1/2 X W with a sparse adjacency, trained a few steps:
    the same losses as the dense formulation."""
    n, f, h = 12, 4, 3
    edges = RNG.integers(0, n, (2, 30))
    a = np.zeros((n, n))
    a[edges[0], edges[1]] = 1
    a = np.maximum(a, a.T) + np.eye(n)
    deg = a.sum(1)
    norm = a / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
    rows, cols = np.nonzero(norm)
    adj = oar.sparse_coo_tensor(oar.tensor(np.stack([rows, cols]), device=device),
                                oar.tensor(norm[rows, cols], dtype=oar.float32, device=device), (n, n))
    dense_adj = oar.tensor(norm, dtype=oar.float32, device=device)
    x = oar.tensor(RNG.standard_normal((n, f)), dtype=oar.float32, device=device)
    y = oar.tensor(RNG.integers(0, h, n), device=device)
    losses = []
    for a_op in (adj, dense_adj):
        oar.manual_seed(0)
        lin = oar.nn.Linear(f, h).to(device)
        opt = oar.optim.Adam(lin.parameters(), lr=0.05)
        run = []
        for _ in range(5):
            opt.zero_grad()
            out = oar.spmm(a_op, lin(x)) if a_op is adj else a_op @ lin(x)
            loss = oar.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)


def test_bad_input(device):
    i = oar.tensor([[0, 1], [2, 0]], device=device)
    v = oar.tensor([1.0, 2.0], device=device)
    with pytest.raises(oar.ShapeError, match="out of bounds"):
        oar.sparse_coo_tensor(i, v, (1, 3))
    with pytest.raises(oar.ShapeError, match="entries"):
        oar.sparse_coo_tensor(i, v[:1], (2, 3))
    with pytest.raises(oar.DTypeError):
        oar.sparse_coo_tensor(i.float(), v, (2, 3))
    with pytest.raises(NotImplementedError):
        oar.sparse_coo_tensor(i, oar.ones(2, 3, device=device), (2, 3))
    s = oar.sparse_coo_tensor(i, v, (2, 3))
    with pytest.raises(oar.ShapeError, match="cannot be multiplied"):
        s @ oar.ones(2, 2, device=device)
    with pytest.raises(RuntimeError, match="coalesce"):
        oar.sparse_coo_tensor([[0, 0], [1, 1]], [1.0, 2.0], (2, 2)).indices()
