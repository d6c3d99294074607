"""Smaller PyTorch APIs against NumPy/Python, on every present device: floor division and
remainders (Python's sign rules), div(rounding_mode=), clamp/clip with tensor bounds,
randint(high, size), "{:.2f}".format(t), oar.Generator streams, and the thread count."""
import numpy as np
import pytest

import oar

DEVICES = oar._C.info()["devices"]
A = [-7, -6, -1, 0, 1, 5, 7, 9]
B = [2, -2, 3, -3, 4, -4, 2, -5]
INT_DTYPES = [oar.int8, oar.int32, oar.int64]
FLOAT_DTYPES = [oar.float32, oar.float64]


def N(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES)
def test_floor_division_and_remainder_between_tensors(dtype, device):
    a, b = oar.tensor(A, dtype=dtype, device=device), oar.tensor(B, dtype=dtype, device=device)
    q, r = a // b, a % b
    assert q.dtype == dtype and r.dtype == dtype
    assert q.tolist() == [x // y for x, y in zip(A, B)]  # Python's rule: -7 // 2 == -4
    assert r.tolist() == [x % y for x, y in zip(A, B)]   # the remainder takes the divisor's sign
    assert oar.floor_divide(a, b).tolist() == q.tolist() and oar.remainder(a, b).tolist() == r.tolist()
    assert a.floor_divide(b).tolist() == q.tolist() and a.remainder(b).tolist() == r.tolist()
    assert oar.fmod(a, b).tolist() == [float(np.fmod(x, y)) for x, y in zip(A, B)]


@pytest.mark.parametrize("device", DEVICES)
def test_floor_division_with_python_numbers_both_orders(device):
    a = oar.tensor(A, device=device)
    assert (a // 2).tolist() == [x // 2 for x in A] and (a // 2).dtype == oar.int64
    assert (a % 3).tolist() == [x % 3 for x in A]
    assert (a % -3).tolist() == [x % -3 for x in A]
    nz = oar.tensor([x for x in A if x], device=device)
    assert (7 // nz).tolist() == [7 // x for x in A if x] and (-7 % nz).tolist() == [-7 % x for x in A if x]
    y = a // 2.5  # an integer tensor with a Python float: float32, floored
    assert y.dtype == oar.float32 and y.tolist() == [x // 2.5 for x in A]
    f = oar.tensor([1.0, -1.0, 7.5, -7.5], device=device)
    assert (f // 0.1).tolist() == pytest.approx([1.0 // 0.1, -1.0 // 0.1, 7.5 // 0.1, -7.5 // 0.1])
    assert (f % 2).tolist() == [1.0 % 2, -1.0 % 2, 7.5 % 2, -7.5 % 2]
    assert (5.0 // f).tolist() == [5.0 // v for v in [1.0, -1.0, 7.5, -7.5]]
    z = oar.tensor([1.0, -1.0, 0.0], device=device) // 0.0  # float division by zero as a / b
    assert np.array_equal(N(z), [np.inf, -np.inf, np.nan], equal_nan=True)


def test_inplace_floor_division_and_remainder():
    t = oar.tensor([-7, 7, 9])
    u = t
    t //= 2
    assert t is u and t.tolist() == [-4, 3, 4]
    t %= 3
    assert t is u and t.tolist() == [2, 0, 1]
    with pytest.raises(oar.DTypeError):  # a float result cannot go into an integer tensor
        t //= 1.5


def test_integer_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError):
        oar.tensor([1, 2]) // oar.tensor([1, 0])
    with pytest.raises(ZeroDivisionError):
        oar.tensor([1, 2]) % 0


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_is_exact_at_every_magnitude(device):
    # Hash-style ids past 2**53, where a float64 quotient rounds, and int64's limits.
    lo, hi = -2**63, 2**63 - 1
    A2 = [2**62 + 3, -(2**62 + 3), 2**53 + 1, hi, lo, lo + 1, 123456789123456789, -7]
    B2 = [2, 2, 3, 1000000007, 7, -1, 1000003, 2]
    a, b = oar.tensor(A2, device=device), oar.tensor(B2, device=device)
    assert (a % b).tolist() == [x % y for x, y in zip(A2, B2)]
    assert (a // b).tolist() == [x // y for x, y in zip(A2, B2)]
    trunc = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(A2, B2)]
    assert oar.div(a, b, rounding_mode="trunc").tolist() == trunc
    assert oar.fmod(a, b).tolist() == [x - t * y for x, y, t in zip(A2, B2, trunc)]
    # int64's minimum over -1 wraps to itself, as in PyTorch (no crash)
    m = oar.tensor([lo], device=device)
    assert (m // -1).tolist() == [lo] and (m % -1).tolist() == [0]
    assert (oar.tensor([-128], dtype=oar.int8, device=device) // -1).tolist() == [-128]
    u = oar.tensor([250, 7], dtype=oar.uint8, device=device)
    assert (u // oar.tensor([255, 3], dtype=oar.uint8, device=device)).tolist() == [0, 2]


@pytest.mark.parametrize("device", DEVICES)
def test_div_rounding_modes(device):
    a, b = oar.tensor(A, device=device), oar.tensor(B, device=device)
    np.testing.assert_allclose(N(oar.div(a, b)), np.array(A) / np.array(B), rtol=1e-6)
    assert oar.div(a, b).dtype == oar.float32
    assert oar.div(a, b, rounding_mode="floor").tolist() == [x // y for x, y in zip(A, B)]
    trunc = [int(np.trunc(x / y)) for x, y in zip(A, B)]
    assert oar.div(a, b, rounding_mode="trunc").tolist() == trunc
    assert a.div(b, rounding_mode="trunc").tolist() == trunc and a.div(b, rounding_mode="trunc").dtype == oar.int64
    f, g = a.to(oar.float32), b.to(oar.float32)
    assert oar.div(f, g, rounding_mode="trunc").tolist() == trunc
    assert oar.divide(f, 2, rounding_mode="floor").tolist() == [x // 2 for x in A]
    h = oar.tensor([-7.5, 7.5], dtype=oar.float16, device=device)
    y = oar.div(h, 2, rounding_mode="floor")
    assert y.dtype == oar.float16 and y.tolist() == [-4.0, 3.0]
    with pytest.raises(ValueError):
        oar.div(a, b, rounding_mode="round")


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_with_tensor_bounds(device):
    x = np.array([[-3.0, -1.0, 0.5], [2.0, 4.0, 9.0]], np.float32)
    lo = np.array([-2.0, 0.0, 1.0], np.float32)   # broadcast over rows
    hi = np.array([[0.0], [5.0]], np.float32)     # broadcast over columns
    t, tl, th = (oar.tensor(v, device=device) for v in (x, lo, hi))
    assert np.array_equal(N(oar.clamp(t, tl, th)), np.minimum(np.maximum(x, lo), hi))
    assert np.array_equal(N(oar.clamp(t, min=tl)), np.maximum(x, lo))
    assert np.array_equal(N(t.clamp(max=th)), np.minimum(x, hi))
    assert np.array_equal(N(oar.clip(t, tl, 1.5)), np.minimum(np.maximum(x, lo), 1.5))
    assert np.array_equal(N(t.clip(-1.0, th)), np.minimum(np.maximum(x, -1.0), hi))
    assert np.array_equal(N(t.clamp_min(tl)), np.maximum(x, lo))
    # min > max: every element becomes max, as in PyTorch
    assert np.array_equal(N(oar.clamp(t, oar.full((1,), 3.0, device=device), tl)), np.broadcast_to(lo, x.shape))
    it = oar.tensor([[1, 5, 9]], device=device)
    y = oar.clamp(it, oar.tensor([2, 2, 2], device=device), oar.tensor([4, 4, 4], device=device))
    assert y.dtype == oar.int64 and y.tolist() == [[2, 4, 4]]


@pytest.mark.parametrize("device", DEVICES)
def test_randint_forms(device):
    oar.manual_seed(4)
    r = oar.randint(10, (2000,), device=device)
    assert r.dtype == oar.int64 and tuple(r.shape) == (2000,)
    v = N(r)
    assert v.min() == 0 and v.max() == 9 and set(np.unique(v)) == set(range(10))
    v = N(oar.randint(-5, 5, size=(4000,), dtype=oar.int32, device=device))
    assert v.dtype == np.int32 and v.min() == -5 and v.max() == 4
    counts = np.bincount(v + 5, minlength=10)
    assert counts.min() > 300  # uniform, the negative end included (no truncation toward zero)
    assert oar.randint(3, size=(2, 3)).shape == (2, 3)
    g = oar.Generator().manual_seed(11)
    a = oar.randint(0, 100, (8,), generator=g)
    g.manual_seed(11)
    assert a.tolist() == oar.randint(100, (8,), generator=g).tolist()
    with pytest.raises(TypeError):
        oar.randint(5)


def test_format_one_element_tensor():
    assert "{:.2f}".format(oar.tensor(3.14159)) == "3.14"
    assert f"{oar.tensor([2.5]):.1f}" == "2.5"
    assert f"{oar.tensor(7):03d}" == "007"
    t = oar.tensor([1.0, 2.0])
    assert f"{t}" == str(t) and format(t, ">40").strip() == str(t).strip()


def test_generator_streams():
    g = oar.Generator(device="cpu")
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    a = oar.rand(4, generator=g)
    b = oar.rand(4, generator=g)
    assert not np.array_equal(N(a), N(b))
    g.manual_seed(3)
    assert np.array_equal(N(oar.rand(4, generator=g)), N(a))
    # the same seed draws what the global stream draws after oar.manual_seed
    oar.manual_seed(3)
    assert np.array_equal(N(oar.rand(4)), N(a))
    # a generator leaves the global stream alone
    oar.manual_seed(8)
    want = N(oar.randn(5))
    oar.manual_seed(8)
    oar.randn(100, generator=g)
    assert np.array_equal(N(oar.randn(5)), want)
    # get_state / set_state replay
    state = g.get_state()
    assert state.dtype == oar.uint8
    x = N(oar.randn(6, generator=g))
    g.set_state(state)
    assert np.array_equal(N(oar.randn(6, generator=g)), x)
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 63
    perm = oar.randperm(10, generator=oar.Generator().manual_seed(1))
    assert sorted(perm.tolist()) == list(range(10))
    assert perm.tolist() == oar.randperm(10, generator=oar.Generator().manual_seed(1)).tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_generator_gives_the_same_numbers_on_every_device(device):
    a = oar.rand(6, generator=oar.Generator().manual_seed(5))
    b = oar.rand(6, generator=oar.Generator(device=device).manual_seed(5), device=device)
    np.testing.assert_allclose(N(b), N(a), rtol=1e-6)


def test_num_threads():
    n = oar.get_num_threads()
    assert isinstance(n, int) and n >= 1
    oar.set_num_threads(1)
    assert oar.get_num_threads() == 1 and oar.get_flag("OAR_NUM_THREADS") == "1"
    oar.set_num_threads(n)
    assert oar.get_num_threads() == n
    with pytest.raises(ValueError):
        oar.set_num_threads(0)


def test_in_place_refuses_a_higher_category_result():
    t = oar.tensor([1, 2])
    with pytest.raises(TypeError, match="can't be cast"):
        t += 0.5                 # PyTorch: result type Float can't be cast to Long
    assert t.tolist() == [1, 2]
    t += 1
    assert t.tolist() == [2, 3] and t.dtype == oar.int64
    f = oar.ones(2)
    f += oar.tensor([1, 2])      # int into float is fine
    assert f.tolist() == [2.0, 3.0]


def test_large_integers_round_trip_exactly():
    big = [2**60 + 1, -(2**62) - 3, 2**53 + 1]
    t = oar.tensor(big)
    assert t.dtype == oar.int64 and t.tolist() == big
    assert t[0].item() == big[0] and int(t[1]) == big[1] and [1, 2, 3][oar.tensor(2)] == 3
    with pytest.raises(ValueError, match="does not fit in int64"):
        oar.tensor([2**64])


def test_global_rng_state_round_trips():
    oar.manual_seed(11)
    state = oar.get_rng_state()
    a = oar.rand(5).tolist()
    oar.set_rng_state(state)
    assert oar.rand(5).tolist() == a
    g = oar.default_generator.manual_seed(4)
    x = oar.randn(3, generator=g).tolist()
    oar.manual_seed(4)
    assert oar.randn(3).tolist() == x and oar.default_generator.initial_seed() == 4


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_index_and_random_methods(device):
    y = oar.zeros(5, device=device)
    assert y.index_add_(0, oar.tensor([0, 0, 3], device=device), oar.tensor([1.0, 2.0, 4.0], device=device)) is y
    assert y.tolist() == [3, 0, 0, 4, 0]
    w = oar.zeros(2, 3, device=device)
    w.index_fill_(1, oar.tensor([0, 2], device=device), 7)
    assert w.tolist() == [[7, 0, 7], [7, 0, 7]]
    z = oar.zeros(2, 3, device=device)
    z.scatter_add_(1, oar.tensor([[0, 0, 1], [2, 2, 2]], device=device), oar.ones(2, 3, device=device))
    assert z.tolist() == [[2, 1, 0], [0, 0, 3]]
    u = oar.empty(2000, device=device).uniform_(-2, 3).cpu().numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.15
    oar.manual_seed(1)
    n = oar.empty(3, device=device).normal_(1.0, 0.5)
    oar.manual_seed(1)
    np.testing.assert_allclose(n.cpu().numpy(), (oar.randn(3, device=device) * 0.5 + 1.0).cpu().numpy(), rtol=1e-6)
    x = oar.ones(3, device=device, requires_grad=True)
    h = x * 2
    h.index_add_(0, oar.tensor([1], device=device), x[:1] * 5)
    h.sum().backward()
    assert x.grad.tolist() == [7, 2, 2]
    p = oar.nn.Parameter(oar.empty(3, device=device))
    with pytest.raises(RuntimeError, match="leaf"):
        p.normal_()


def test_new_factories_take_dtype_and_device_from_the_tensor():
    t = oar.randn(2, 3, dtype=oar.float64)
    assert t.new_zeros(2).dtype == oar.float64 and t.new_zeros(2).tolist() == [0, 0]
    assert t.new_ones((2, 2)).shape == (2, 2) and t.new_full((2,), 3).tolist() == [3, 3]
    assert t.new_tensor([1, 2]).dtype == oar.float64 and t.new_empty(3).shape == (3,)
    assert t.new_zeros(2, dtype=oar.int64).dtype == oar.int64 and oar.numel(t) == 6
