"""Ops PyTorch programs call with operands of different dtypes or with integer/bool dtypes: the logical ops
promote mixed operands, `outer` of bools, and integer matmul (`@`, batched and broadcast), on every device,
against NumPy and PyTorch 1.13's values; a fused recurrent layer's unsupported second derivative names the
switch that composes it of differentiable ops."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("b_dtype", [oar.int64, oar.float64, oar.bool, oar.int8])
def test_logical_ops_promote_mixed_dtypes(device, name, b_dtype):
    a_vals, b_vals = [1.5, 0.0, -2.0, 0.0], [1, 1, 0, 0]
    a = oar.tensor(a_vals, dtype=oar.float32, device=device)
    b = oar.tensor(b_vals, dtype=b_dtype, device=device)
    want = getattr(np, name)(np.array(a_vals) != 0, np.array(b_vals) != 0)
    for got in (getattr(oar, name)(a, b), getattr(a, name)(b), getattr(oar, name)(b, a)):
        assert got.dtype == oar.bool
        assert got.cpu().tolist() == want.tolist()
    torch = import_torch()
    tb = torch.tensor(b_vals, dtype=getattr(torch, str(b_dtype).split(".")[-1]))
    assert getattr(torch, name)(torch.tensor(a_vals), tb).tolist() == want.tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_outer_of_bools_and_ints(device):
    a, b = [True, False, True], [False, True]
    got = oar.outer(oar.tensor(a, device=device), oar.tensor(b, device=device))
    assert got.dtype == oar.bool and got.cpu().tolist() == np.outer(a, b).tolist()
    got = oar.outer(oar.tensor([2, -3], device=device), oar.tensor([4, 5, 6], device=device))
    assert got.dtype == oar.int64 and got.cpu().tolist() == np.outer([2, -3], [4, 5, 6]).tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [oar.int64, oar.int32, oar.uint8, oar.int8])
def test_integer_matmul(device, dtype):
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 9, (2, 3, 4)), rng.integers(0, 9, (4, 5))
    ta, tb = oar.tensor(a, dtype=dtype, device=device), oar.tensor(b, dtype=dtype, device=device)
    for got in (ta @ tb, oar.matmul(ta, tb), ta.matmul(tb)):
        assert got.dtype == dtype and got.cpu().numpy().tolist() == (a @ b).tolist()
    big = oar.tensor([[2**40, 3]], dtype=oar.int64, device=device) @ oar.tensor([[5], [2**41]], dtype=oar.int64,
                                                                                 device=device)
    assert big.cpu().tolist() == [[5 * 2**40 + 3 * 2**41]]  # exact, not through a float
    batched = oar.tensor(a, dtype=dtype, device=device) @ oar.tensor(rng.integers(0, 9, (2, 4, 3)), dtype=dtype,
                                                                    device=device)
    assert batched.shape == (2, 3, 3)
    torch = import_torch()
    assert (torch.tensor(a.tolist()) @ torch.tensor(b.tolist())).tolist() == (a @ b).tolist()


def test_bool_matmul_is_a_clear_error():
    with pytest.raises(Exception, match="bool"):
        oar.tensor([[True]]) @ oar.tensor([[False]])


def test_fused_rnn_second_derivative_names_the_switch():
    lstm = oar.nn.LSTM(3, 4)
    x = oar.randn(5, 2, 3, requires_grad=True)
    out, _ = lstm(x)
    (gx,) = oar.autograd.grad(out.sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="fused_kernels = False"):
        gx.pow(2).sum().backward()


def test_integer_matmul_in_chunks_empty_inner_dim_and_wrapping():
    rng = np.random.default_rng(6)
    a, b = rng.integers(-128, 128, (256, 600)), rng.integers(-128, 128, (600, 256))
    got = oar.tensor(a, dtype=oar.int8) @ oar.tensor(b, dtype=oar.int8)  # 3 chunks of the inner dim
    assert got.dtype == oar.int8
    np.testing.assert_array_equal(got.numpy(), (a @ b).astype(np.int8))  # wraps modulo 2^8, as torch's
    empty = oar.zeros(3, 0, dtype=oar.int32) @ oar.zeros(0, 4, dtype=oar.int32)
    assert empty.shape == (3, 4) and empty.dtype == oar.int32 and empty.abs().sum().item() == 0
