"""PyTorch tensor math (oar._tensor_math) against NumPy, plain loops, PyTorch 1.13 and finite differences.

Every test runs on every device; the ties, NaN, empty and integer cases are the ones PyTorch code meets."""
import math

import numpy as np
import pytest

import oar
from torch_ref import from_torch, import_torch, to_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(0)


@pytest.fixture(params=DEVICES)
def dev(request):
    return request.param


def T(a, dev, dtype=None):
    return oar.tensor(np.asarray(a), dtype=dtype, device=dev)


def N(x):
    return x.detach().cpu().numpy()


def close(x, expected, **kw):
    np.testing.assert_allclose(N(x), np.asarray(expected), **({"rtol": 1e-5, "atol": 1e-6} | kw))


def fd_check(fn, x_np, dev, eps=1e-6, tol=1e-4):
    """oar.autograd.grad of sum(w * fn(x)) against central finite differences, in float64."""
    w = RNG.standard_normal(np.shape(N(fn(T(x_np, dev, oar.float64)))))
    weight = T(w, dev, oar.float64)
    x = T(x_np, dev, oar.float64).requires_grad_(True)
    (g,) = oar.autograd.grad((fn(x) * weight).sum(), [x])
    numeric = np.zeros_like(x_np, dtype=np.float64)
    for i in np.ndindex(x_np.shape):
        hi, lo = x_np.astype(np.float64).copy(), x_np.astype(np.float64).copy()
        hi[i] += eps
        lo[i] -= eps
        numeric[i] = ((N(fn(T(hi, dev))) * w).sum() - (N(fn(T(lo, dev))) * w).sum()) / (2 * eps)
    np.testing.assert_allclose(N(g), numeric, rtol=tol, atol=tol)


# ---- math ----
def test_elementwise_math_matches_numpy(dev):
    a = np.array([-2.5, -1.0, -0.0, 0.0, 0.3, 1.5, 2.5, np.nan], np.float32)
    x = T(a, dev)
    close(oar.sign(x), np.sign(a))
    close(oar.sgn(x), np.sign(a))
    close(x.frac(), a - np.trunc(a))
    close(oar.deg2rad(x), np.deg2rad(a))
    close(x.rad2deg(), np.rad2deg(a), rtol=1e-5)
    close(oar.sinc(x), np.sinc(a))
    close(oar.signbit(x), np.signbit(a))
    close(oar.positive(x), a)
    close(oar.negative(x), -a)
    close(oar.absolute(x), np.abs(a))
    close(oar.square(x), a * a)
    close(oar.nan_to_num(x), np.nan_to_num(a))
    big = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    close(oar.nan_to_num(T(big, dev), nan=2.0, posinf=9.0), [9.0, np.finfo(np.float32).min, 2.0, 1.0])
    p = np.array([0.1, 0.5, 0.9], np.float32)
    close(oar.logit(T(p, dev)), np.log(p / (1 - p)))
    close(oar.logit(T([0.0, 1.0], dev, oar.float32), eps=0.25), np.log([1 / 3, 3]))
    i = T([-3, 0, 4], dev)
    assert oar.sign(i).dtype == oar.int64 and N(oar.sign(i)).tolist() == [-1, 0, 1]
    assert oar.deg2rad(i).dtype == oar.float32
    assert N(oar.signbit(i)).tolist() == [True, False, False]
    with pytest.raises(oar.DTypeError):
        oar.frac(i)
    with pytest.raises(TypeError):
        oar.negative(T([True], dev))


def test_binary_math_matches_torch(dev):
    torch = import_torch()
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    w = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    x, y, z = T(a, dev), T(b, dev), T(w, dev)
    ta, tb, tw = to_torch(a), to_torch(b), to_torch(w)
    close(oar.lerp(x, y, z), from_torch(torch.lerp(ta, tb, tw)))
    close(x.lerp(y, 0.75), from_torch(ta.lerp(tb, 0.75)))
    close(oar.addcmul(x, y, z, value=0.5), from_torch(torch.addcmul(ta, tb, tw, value=0.5)))
    close(x.addcdiv(z, y, value=-2), from_torch(ta.addcdiv(tw, tb, value=-2)))
    close(oar.xlogy(z, y), from_torch(torch.xlogy(tw, tb)))
    xl = oar.xlogy(T([0, 1, 0, 2.0], dev), T([0, 3, np.nan, 0.0], dev))
    close(xl, [0, math.log(3), np.nan, -np.inf])
    fp = oar.float_power(T([2, 3], dev), 2)
    assert fp.dtype == oar.float64 and N(fp).tolist() == [4.0, 9.0]
    close(oar.heaviside(T([-1.0, 0.0, 2.0], dev), T([0.5], dev)), [0, 0.5, 1])
    n = np.array([1.0, np.nan, np.nan, -1.0], np.float32)
    m = np.array([np.nan, 2.0, np.nan, -3.0], np.float32)
    close(oar.fmax(T(n, dev), T(m, dev)), np.fmax(n, m))
    close(oar.fmin(T(n, dev), T(m, dev)), np.fmin(n, m))
    close(oar.maximum(T(n, dev), T(m, dev)), np.maximum(n, m))
    with pytest.raises(oar.DTypeError):
        oar.addcdiv(x, T([1], dev), T([2], dev))


def test_clamp_rules(dev):
    torch = import_torch()
    i = T([1, 5, -3], dev)
    c = oar.clamp(i, 0.5, 2.5)
    assert c.dtype == oar.float32
    close(c, from_torch(torch.clamp(torch.tensor([1, 5, -3]), 0.5, 2.5)))
    assert oar.clamp(i, min=0).dtype == oar.int64 and N(i.clamp_min(0)).tolist() == [1, 5, 0]
    x = T([1.0, np.nan, -4.0], dev)
    close(x.clip(-1, 0.5), [0.5, np.nan, -1])
    close(oar.clamp(x, max=T([0.0, 0.0, 0.0], dev)), [0, np.nan, -4])
    with pytest.raises(ValueError):
        oar.clamp(x)
    y = T([3.0, -3.0], dev)
    y.clamp_(-1, 1)
    assert N(y).tolist() == [1.0, -1.0]


def test_math_gradients(dev):
    x = np.array([[0.3, -0.7, 1.2], [0.0, 2.0, -1.5]])
    p = np.array([[0.2, 0.4, 0.7]])
    fd_check(oar.sinc, x, dev)
    fd_check(oar.frac, x + 0.05, dev)
    fd_check(oar.logit, p, dev)
    fd_check(lambda t: oar.lerp(t, t * t, 0.3), x, dev)
    fd_check(lambda t: oar.lerp(t, -t, oar.sigmoid(t)), x, dev)
    fd_check(lambda t: oar.addcmul(t, t, t, value=2), x, dev)
    fd_check(lambda t: oar.addcdiv(t, t, t * t + 1), x, dev)
    fd_check(lambda t: oar.xlogy(t, t * t + 1), x, dev)
    fd_check(lambda t: oar.fmax(t, -t), x + 0.01, dev)
    fd_check(lambda t: oar.nan_to_num(t * 3), x, dev)
    fd_check(lambda t: oar.float_power(t, 3), x, dev)
    # sinc at 0 and xlogy at x == 0 have finite gradients, as PyTorch
    z = T([0.0, 0.0], dev, oar.float64).requires_grad_(True)
    (g,) = oar.autograd.grad(oar.sinc(z).sum() + oar.xlogy(z, z).sum(), [z])
    assert np.isfinite(N(g)).all()


# ---- comparison ----
def test_isclose_allclose_equal(dev):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float64)
    b = np.array([1.0 + 1e-7, np.nan, np.inf, np.inf, 0.0, 100.1], np.float64)
    x, y = T(a, dev), T(b, dev)
    close(oar.isclose(x, y), np.isclose(a, b))
    close(x.isclose(y, equal_nan=True), np.isclose(a, b, equal_nan=True))
    close(oar.isclose(x, y, rtol=1e-2, atol=0), np.isclose(a, b, rtol=1e-2, atol=0))
    close(oar.isclose(T([1, 2], dev), T([1, 3], dev)), [True, False])
    assert oar.allclose(x[:1], y[:1]) is True and oar.allclose(x, y) is False
    assert oar.allclose(x[1:3], y[1:3], equal_nan=True)
    assert oar.equal(T([1, 2], dev), T([1, 2], dev)) is True
    assert oar.equal(T([1, 2], dev), T([1, 2, 3], dev)) is False
    assert T([1.0, np.nan], dev).equal(T([1.0, np.nan], dev)) is False
    with pytest.raises(oar.DTypeError):
        oar.isclose(T([1], dev), T([1.0], dev))


def test_classification_and_comparison_aliases(dev):
    a = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], np.float32)
    x = T(a, dev)
    for name, ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isposinf", np.isposinf),
                      ("isneginf", np.isneginf), ("isfinite", np.isfinite)]:
        assert N(getattr(oar, name)(x)).tolist() == ref(a).tolist(), name
        assert N(getattr(x, name)()).tolist() == ref(a).tolist(), name
    i = T([0, 7], dev)
    assert N(oar.isfinite(i)).tolist() == [True, True] and N(oar.isinf(i)).tolist() == [False, False]
    assert N(oar.isreal(x)).all()
    b = T([1.0, 2.0, 3.0], dev, oar.float32)  # lt_ must keep float32 (np.asarray alone would give float64)
    assert N(oar.greater(b, 2)).tolist() == [False, False, True]
    assert N(b.greater_equal(2)).tolist() == [False, True, True]
    assert N(oar.less(b, 2)).tolist() == [True, False, False]
    assert N(b.less_equal(2)).tolist() == [True, True, False]
    assert N(oar.not_equal(b, 2)).tolist() == [True, False, True]
    c = b.clone()
    c.lt_(2.5)
    assert c.dtype == oar.float32 and N(c).tolist() == [1.0, 1.0, 0.0]


# ---- logical and bitwise ----
@pytest.mark.parametrize("dtype,np_dtype", [(oar.int8, np.int8), (oar.uint8, np.uint8), (oar.int32, np.int32),
                                            (oar.int64, np.int64)])
def test_bitwise_matches_numpy(dev, dtype, np_dtype):
    info = np.iinfo(np_dtype)
    a = np.array([0, 1, 5, 12, info.max, info.min, info.max - 3, 77], np_dtype)
    b = np.array([3, 6, 9, 1, info.min, info.max, 12, info.min + 1], np_dtype)
    x, y = T(a, dev, dtype), T(b, dev, dtype)
    assert N(oar.bitwise_and(x, y)).tolist() == (a & b).tolist()
    assert N(x.bitwise_or(y)).tolist() == (a | b).tolist()
    assert N(oar.bitwise_xor(x, y)).tolist() == (a ^ b).tolist()
    assert N(oar.bitwise_not(x)).tolist() == (~a).tolist()
    assert N(x & y).tolist() == (a & b).tolist() and N(~x).tolist() == (~a).tolist()
    assert (x & y).dtype == dtype
    shifts = np.array([0, 1, 3, 2, 1, 1, 4, 5], np_dtype)
    s = T(shifts, dev, dtype)
    assert N(oar.bitwise_left_shift(x, s)).tolist() == (a << shifts).tolist()
    assert N(x >> s).tolist() == (a >> shifts).tolist()
    assert N(x << 1).tolist() == (a << np_dtype(1)).tolist()
    width = np.iinfo(np_dtype).bits
    full = T([width - 1] * len(a), dev, dtype)
    assert N(x >> full).tolist() == (a >> np_dtype(width - 1)).tolist()


def test_bitwise_bool_logical_and_errors(dev):
    p, q = T([True, True, False], dev), T([True, False, False], dev)
    assert N(oar.bitwise_and(p, q)).tolist() == [True, False, False]
    assert N(p | q).tolist() == [True, True, False] and N(p ^ q).tolist() == [False, True, False]
    assert N(~p).tolist() == [False, False, True]
    assert N(oar.logical_xor(T([0, 2], dev), T([1, 3], dev))).tolist() == [True, False]
    m = T([1.0, 0.0], dev)
    m.logical_and_(T([1.0, 1.0], dev))
    assert N(m).tolist() == [1.0, 0.0]
    with pytest.raises(oar.DTypeError, match="floating"):
        oar.bitwise_and(T([1.0], dev), T([1.0], dev))
    with pytest.raises(oar.DTypeError):
        oar.bitwise_left_shift(p, q)
    v = T([12], dev)
    v &= 10
    assert N(v).tolist() == [8]


# ---- reductions ----
def test_mean_var_std_logsumexp(dev):
    torch = import_torch()
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    x, ta = T(a, dev), to_torch(a)
    for kw in [{}, {"dim": 1}, {"dim": 0, "unbiased": False}, {"dim": 1, "keepdim": True}]:
        for ours, theirs in [(oar.std_mean, torch.std_mean), (oar.var_mean, torch.var_mean)]:
            got, want = ours(x, **kw), theirs(ta, **kw)
            close(got[0], from_torch(want[0]))
            close(got[1], from_torch(want[1]))
    close(oar.var_mean(x, 1, correction=0)[0], a.var(1))
    close(oar.logsumexp(x, 1), from_torch(torch.logsumexp(ta, 1)))
    close(x.logsumexp((0, 1), keepdim=True), from_torch(torch.logsumexp(ta, (0, 1), keepdim=True)))
    huge = T([[1000.0, 1000.0], [-np.inf, -np.inf]], dev)
    close(oar.logsumexp(huge, 1), [1000 + math.log(2), -np.inf])
    close(oar.logsumexp(T(np.zeros((2, 0), np.float32), dev), 1), [-np.inf, -np.inf])
    assert oar.logsumexp(T([1, 2], dev), 0).dtype == oar.float32
    with pytest.raises(IndexError):
        oar.logsumexp(x, 2)
    with pytest.raises(IndexError):
        oar.std_mean(x, -3)


def test_median_nanmedian_ties_and_nan(dev):
    torch = import_torch()
    a = np.array([[3.0, 1.0, np.nan, 2.0, np.nan], [1.0, 1.0, 2.0, 2.0, 0.0], [5.0, 4.0, 3.0, 2.0, 1.0]],
                 np.float32)
    x, ta = T(a, dev), to_torch(a)
    for ours, theirs in [(oar.median, torch.median), (oar.nanmedian, torch.nanmedian)]:
        got, want = ours(x, 1), theirs(ta, 1)
        close(got.values, from_torch(want.values))
        # ties may pick either position; the index must point at the value
        picked = np.take_along_axis(a, N(got.indices)[:, None], 1)[:, 0]
        np.testing.assert_array_equal(np.isnan(picked), np.isnan(from_torch(want.values)))
        np.testing.assert_allclose(picked[~np.isnan(picked)], from_torch(want.values)[~np.isnan(picked)])
        kept = ours(x, 0, keepdim=True)
        assert tuple(kept[0].shape) == (1, 5) and kept.indices.dtype == oar.int64
    assert N(oar.median(x, 1).indices)[0] == 2  # the first NaN, as PyTorch
    assert np.isnan(N(oar.median(x))) and N(oar.nanmedian(x)) == np.float32(2.0)
    i = T([[4, 1, 3, 2]], dev)
    assert N(oar.median(i)) == 2 and N(i.median(-1).values).tolist() == [2]
    assert np.isnan(N(oar.median(T(np.zeros(0, np.float32), dev))))
    assert N(oar.nanmedian(T([np.nan, np.nan], dev), 0).values) != N(oar.nanmedian(T([np.nan, np.nan], dev), 0).values)
    with pytest.raises(IndexError):
        oar.median(x, 2)
    with pytest.raises(IndexError):
        oar.median(T(np.zeros((2, 0), np.float32), dev), 1)


def test_mode_kthvalue(dev):
    torch = import_torch()
    a = np.array([[1, 2, 2, 1, 3], [5, 5, 4, 4, 4], [7, 6, 5, 4, 3]], np.int64)
    got, want = oar.mode(T(a, dev), 1), torch.mode(torch.tensor(a.tolist()), 1)
    assert N(got.values).tolist() == want.values.tolist()
    assert N(got.indices).tolist() == want.indices.tolist()
    f = T(a.T.astype(np.float32), dev)
    assert N(oar.mode(f, 0).values).tolist() == want.values.tolist()
    assert tuple(f.mode(0, keepdim=True).values.shape) == (1, 3)
    r = RNG.standard_normal((4, 6)).astype(np.float32)
    got, want = oar.kthvalue(T(r, dev), 3, 1), torch.kthvalue(to_torch(r), 3, 1)
    close(got.values, from_torch(want.values))
    assert N(got.indices).tolist() == want.indices.tolist()
    assert tuple(T(r, dev).kthvalue(2, 0, True).values.shape) == (1, 6)
    with pytest.raises(ValueError):
        oar.kthvalue(T(r, dev), 7, 1)
    with pytest.raises(IndexError):
        oar.kthvalue(T(r, dev), 1, 2)


def test_count_all_any_aminmax_nansum(dev):
    a = np.array([[0, 1, 2], [0, 0, 3]], np.int64)
    x = T(a, dev)
    assert N(oar.count_nonzero(x)) == 3 and N(x.count_nonzero(1)).tolist() == [2, 1]
    assert N(oar.count_nonzero(x, dim=(0, 1))) == 3
    assert N(oar.all(x)) == False and N(x.any()) == True  # noqa: E712
    assert N(oar.all(x, 1)).tolist() == [False, False] and N(x.any(0, keepdim=True)).tolist() == [[False, True, True]]
    assert oar.all(x).dtype == oar.bool and oar.all(T([1, 2], dev, oar.uint8)).dtype == oar.uint8
    empty = T(np.zeros((0, 3), np.float32), dev)
    assert N(oar.all(empty)) == True and N(oar.any(empty)) == False  # noqa: E712
    assert N(oar.all(empty, 0)).tolist() == [True] * 3
    mm = oar.aminmax(x)
    assert (N(mm.min), N(mm.max)) == (0, 3)
    mm = x.aminmax(dim=1, keepdim=True)
    assert N(mm[0]).tolist() == [[0], [0]] and N(mm[1]).tolist() == [[2], [3]]
    n = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]], np.float32)
    close(oar.nansum(T(n, dev)), np.nansum(n))
    close(T(n, dev).nansum(1), np.nansum(n, 1))
    close(oar.nanmean(T(n, dev), 1), np.nanmean(n, 1))
    assert oar.nansum(T([1, 2], dev)).dtype == oar.int64
    with pytest.raises(IndexError):
        oar.count_nonzero(x, 2)
    with pytest.raises(IndexError):
        oar.all(x, -3)


def test_norm(dev):
    torch = import_torch()
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    a[0, 1] = 0
    x, ta = T(a, dev), to_torch(a)
    for p in ["fro", 2, 1, 3, 0.5, 0, math.inf, -math.inf]:
        close(oar.norm(x, p), from_torch(torch.norm(ta, p)), rtol=1e-4)
        close(x.norm(p, 1), from_torch(torch.norm(ta, p, 1)), rtol=1e-4)
    close(oar.norm(x, 2, (0, 1), keepdim=True), from_torch(torch.norm(ta, 2, (0, 1), keepdim=True)), rtol=1e-4)
    with pytest.raises(oar.DTypeError):
        oar.norm(T([1, 2], dev))
    with pytest.raises(IndexError):
        oar.norm(x, 2, 2)


def test_reduction_gradients(dev):
    x = np.array([[0.3, -0.7, 1.2, 0.1], [0.5, 2.0, -1.5, 0.9], [1.1, -0.2, 0.4, 0.8]])
    fd_check(lambda t: oar.logsumexp(t, 1), x, dev)
    fd_check(lambda t: oar.std_mean(t, 1)[0] + oar.std_mean(t, 1)[1], x, dev)
    fd_check(lambda t: oar.var_mean(t, 0, correction=0)[0], x, dev)
    fd_check(lambda t: oar.median(t, 1).values, x, dev)
    fd_check(lambda t: oar.median(t), x, dev)
    fd_check(lambda t: oar.nanmedian(t, 0).values, x, dev)
    fd_check(lambda t: oar.mode(t, 1).values, x, dev)
    fd_check(lambda t: oar.kthvalue(t, 2, 1).values, x, dev)
    fd_check(lambda t: oar.norm(t), x, dev)
    fd_check(lambda t: oar.norm(t, 3, 1), x, dev)
    fd_check(lambda t: oar.norm(t, math.inf, 0), x, dev)
    fd_check(lambda t: oar.nansum(t, 0) + oar.nanmean(t, 0), x, dev)
    fd_check(lambda t: oar.aminmax(t, dim=1).max, x, dev)
    # the 2-norm of zeros has gradient 0 (not NaN), as PyTorch
    z = T(np.zeros(3), dev, oar.float64).requires_grad_(True)
    (g,) = oar.autograd.grad(oar.norm(z), [z])
    assert N(g).tolist() == [0.0, 0.0, 0.0]


# ---- scans ----
def test_scans_match_torch(dev):
    torch = import_torch()
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    x, ta = T(a, dev), to_torch(a)
    close(oar.cumsum(x, 1), from_torch(torch.cumsum(ta, 1)), rtol=1e-5)
    close(x.cumprod(0), from_torch(ta.cumprod(0)), rtol=1e-5)
    close(oar.logcumsumexp(x, -1), from_torch(torch.logcumsumexp(ta, -1)), rtol=1e-5)
    a[1, 2] = np.nan  # NaN propagates through cummax/cummin, at its own index
    x, ta = T(a, dev), to_torch(a)
    for ours, theirs in [(oar.cummax, torch.cummax), (oar.cummin, torch.cummin)]:
        got, want = ours(x, 1), theirs(ta, 1)
        close(got.values, from_torch(want.values))
        assert N(got.indices).tolist() == want.indices.tolist()
    i = T([[1, 2], [3, 4]], dev, oar.int32)
    assert oar.cumsum(i, 0).dtype == oar.int64 and N(oar.cumsum(i, 0)).tolist() == [[1, 2], [4, 6]]
    assert oar.cumsum(i, 1, dtype=oar.float64).dtype == oar.float64
    assert N(oar.cumprod(T([True, True, False], dev), 0)).tolist() == [1, 1, 0]
    b = oar.cummax(T([False, True, False], dev), 0)
    assert b.values.dtype == oar.bool and N(b.values).tolist() == [False, True, True]
    c = T([1.0, 2.0, 3.0], dev)
    c.cumsum_(0)
    assert N(c).tolist() == [1.0, 3.0, 6.0]
    with pytest.raises(IndexError):
        oar.cumsum(x, 2)
    with pytest.raises(IndexError):
        oar.cummax(x, -3)


def test_diff(dev):
    a = np.array([[1, 4, 9, 16], [2, 3, 5, 7]], np.int64)
    x = T(a, dev)
    assert N(oar.diff(x)).tolist() == np.diff(a).tolist()
    assert N(x.diff(n=2, dim=1)).tolist() == np.diff(a, n=2, axis=1).tolist()
    assert N(oar.diff(x, dim=0)).tolist() == np.diff(a, axis=0).tolist()
    pre, app = T([[0], [0]], dev), T([[20], [10]], dev)
    assert N(oar.diff(x, 1, 1, pre, app)).tolist() == np.diff(a, prepend=0, append=[[20], [10]], axis=1).tolist()
    assert N(oar.diff(T([True, False, False], dev))).tolist() == [True, False]
    assert tuple(oar.diff(x, n=5).shape) == (2, 0)
    with pytest.raises(IndexError):
        oar.diff(x, dim=2)


def test_scan_gradients(dev):
    x = np.array([[0.3, -0.7, 1.2, 0.1], [0.5, 2.0, -1.5, 0.9]])
    fd_check(lambda t: oar.cumsum(t, 1), x, dev)
    fd_check(lambda t: oar.cumprod(t, 1), x, dev)
    fd_check(lambda t: oar.logcumsumexp(t, 1), x, dev)
    fd_check(lambda t: oar.cummax(t, 1).values, x, dev)
    fd_check(lambda t: oar.diff(t, 2, 1), x, dev)


# ---- sort and select ----
def test_sort_argsort_topk_msort(dev):
    torch = import_torch()
    a = np.array([[3.0, 1.0, 2.0, 1.0, np.nan], [0.0, -1.0, 5.0, 5.0, 2.0]], np.float32)
    x, ta = T(a, dev), to_torch(a)
    for kw in [{}, {"dim": 0}, {"descending": True}, {"dim": 1, "stable": True}]:
        got, want = oar.sort(x, **kw), torch.sort(ta, **{"stable": True, **kw})
        close(got.values, from_torch(want.values))
        assert N(got.indices).tolist() == want.indices.tolist(), kw
    assert N(x.argsort(1)).tolist() == torch.argsort(ta, 1).tolist()
    close(oar.msort(x), from_torch(torch.msort(ta)))
    b = RNG.standard_normal((3, 6)).astype(np.float32)
    for k, kw in [(2, {}), (3, {"dim": 0}), (4, {"largest": False})]:
        got, want = oar.topk(T(b, dev), k, **kw), torch.topk(to_torch(b), k, **kw)
        close(got.values, from_torch(want.values))
        assert N(got.indices).tolist() == want.indices.tolist()
    s = oar.sort(T([True, False, True], dev))
    assert s.values.dtype == oar.bool and N(s.values).tolist() == [False, True, True]
    e = oar.sort(T(np.zeros(0, np.float32), dev))
    assert tuple(e.values.shape) == (0,) and e.indices.dtype == oar.int64
    with pytest.raises(IndexError):
        oar.sort(x, 2)
    with pytest.raises(ValueError):
        oar.topk(x, 9)
    fd_check(lambda t: oar.sort(t, 1, descending=True).values, b.astype(np.float64), dev)
    fd_check(lambda t: oar.topk(t, 2).values, b.astype(np.float64), dev)


def test_unique(dev):
    torch = import_torch()
    a = np.array([[3, 1, 2], [1, 3, 3]], np.int64)
    x = T(a, dev)
    assert N(oar.unique(x)).tolist() == [1, 2, 3]
    values, inverse, counts = x.unique(return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(a.tolist()), return_inverse=True, return_counts=True)
    assert N(values).tolist() == want[0].tolist()
    assert N(inverse).tolist() == want[1].tolist() and N(counts).tolist() == want[2].tolist()
    r = np.array([[1, 2], [0, 5], [1, 2], [0, 4]], np.int64)
    got = oar.unique(T(r, dev), dim=0, return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(r.tolist()), dim=0, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert N(g).tolist() == w.tolist()
    assert N(oar.unique(T(r, dev), dim=1)).tolist() == torch.unique(torch.tensor(r.tolist()), dim=1).tolist()
    f = np.array([2.5, -1.0, 2.5, 0.0], np.float32)
    assert N(oar.unique(T(f, dev))).tolist() == np.unique(f).tolist()
    c = np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64)
    got = oar.unique_consecutive(T(c, dev), return_inverse=True, return_counts=True)
    want = torch.unique_consecutive(torch.tensor(c.tolist()), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert N(g).tolist() == w.tolist()
    empty = oar.unique(T(np.zeros(0, np.int64), dev), return_counts=True)
    assert tuple(empty[0].shape) == (0,) and tuple(empty[1].shape) == (0,)
    assert N(oar.unique(T([True, False, True], dev))).tolist() == [False, True]


def test_nonzero_argwhere_masked_select(dev):
    a = np.array([[0, 1.5, 0], [2.0, 0, -1.0]], np.float32)
    x = T(a, dev)
    assert N(oar.nonzero(x)).tolist() == np.argwhere(a).tolist()
    assert [N(t).tolist() for t in x.nonzero(as_tuple=True)] == [t.tolist() for t in np.nonzero(a)]
    assert N(oar.argwhere(x)).tolist() == np.argwhere(a).tolist()
    assert tuple(oar.nonzero(T(np.zeros((2, 3)), dev)).shape) == (0, 2)
    assert tuple(oar.nonzero(T(5.0, dev)).shape) == (1, 0)
    mask = np.array([True, False, True])
    assert N(oar.masked_select(x, T(mask, dev))).tolist() == a[:, mask].reshape(-1).tolist()
    assert N(x.masked_select(x > 0)).tolist() == a[a > 0].tolist()
    assert oar.nonzero(x).device == x.device
    with pytest.raises(oar.DTypeError):
        oar.masked_select(x, T([1, 0, 1], dev))
    fd_check(lambda t: oar.masked_select(t, T(mask, dev)), a.astype(np.float64), dev)


def test_searchsorted_bucketize(dev):
    torch = import_torch()
    seq = np.array([1.0, 3.0, 3.0, 5.0, 7.0], np.float32)
    v = np.array([[0.0, 3.0, 6.0], [7.0, 8.0, 1.0]], np.float32)
    for right in (False, True):
        got = oar.searchsorted(T(seq, dev), T(v, dev), right=right)
        assert N(got).tolist() == torch.searchsorted(to_torch(seq), to_torch(v), right=right).tolist()
        assert N(oar.bucketize(T(v, dev), T(seq, dev), right=right)).tolist() == np.searchsorted(
            seq, v, side="right" if right else "left").tolist()
    rows = np.array([[1, 3, 5], [2, 4, 6]], np.int64)
    vals = np.array([[3, 4], [4, 7]], np.int64)
    got = oar.searchsorted(T(rows, dev), T(vals, dev), side="right")
    assert N(got).tolist() == torch.searchsorted(torch.tensor(rows.tolist()), torch.tensor(vals.tolist()),
                                                 side="right").tolist()
    assert N(oar.searchsorted(T(seq, dev), 3.0)) == 1
    unsorted = np.array([5.0, 1.0, 3.0], np.float32)
    sorter = T(np.argsort(unsorted), dev)
    assert N(oar.searchsorted(T(unsorted, dev), T([2.0, 4.0], dev), sorter=sorter)).tolist() == [1, 2]
    assert oar.searchsorted(T(seq, dev), T(v, dev), out_int32=True).dtype == oar.int32
    with pytest.raises(ValueError):
        oar.searchsorted(T(seq, dev), T(v, dev), side="middle")


def test_histc_bincount(dev):
    torch = import_torch()
    a = np.array([1.0, 2.0, 1.0, 5.0, -1.0, 3.0, np.nan], np.float32)
    assert N(oar.histc(T(a, dev), bins=4, min=0, max=3)).tolist() == [0.0, 2.0, 1.0, 1.0]
    b = a[:6]
    assert N(T(b, dev).histc(5)).tolist() == torch.histc(to_torch(b), 5).tolist()
    c = RNG.uniform(-2, 2, 40).astype(np.float32)
    assert N(oar.histc(T(c, dev), 7, -1, 1)).tolist() == torch.histc(to_torch(c), 7, -1, 1).tolist()
    i = np.array([0, 1, 1, 3, 1], np.int64)
    assert N(oar.bincount(T(i, dev))).tolist() == np.bincount(i).tolist()
    assert N(T(i, dev).bincount(minlength=6)).tolist() == np.bincount(i, minlength=6).tolist()
    w = np.array([0.5, 1.0, 2.0, 0.25, 1.0], np.float32)
    got = oar.bincount(T(i, dev), T(w, dev))
    assert got.dtype == oar.float32
    close(got, np.bincount(i, w))
    assert tuple(oar.bincount(T(np.zeros(0, np.int64), dev)).shape) == (0,)
    with pytest.raises(ValueError):
        oar.bincount(T([-1, 2], dev))
    with pytest.raises(ValueError):
        oar.bincount(T([1.0], dev))
    with pytest.raises(oar.DTypeError):
        oar.histc(T([1, 2], dev))


def test_in_place_forms_and_methods_exist():
    names = ["sign_", "sgn_", "lerp_", "addcmul_", "addcdiv_", "xlogy_", "frac_", "deg2rad_", "rad2deg_", "logit_",
             "sinc_", "heaviside_", "nan_to_num_", "negative_", "absolute_", "bitwise_and_", "bitwise_not_",
             "logical_or_", "not_equal_", "greater_", "clamp_", "clip_"]
    missing = [n for n in names if not hasattr(oar.Tensor, n)]
    assert not missing
    x = oar.tensor([-1.5, 0.25])
    x.sign_()
    assert x.tolist() == [-1.0, 1.0]
    y = oar.tensor([1, 2])
    with pytest.raises(oar.DTypeError):
        y.deg2rad_()  # a float result can't be written into an int tensor
    z = oar.tensor([1.0, np.nan])
    assert z.nan_to_num_(nan=3.0) is z and z.tolist() == [1.0, 3.0]
