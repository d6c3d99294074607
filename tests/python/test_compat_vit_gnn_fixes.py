"""PyTorch APIs that a timm-style Vision Transformer, plain-PyTorch graph networks (GCN / GraphSAGE / GAT with
edge_index tensors and sparse adjacencies) and training-loop utilities use, found by running such programs under
oar.compat (tests/python/compat_scripts/vit_tiny.py, gnn_plain.py, loop_utils.py): ParameterList /
ParameterDict printing, load_state_dict's result type and messages, torch.where(cond), Tensor.flip(*dims),
layouts (torch.strided, Tensor.layout, layout= / pin_memory= / memory_format= on creation functions,
Tensor.to_dense), sparse COO sum over dims / softmax / log_softmax / addmm / products / cat / printing, the
legacy Module.register_backward_hook, backward(inputs=), torch._foreach_*, torch.norm(p='nuc'), DataLoader's
1.13 prefetch_factor rule and argparse.Namespace in checkpoints. Compared with PyTorch 1.13 where it is
installed, else with NumPy."""
import argparse
import io

import numpy as np
import pytest

import oar
import oar.nn as nn
from torch_ref import from_torch, import_torch, to_torch


def _np(t):
    return t.detach().cpu().numpy()


# -- printing and load_state_dict ----------------------------------------------------------------------------------

def test_parameter_list_and_dict_print_their_entries_as_torch():
    pl = nn.ParameterList([nn.Parameter(oar.zeros(2)), nn.Parameter(oar.zeros(2, 3, dtype=oar.float64)),
                           nn.Parameter(oar.zeros(()))])
    f32, f64 = repr(oar.float32), repr(oar.float64)
    assert repr(pl) == ("ParameterList(\n"
                        f"    (0): Parameter containing: [{f32} of size 2]\n"
                        f"    (1): Parameter containing: [{f64} of size 2x3]\n"
                        f"    (2): Parameter containing: [{f32} of size ]\n)")
    pd = nn.ParameterDict({"a": nn.Parameter(oar.zeros(2)), "b": nn.Parameter(oar.zeros(1, dtype=oar.float64))})
    assert repr(pd) == ("ParameterDict(\n    (a): Parameter containing: [torch.FloatTensor of size 2]\n"
                        "    (b): Parameter containing: [torch.DoubleTensor of size 1]\n)")
    assert repr(nn.ParameterList()) == "ParameterList()" and repr(nn.ParameterDict()) == "ParameterDict()"

    def holder(mod):
        class Holder(mod.nn.Module):
            def __init__(self):
                super().__init__()
                self.pl = mod.nn.ParameterList([mod.nn.Parameter(mod.zeros(2))])
                self.fc = mod.nn.Linear(1, 1)
        return Holder()

    ours = repr(holder(oar))
    assert "(pl): ParameterList(  (0): Parameter containing: [" in ours  # one line: torch inlines it the same way
    torch = import_torch()
    theirs = repr(holder(torch))
    assert ours.replace(f32, "torch.float32") == theirs
    assert repr(torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2, 3, dtype=torch.float64))])) == \
        repr(nn.ParameterList([nn.Parameter(oar.zeros(2, 3, dtype=oar.float64))])).replace(f64, "torch.float64")


def test_load_state_dict_result_and_errors_read_as_torchs():
    m = nn.Linear(3, 2)
    result = m.load_state_dict({"weight": oar.zeros(2, 3), "extra": oar.zeros(1)}, strict=False)
    assert type(result).__name__ == "_IncompatibleKeys"
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"
    from oar.nn.modules.module import _IncompatibleKeys
    assert isinstance(result, _IncompatibleKeys) and result.missing_keys == ["bias"]
    with pytest.raises(RuntimeError) as ours:
        m.load_state_dict({"weight": oar.zeros(2, 3), "extra": oar.zeros(1)})
    assert str(ours.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
                               '\n\tUnexpected key(s) in state_dict: "extra". ')
    torch = import_torch()
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(3, 2).load_state_dict({"weight": torch.zeros(2, 3), "extra": torch.zeros(1)})
    assert str(ours.value) == str(theirs.value)


# -- small tensor APIs ---------------------------------------------------------------------------------------------

def test_where_with_a_condition_alone_is_nonzero_as_tuple():
    cond = np.array([[0, 1, 0], [1, 1, 0]])
    rows, cols = oar.where(oar.tensor(cond))
    want = np.nonzero(cond)
    assert rows.tolist() == want[0].tolist() and cols.tolist() == want[1].tolist() and rows.dtype == oar.int64
    assert oar.where(oar.tensor([True, False]), oar.tensor([1.0, 2.0]), 0.5).tolist() == [1.0, 0.5]
    with pytest.raises(TypeError):
        oar.where(oar.tensor([True]), oar.ones(1))


def test_flip_method_takes_dims_as_separate_ints():
    a = np.arange(24).reshape(2, 3, 4)
    x = oar.tensor(a)
    assert x.flip(0, 2).tolist() == a[::-1, :, ::-1].tolist()
    assert x.flip((0, 2)).tolist() == x.flip([0, 2]).tolist() == x.flip(dims=(0, 2)).tolist()
    assert x.flip(1).tolist() == a[:, ::-1].tolist() and oar.flip(x, [-1]).tolist() == a[..., ::-1].tolist()


def test_norm_nuc_is_the_nuclear_norm():
    a = np.random.RandomState(0).standard_normal((3, 5)).astype(np.float32)
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False).sum()
    np.testing.assert_allclose(oar.norm(oar.tensor(a), p="nuc").item(), want, rtol=1e-5)
    np.testing.assert_allclose(oar.tensor(a[None]).norm(p="nuc", dim=(1, 2)).numpy(), [want], rtol=1e-5)


def test_layouts_and_creation_keywords():
    import pickle
    x = oar.zeros(2, 3)
    assert x.layout == oar.strided and repr(oar.strided) == "torch.strided" and x.to_dense() is x
    assert x.to_dense(oar.float64).dtype == oar.float64
    assert pickle.loads(pickle.dumps(oar.sparse_coo)) is oar.sparse_coo
    assert oar.zeros(2, layout=oar.strided).tolist() == [0.0, 0.0]
    assert oar.ones(2, 2, pin_memory=False, layout=None).shape == (2, 2)
    assert oar.empty(3, pin_memory=True).shape == (3,) and oar.full((2,), 7, layout=oar.strided).tolist() == [7, 7]
    for make in (lambda: oar.randn(2, layout=oar.strided), lambda: oar.arange(3, layout=oar.strided),
                 lambda: oar.zeros_like(x, layout=oar.strided), lambda: oar.rand(2, generator=None, pin_memory=True)):
        assert make().layout == oar.strided
    with pytest.raises(NotImplementedError, match="sparse_coo_tensor"):
        oar.zeros(2, layout=oar.sparse_coo)
    img = oar.randn(2, 3, 4, 5)
    assert oar.empty(2, 3, 4, 5, memory_format=oar.channels_last).stride() == (60, 1, 15, 3)
    like = oar.zeros_like(img, memory_format=oar.channels_last)
    assert like.stride() == (60, 1, 15, 3) and like.is_contiguous(memory_format=oar.channels_last)
    assert oar.zeros(2, 2, requires_grad=True, layout=oar.strided).requires_grad


def test_layouts_compare_as_torch():
    torch = import_torch()
    assert str(oar.zeros(1).layout) == str(torch.zeros(1).layout)
    assert str(oar.zeros(2, 2).to_sparse().layout) == str(torch.zeros(2, 2).to_sparse().layout)


# -- sparse COO tensors (GCN adjacencies) --------------------------------------------------------------------------

_I = np.array([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 2, 1]])  # (0, 1) twice: uncoalesced
_V = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.5], dtype=np.float32)


def _sparse(mod, values=_V, requires_grad=False):
    v = mod.tensor(values.tolist(), requires_grad=requires_grad)
    return mod.sparse_coo_tensor(mod.tensor(_I.tolist()), v, (3, 4)), v


def test_sparse_sum_over_dims_is_sparse_as_torchs():
    a, _ = _sparse(oar)
    dense = np.zeros((3, 4), np.float32)
    np.add.at(dense, tuple(_I), _V)
    rows = oar.sparse.sum(a, dim=1)
    assert rows.is_sparse and rows.layout == oar.sparse_coo and tuple(rows.shape) == (3,)
    np.testing.assert_allclose(rows.to_dense().numpy(), dense.sum(1), rtol=1e-6)
    np.testing.assert_allclose(a.sum(dim=0).to_dense().numpy(), dense.sum(0), rtol=1e-6)
    assert rows.indices().tolist() == [[0, 1, 2]]
    total = oar.sparse.sum(a, dim=(0, 1))
    assert isinstance(total, oar.Tensor) and total.ndim == 0 and abs(total.item() - dense.sum()) < 1e-5
    assert oar.sparse.sum(a).item() == pytest.approx(dense.sum())
    torch = import_torch()
    t, _ = _sparse(torch)
    theirs = torch.sparse.sum(t, dim=1)
    assert theirs.is_sparse
    np.testing.assert_allclose(rows.to_dense().numpy(), from_torch(theirs.to_dense()), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])  # torch 1.13 refuses negative dims here (oar takes them)
def test_sparse_softmax_and_log_softmax_match_torch(dim):
    torch = import_torch()
    g = np.random.RandomState(dim + 5).standard_normal((3, 4)).astype(np.float32)
    out = {}
    for mod in (oar, torch):
        a, v = _sparse(mod, requires_grad=True)
        s = mod.sparse.softmax(a, dim)
        ls = mod.sparse.log_softmax(a, dim)
        assert s.is_sparse and ls.is_sparse
        sd, lsd = s.to_dense(), ls.to_dense()
        (sd * mod.tensor(g.tolist())).sum().backward()
        out[mod.__name__] = (np.array(sd.detach().tolist()), np.array(lsd.detach().tolist()),
                             np.array(v.grad.tolist()), np.array(s.coalesce().indices().tolist()))
    ours, theirs = out["oar"], out["torch"]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)  # absent entries: 0 in both
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-6)
    assert (ours[3] == theirs[3]).all()


def test_sparse_softmax_against_numpy_per_row():
    a, _ = _sparse(oar)
    dense = np.full((3, 4), -np.inf)
    coalesced = {}
    for (r, c), v in zip(_I.T, _V):
        coalesced[r, c] = coalesced.get((r, c), 0.0) + v
    for (r, c), v in coalesced.items():
        dense[r, c] = v
    want = np.exp(dense - dense.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(oar.sparse.softmax(a, 1).to_dense().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(oar.sparse.softmax(a, -1).to_dense().numpy(), want, rtol=1e-6)


def test_sparse_products_addmm_and_cat_match_torch():
    torch = import_torch()
    rs = np.random.RandomState(1)
    d = rs.standard_normal((4, 2)).astype(np.float32)
    m = rs.standard_normal((3, 2)).astype(np.float32)
    w = rs.standard_normal((3, 4)).astype(np.float32)
    results = {}
    for mod in (oar, torch):
        a, _ = _sparse(mod)
        b = mod.sparse_coo_tensor(mod.tensor([[0, 3], [1, 0]]), mod.tensor([2.0, -1.0]), (4, 3))
        prod = a * mod.tensor(w.tolist())
        ss = mod.sparse.mm(a, b)
        cat0, cat1 = mod.cat([a, a], 0), mod.cat([a, a * 2], dim=1)
        results[mod.__name__] = dict(
            addmm=mod.sparse.addmm(mod.tensor(m.tolist()), a, mod.tensor(d.tolist()), beta=0.5, alpha=2.0),
            prod=prod.to_dense(), prod_sparse=prod.is_sparse, ss=ss.to_dense(), ss_sparse=ss.is_sparse,
            cat0=cat0.to_dense(), cat1=cat1.to_dense(), cat_shape=tuple(cat1.shape),
            diff=(a - a * 3).to_dense())
    ours, theirs = results["oar"], results["torch"]
    for k in ours:
        if k.endswith("sparse") or k == "cat_shape":
            assert ours[k] == theirs[k], k
        else:
            np.testing.assert_allclose(_np(ours[k]), from_torch(theirs[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    with pytest.raises(oar.ShapeError):
        _sparse(oar)[0] * oar.ones(2, 2)


def test_sparse_repr_matches_torch():
    torch = import_torch()
    idx = np.stack([np.arange(30), np.arange(30)[::-1]])
    vals = (np.arange(30) / 7).astype(np.float32)
    cases = [(idx, vals, (30, 30)), (_I, _V, (3, 4)), (_I, np.arange(6), (3, 4)), (np.zeros((2, 0), np.int64),
                                                                                   np.zeros(0, np.float32), (3, 3))]
    for i, v, size in cases:
        ours = repr(oar.sparse_coo_tensor(oar.tensor(i.tolist(), dtype=oar.int64), oar.tensor(v), size))
        theirs = repr(torch.sparse_coo_tensor(to_torch(i.astype(np.int64)), to_torch(v), size))
        assert ours == theirs, f"\n{ours}\n{theirs}"
    ours = repr(oar.sparse_coo_tensor(oar.tensor(_I.tolist()), oar.tensor(_V, dtype=oar.float64), (3, 4),
                                      requires_grad=True))
    assert ours.endswith(f"size=(3, 4), nnz=6, dtype={oar.float64!r}, layout=torch.sparse_coo,\n       "
                         "requires_grad=True)")  # past linewidth: on its own line, as torch's


# -- autograd ------------------------------------------------------------------------------------------------------

def test_backward_with_inputs_accumulates_only_into_them():
    torch = import_torch()
    res = {}
    for mod in (oar, torch):
        a = mod.tensor([1.0, 2.0], requires_grad=True)
        b = mod.tensor([3.0, -1.0], requires_grad=True)
        c = mod.tensor([0.5, 0.5], requires_grad=True)
        (a * b * 3).sum().backward(inputs=[a, c])
        y = a * b * 2
        (y * y).sum().backward(inputs=y)  # a non-leaf input gets .grad too
        mod.autograd.backward((a * b).sum(), inputs=[b])
        (a * b).sum().backward(inputs=b, retain_graph=False)
        res[mod.__name__] = [a.grad, b.grad, c.grad, y.grad]
    for ours, theirs in zip(res["oar"], res["torch"]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(_np(ours), from_torch(theirs), rtol=1e-6)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (oar.ones(1, requires_grad=True) * 2).sum().backward(inputs=[])


def test_autograd_backward_takes_the_deprecated_grad_variables():
    x = oar.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="grad_variables"):
        oar.autograd.backward(x * 3, grad_variables=oar.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [3.0, 1.5]


def test_tensor_backward_create_graph_keeps_the_graph():
    x = oar.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)  # retain_graph defaults to create_graph, as torch's
    g = x.grad
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), [3 + 6, 12 + 12])


def test_legacy_register_backward_hook_sees_grad_output():
    lin = nn.Linear(3, 2)
    seen = []
    with pytest.warns(UserWarning, match="full backward hook"):
        handle = lin.register_backward_hook(lambda m, gi, go: seen.append((gi[0].clone(), go[0].clone())))
    x = oar.ones(4, 3, requires_grad=True)
    (lin(x) * oar.tensor([1.0, 2.0])).sum().backward()
    grad_in, grad_out = seen[0]
    assert grad_out.tolist() == [[1.0, 2.0]] * 4
    np.testing.assert_allclose(grad_in.numpy(), x.grad.numpy())
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_full_backward_hook(lambda m, gi, go: None)
    handle.remove()
    other = nn.Linear(1, 1)
    other.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both"):
        other.register_backward_hook(lambda m, gi, go: None)


# -- torch._foreach_* ----------------------------------------------------------------------------------------------

def test_foreach_ops_match_torch():
    torch = import_torch()
    rs = np.random.RandomState(2)
    arrays = [rs.uniform(0.5, 2.0, (3,)).astype(np.float32), rs.uniform(0.5, 2.0, (2, 2)).astype(np.float32)]
    others = [rs.uniform(0.5, 2.0, a.shape).astype(np.float32) for a in arrays]

    def run(mod):
        ts = [mod.tensor(a.tolist()) for a in arrays]
        os_ = [mod.tensor(a.tolist()) for a in others]
        out = []
        out += mod._foreach_add(ts, os_, alpha=0.5) + mod._foreach_mul(ts, 3.0) + mod._foreach_div(ts, [2.0, 4.0])
        out += mod._foreach_sub(ts, 1.0) + mod._foreach_sqrt(ts) + mod._foreach_exp(ts) + mod._foreach_neg(ts)
        out += mod._foreach_maximum(ts, os_) + mod._foreach_addcmul(ts, os_, os_, value=0.1)
        out += mod._foreach_addcdiv(ts, os_, ts, [0.5, 2.0]) + mod._foreach_norm(ts)
        ema = [t.clone() for t in ts]
        mod._foreach_mul_(ema, 0.9)
        mod._foreach_add_(ema, os_, alpha=0.1)
        mod._foreach_addcmul_(ema, os_, os_, value=0.5)
        mod._foreach_sqrt_(ema)
        z = [t.clone() for t in ts]
        mod._foreach_zero_(z)
        return out + ema + z

    ours, theirs = run(oar), run(torch)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(_np(o), from_torch(t), rtol=1e-5, atol=1e-7)
    assert oar._foreach_mul_([oar.ones(1)], 2.0) is None
    params = [oar.ones(2), oar.zeros(2)]
    oar._foreach_lerp_(params, [oar.zeros(2), oar.ones(2)], 0.25)  # PyTorch 2.x's EMA helper
    assert params[0].tolist() == [0.75, 0.75] and params[1].tolist() == [0.25, 0.25]
    with pytest.raises(RuntimeError, match="same number of tensors"):
        oar._foreach_add([oar.ones(1)], [oar.ones(1), oar.ones(1)])


# -- data and checkpoints ------------------------------------------------------------------------------------------

def test_dataloader_prefetch_factor_follows_pytorch_1_13():
    from oar.utils.data import DataLoader
    assert len(list(DataLoader(range(6), batch_size=2, num_workers=0, prefetch_factor=2))) == 3
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(range(6), prefetch_factor=3)


def test_checkpoint_keeps_argparse_namespace():
    args = argparse.Namespace(lr=0.1, model="vit_tiny", sizes=[1, 2], flags={"a": True}, t=oar.arange(3))
    buf = io.BytesIO()
    oar.save({"args": args, "epoch": 2, "model": {"w": oar.ones(2)}}, buf)
    buf.seek(0)
    ck = oar.load(buf)
    back = ck["args"]
    assert isinstance(back, argparse.Namespace) and back.model == "vit_tiny" and back.lr == 0.1
    assert back.sizes == [1, 2] and back.flags == {"a": True} and back.t.tolist() == [0, 1, 2]
    assert ck["epoch"] == 2 and ck["model"]["w"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="builtins.function"):
        oar.save({"args": argparse.Namespace(fn=lambda: 0)}, io.BytesIO())
