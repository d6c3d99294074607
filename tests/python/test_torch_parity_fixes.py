"""Small PyTorch-1.13 behaviours, checked against torch (where installed) on every device: meshgrid of one
tensor, copysign with a Python number, oar.Size's int check, the zero gradients of an ord-0 vector norm and of
A ** 0 (rather than none), and index_copy_'s range check on its indices."""
import numpy as np
import pytest

import oar
from torch_ref import from_torch


def N(t):
    return t.detach().cpu().numpy()


def same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype)[4:] == str(theirs.dtype)[6:], (ours, theirs)
    np.testing.assert_allclose(N(ours), from_torch(theirs), rtol=1e-6, atol=1e-7)


def test_meshgrid_of_one_tensor_is_a_one_tuple(device, torch):
    for values in ([1, 2], [3.5], [4.0, 5.0, 6.0]):
        t, tt = oar.tensor(values, device=device), torch.tensor(values)
        for ours, theirs in ((oar.meshgrid(t, indexing="ij"), torch.meshgrid(tt, indexing="ij")),
                             (oar.meshgrid(t, indexing="xy"), torch.meshgrid(tt, indexing="xy")),
                             (oar.meshgrid([t], indexing="ij"), torch.meshgrid([tt], indexing="ij")),
                             (oar.meshgrid((t,), indexing="ij"), torch.meshgrid((tt,), indexing="ij"))):
            assert isinstance(ours, tuple) and len(ours) == len(theirs) == 1
            same(ours[0], theirs[0])
    a, b = oar.tensor([1, 2], device=device), oar.tensor([3, 4, 5], device=device)
    for ours, theirs in zip(oar.meshgrid(a, b, indexing="xy"),
                            torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]), indexing="xy")):
        same(ours, theirs)


@pytest.mark.parametrize("other", [-1.0, 2.5, -0.0, 0.0, -3, 4])
def test_copysign_takes_a_python_number(device, torch, other):
    for values in ([1.0, -2.0, 0.0, -0.0], [3, -4, 0]):
        t, tt = oar.tensor(values, device=device), torch.tensor(values)
        same(oar.copysign(t, other), torch.copysign(tt, other))
        same(t.copysign(other), tt.copysign(other))
        # the sign bit itself (-0.0 vs 0.0), which equality can't see
        assert np.array_equal(np.signbit(N(oar.copysign(t, other))), np.signbit(from_torch(torch.copysign(tt, other))))
    f64 = oar.tensor([1.0, -2.0], dtype=oar.float64, device=device)
    same(oar.copysign(f64, other), torch.copysign(torch.tensor([1.0, -2.0], dtype=torch.float64), other))


def test_copysign_inplace_gradient_and_errors(device, torch):
    x = oar.tensor([1.5, -2.0, 3.0], device=device)
    assert x.copysign_(-1) is x and x.tolist() == [-1.5, -2.0, -3.0]
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor([1, 2]).copysign_(-1)
    with pytest.raises(RuntimeError) as ours:
        oar.tensor([1, 2], device=device).copysign_(-1)
    assert "can't be cast to the desired output type" in str(ours.value) and "Long" in str(theirs.value)
    with pytest.raises(TypeError):
        oar.copysign(-1.0, oar.tensor([1.0], device=device))  # torch: a number is only `other`
    g = oar.tensor([1.5, -2.0, 0.5], device=device, requires_grad=True)
    oar.copysign(g, -2.0).sum().backward()
    tg = torch.tensor([1.5, -2.0, 0.5], requires_grad=True)
    torch.copysign(tg, -2.0).sum().backward()
    same(g.grad, tg.grad)


def test_size_takes_only_ints(torch):
    for bad in ([1.5], [2, "a"], [oar.tensor(2.0)], [None]):
        theirs_bad = [torch.tensor(2.0) if isinstance(b, oar.Tensor) else b for b in bad]
        with pytest.raises(TypeError) as theirs:
            torch.Size(theirs_bad)
        with pytest.raises(TypeError) as ours:
            oar.Size(bad)
        assert str(ours.value) == str(theirs.value).replace("torch.", "oar.")
    assert oar.Size([np.int64(3), True, oar.tensor(4)]) == torch.Size([3, True, torch.tensor(4)]) == (3, 1, 4)
    assert oar.Size((2, 3)) == (2, 3) and oar.Size() == () and oar.zeros(2, 3).shape[1:] == oar.Size([3])


def test_ord0_norm_and_zeroth_power_have_zero_gradients(device, torch):
    data = [[1.0, 0.0, -2.0], [0.0, 0.0, 3.0]]
    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        x = oar.tensor(data, device=device, requires_grad=True)
        tx = torch.tensor(data, requires_grad=True)
        y, ty = oar.linalg.vector_norm(x, 0, **kw), torch.linalg.vector_norm(tx, 0, **kw)
        assert y.requires_grad and ty.requires_grad
        same(y.detach(), ty.detach())
        y.sum().backward()
        ty.sum().backward()
        want = np.zeros((2, 3)) if tx.grad is None else from_torch(tx.grad)  # torch 1.13 leaves it None (zero)
        np.testing.assert_array_equal(N(x.grad), want)
    a = [[1.0, 2.0], [3.0, 4.0]]
    for shape in ((2, 2), (3, 2, 2)):
        A = oar.tensor(np.broadcast_to(a, shape).tolist(), device=device, requires_grad=True)
        tA = torch.tensor(np.broadcast_to(a, shape).tolist(), requires_grad=True)
        P, tP = oar.linalg.matrix_power(A, 0), torch.linalg.matrix_power(tA, 0)
        assert P.requires_grad and tP.requires_grad
        same(P.detach(), tP.detach())
        (P * P).sum().backward()
        (tP * tP).sum().backward()
        same(A.grad, tA.grad)
    with oar.no_grad():
        assert not oar.linalg.vector_norm(x, 0).requires_grad
    inf_nan = oar.tensor([float("inf"), float("nan"), 0.0], device=device, requires_grad=True)
    assert oar.linalg.vector_norm(inf_nan, 0).item() == 2.0  # the zero-gradient term adds an exact 0


def test_index_copy_checks_its_indices(device, torch):
    src = [[1.0, 2.0]]
    for index, size_dim in (([-1], 0), ([3], 0), ([0, -2], 0)):
        n = len(index)
        with pytest.raises(IndexError) as theirs:
            torch.zeros(3, 2).index_copy_(0, torch.tensor(index), torch.ones(n, 2))
        with pytest.raises(IndexError) as ours:
            oar.zeros(3, 2, device=device).index_copy_(0, oar.tensor(index, device=device),
                                                        oar.ones(n, 2, device=device))
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(IndexError):
            oar.index_copy(oar.zeros(3, 2, device=device), 0, oar.tensor(index, device=device),
                           oar.ones(n, 2, device=device))
    with pytest.raises(IndexError) as theirs:
        torch.zeros(2, 3).index_copy_(1, torch.tensor([-1]), torch.ones(2, 1))
    with pytest.raises(IndexError) as ours:
        oar.zeros(2, 3, device=device).index_copy_(1, oar.tensor([-1], device=device), oar.ones(2, 1, device=device))
    assert str(ours.value) == str(theirs.value)
    y = oar.zeros(3, 2, device=device)
    ty = torch.zeros(3, 2)
    same(y.index_copy_(0, oar.tensor([2], device=device), oar.tensor(src, device=device)),
         ty.index_copy_(0, torch.tensor([2]), torch.tensor(src)))
