"""The torch API pieces in _tensor_random.py, _tensor_conversion.py, _torch_aliases.py and _tensor_stats.py:
random fills and multinomial (moments, repeatability, torch's keyword forms, typed errors), finfo/iinfo,
set_default_dtype, Tensor.to/type/stride/contiguous with torch's arguments and memory formats, the legacy
typed-tensor classes, the aliases, and quantile/cov/corrcoef/histogram/isin/dist/renorm/gcd/... against
PyTorch 1.13 (where installed) and NumPy, on every device."""
import math

import numpy as np
import pytest

import oar
from torch_ref import from_torch, to_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(5)


def N(t):
    return t.detach().cpu().numpy()


@pytest.fixture(autouse=True)
def _default_dtype_back():
    yield
    oar.set_default_dtype(oar.float32)


# ---- random fills ----

def test_fills_have_the_right_moments_and_take_torchs_keywords(device):
    oar.manual_seed(0)
    t = oar.empty(200000, device=device)
    assert t.normal_(mean=2.0, std=0.5) is t
    assert abs(N(t).mean() - 2.0) < 0.01 and abs(N(t).std() - 0.5) < 0.01
    t.uniform_(**{"from": -1.0, "to": 3.0})
    assert N(t).min() >= -1.0 and N(t).max() < 3.0 and abs(N(t).mean() - 1.0) < 0.02
    t.exponential_(lambd=2.0)
    assert N(t).min() >= 0 and abs(N(t).mean() - 0.5) < 0.01
    t.geometric_(0.25)
    assert N(t).min() >= 1 and np.all(N(t) == np.round(N(t))) and abs(N(t).mean() - 4.0) < 0.05
    t.log_normal_(mean=0.5, std=0.25)
    assert abs(np.median(N(t)) - math.exp(0.5)) < 0.02
    t.cauchy_(median=1.0, sigma=2.0)
    q1, q3 = np.percentile(N(t), [25, 75])  # Cauchy quartiles: median -+ sigma
    assert abs(q1 + 1.0) < 0.05 and abs(q3 - 3.0) < 0.05
    b = oar.empty(100000, dtype=oar.int64, device=device).bernoulli_(0.3)
    assert set(np.unique(N(b))) <= {0, 1} and abs(N(b).mean() - 0.3) < 0.01
    p = oar.tensor(np.linspace(0, 1, 5), device=device)
    bp = oar.zeros(20000, 5, device=device).bernoulli_(p)
    np.testing.assert_allclose(N(bp).mean(0), np.linspace(0, 1, 5), atol=0.02)


def test_random_forms(device):
    oar.manual_seed(1)
    r = oar.empty(50000, dtype=oar.int64, device=device).random_(3, 7)
    assert set(np.unique(N(r))) == {3, 4, 5, 6}
    assert set(np.unique(N(oar.empty(5000, dtype=oar.int64, device=device).random_(4)))) == {0, 1, 2, 3}
    assert set(np.unique(N(oar.empty(5000, device=device).random_(**{"from": 1}, to=3)))) == {1.0, 2.0}
    u8 = N(oar.empty(20000, dtype=oar.uint8, device=device).random_())
    assert u8.min() == 0 and u8.max() == 255
    assert set(np.unique(N(oar.empty(100, dtype=oar.bool, device=device).random_()))) == {False, True}


def test_fills_repeat_with_the_seed_and_a_generator(device):
    oar.manual_seed(7)
    a = oar.empty(64, device=device).exponential_()
    oar.manual_seed(7)
    assert np.array_equal(N(a), N(oar.empty(64, device=device).exponential_()))
    g = oar.Generator().manual_seed(3)
    x = oar.empty(32, device=device).normal_(0, 1, generator=g)
    g.manual_seed(3)
    assert np.array_equal(N(x), N(oar.empty(32, device=device).normal_(0, 1, generator=g)))


def test_fill_errors():
    with pytest.raises(ValueError):
        oar.zeros(3).uniform_(2, 1)
    with pytest.raises(ValueError):
        oar.zeros(3).normal_(0, -1)
    with pytest.raises(oar.DTypeError):
        oar.zeros(3, dtype=oar.int64).normal_()
    with pytest.raises(ValueError):
        oar.zeros(3).bernoulli_(1.5)
    with pytest.raises(ValueError):
        oar.zeros(3).geometric_(0)
    with pytest.raises(ValueError):
        oar.zeros(3, dtype=oar.int64).random_(5, 2)
    with pytest.raises(TypeError):
        oar.zeros(3).uniform_(0, 1, bogus=2)


def test_multinomial_frequencies_and_errors(device):
    oar.manual_seed(2)
    p = oar.tensor([0.1, 0.0, 0.6, 0.3], device=device)
    draws = N(oar.multinomial(p, 40000, replacement=True))
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 40000, [0.1, 0, 0.6, 0.3], atol=0.01)
    rows = oar.tensor([[1.0, 1, 0], [0, 2, 1]], device=device)
    s = N(rows.multinomial(2))
    assert s.shape == (2, 2) and set(s[0]) == {0, 1} and set(s[1]) == {1, 2}
    # without replacement, the first pick follows the weights and the second the rest renormalised
    w = oar.tensor([0.5, 0.3, 0.2], device=device)
    pairs = N(oar.multinomial(w.expand(30000, 3), 2))
    first = np.bincount(pairs[:, 0], minlength=3) / 30000
    np.testing.assert_allclose(first, [0.5, 0.3, 0.2], atol=0.015)
    p01 = np.mean((pairs[:, 0] == 0) & (pairs[:, 1] == 1))
    assert abs(p01 - 0.5 * 0.3 / 0.5) < 0.015
    with pytest.raises(ValueError):
        oar.multinomial(oar.tensor([0.0, 0.0], device=device), 1)
    with pytest.raises(ValueError):
        oar.multinomial(oar.tensor([1.0, 0.0], device=device), 2)
    with pytest.raises(ValueError):
        oar.multinomial(oar.tensor([-1.0, 2.0], device=device), 1)
    with pytest.raises(ValueError):
        oar.multinomial(oar.tensor([1.0, float("nan")], device=device), 1)
    with pytest.raises(oar.ShapeError):
        oar.multinomial(oar.ones(2, 2, 2, device=device), 1)


# ---- types and defaults ----

def test_finfo_iinfo_match_torch(torch):
    for o, t in [(oar.float32, torch.float32), (oar.float64, torch.float64), (oar.float16, torch.float16),
                 (oar.bfloat16, torch.bfloat16)]:
        a, b = oar.finfo(o), torch.finfo(t)
        for field in ("bits", "eps", "max", "min", "tiny", "resolution"):
            assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12), (o, field)
    for o, t in [(oar.int8, torch.int8), (oar.uint8, torch.uint8), (oar.int32, torch.int32),
                 (oar.int64, torch.int64)]:
        a, b = oar.iinfo(o), torch.iinfo(t)
        assert (a.bits, a.min, a.max) == (b.bits, b.min, b.max)
    with pytest.raises(TypeError):
        oar.finfo(oar.int32)
    with pytest.raises(TypeError):
        oar.iinfo(oar.float32)


def test_set_default_dtype():
    oar.set_default_dtype(oar.float64)
    assert oar.get_default_dtype() == oar.float64
    for t in (oar.tensor([1.5]), oar.zeros(2), oar.ones(2), oar.rand(2), oar.randn(2), oar.arange(3.0),
              oar.linspace(0, 1, 3), oar.full((2,), 1.5), oar.eye(2)):
        assert t.dtype == oar.float64
    assert oar.tensor([1]).dtype == oar.int64
    assert oar.tensor(np.ones(2, np.float32)).dtype == oar.float32  # an array keeps its own dtype
    assert oar.finfo().bits == 64
    # torch.Tensor(...) is the default dtype's tensor; the legacy classes keep their own dtype
    assert oar.Tensor([1, 2]).dtype == oar.float64 and oar.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert oar.Tensor(2, 3).dtype == oar.float64 and tuple(oar.Tensor(2, 3).shape) == (2, 3)
    assert oar.Tensor().dtype == oar.float64 and oar.FloatTensor([1]).dtype == oar.float32
    # an integer tensor with a Python float computes in the default dtype, both orders
    i = oar.arange(3)
    assert (i * 0.5).dtype == oar.float64 and (1.5 + i).tolist() == [1.5, 2.5, 3.5] and (1.5 + i).dtype == oar.float64
    assert (i * 2).dtype == oar.int64 and (oar.tensor([True]) * 1.5).dtype == oar.float64
    # ops that need floating point turn integers into the default dtype, as torch's do
    assert (i / 2).dtype == oar.float64 and (i / i).dtype == oar.float64 and i.sqrt().dtype == oar.float64
    assert (i / 3).tolist() == [0.0, 1 / 3, 2 / 3] and i.exp().dtype == oar.float64
    nn = oar.nn
    for module in (nn.Linear(2, 3), nn.Conv2d(1, 2, 3), nn.LayerNorm(4), nn.BatchNorm2d(2), nn.Embedding(5, 2),
                   nn.LSTM(2, 3), nn.MultiheadAttention(4, 2), nn.PReLU()):
        assert {p.dtype for p in module.parameters()} == {oar.float64}, type(module).__name__
    out = nn.Linear(2, 3)(oar.tensor([[1.0, 2.0]]))
    assert out.dtype == oar.float64
    oar.set_default_dtype(oar.float32)
    assert nn.Linear(2, 3).weight.dtype == oar.float32
    assert oar.tensor([1.5]).dtype == oar.float32 and oar.Tensor([1.5]).dtype == oar.float32
    assert (oar.arange(3) * 0.5).dtype == oar.float32
    with pytest.raises(TypeError):
        oar.set_default_dtype(oar.int64)


def test_to_type_and_legacy_classes(device):
    x = oar.ones(2, 3, device=device)
    assert x.to(device, non_blocking=True).device == x.device
    assert x.to(oar.float64, copy=True).dtype == oar.float64
    same = x.to(x.device)
    assert same is x
    copied = x.to(x.device, copy=True)
    assert copied is not x and np.array_equal(N(copied), N(x))
    assert x.to(device=device, dtype=oar.float16, non_blocking=False).dtype == oar.float16
    assert x.to(oar.zeros(1, dtype=oar.int32)).dtype == oar.int32
    assert x.to(oar.float64, False, True).dtype == oar.float64
    kind = x.device.type
    assert x.type() == ("torch.FloatTensor" if kind == "cpu" else f"torch.{kind}.FloatTensor")
    assert x.type(oar.float64).dtype == oar.float64
    assert x.type("torch.LongTensor").dtype == oar.int64
    assert x.type(oar.IntTensor).dtype == oar.int32
    assert x.byte().dtype == oar.uint8 and x.char().dtype == oar.int8
    with pytest.raises(oar.DTypeError):
        x.short()
    assert x.is_cpu == (kind == "cpu") and not x.is_cuda and not x.is_sparse and not x.is_complex()
    assert x.get_device() == (-1 if kind == "cpu" else x.device.index)
    assert x.ndimension() == 2 and x.nelement() == 6 and x.nbytes == 24 and x.itemsize == 4
    assert x.stride(0) == 3 and x.stride(-1) == 1 and x.stride() == (3, 1)
    assert x.is_signed() and not x.byte().is_signed()


def test_legacy_classes():
    assert oar.LongTensor([1, 2]).dtype == oar.int64
    assert tuple(oar.FloatTensor(2, 3).shape) == (2, 3)
    assert oar.DoubleTensor([1.5]).dtype == oar.float64
    assert isinstance(oar.zeros(1), oar.FloatTensor) and not isinstance(oar.zeros(1), oar.LongTensor)
    assert oar.ByteTensor(oar.ones(2)).dtype == oar.uint8


def test_channels_last(device):
    x = oar.tensor(RNG.standard_normal((2, 3, 4, 5)).astype(np.float32), device=device)
    y = x.contiguous(memory_format=oar.channels_last)
    assert y.stride() == (60, 1, 15, 3)
    assert y.is_contiguous(memory_format=oar.channels_last) and not y.is_contiguous()
    assert np.array_equal(N(y), N(x))
    z = x.to(memory_format=oar.channels_last)
    assert z.stride() == (60, 1, 15, 3)
    assert y.contiguous().is_contiguous()
    w = oar.nn.functional.conv2d(y, oar.ones(2, 3, 3, 3, device=device))
    np.testing.assert_allclose(N(w), N(oar.nn.functional.conv2d(x, oar.ones(2, 3, 3, 3, device=device))), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(RuntimeError):
        oar.ones(2, 3, device=device).contiguous(memory_format=oar.channels_last)


# ---- aliases and small functions ----

def test_aliases_and_predicates(device):
    x = oar.tensor([0.5, -0.25], device=device)
    np.testing.assert_allclose(N(oar.arccos(x)), np.arccos([0.5, -0.25]), rtol=1e-6)
    np.testing.assert_allclose(N(x.arctan2(x + 1)), np.arctan2([0.5, -0.25], [1.5, 0.75]), rtol=1e-6)
    np.testing.assert_allclose(N(oar.multiply(x, 3)), [1.5, -0.75])
    np.testing.assert_allclose(N(oar.subtract(x, x, alpha=2)), [-0.5, 0.25])
    y = x.clone()
    y.arcsin_()
    np.testing.assert_allclose(N(y), np.arcsin([0.5, -0.25]), rtol=1e-6)
    h = x.clone()
    h.hypot_(oar.ones(2, device=device))
    np.testing.assert_allclose(N(h), np.hypot([0.5, -0.25], 1), rtol=1e-6)
    assert oar.pi == math.pi and math.isinf(oar.inf) and math.isnan(oar.nan)
    assert oar.is_floating_point(x) and not oar.is_complex(x) and oar.is_nonzero(oar.tensor([2]))
    assert oar.is_same_size(x, oar.zeros(2))
    e = oar.empty_like(x, dtype=oar.int32)
    assert e.dtype == oar.int32 and tuple(e.shape) == (2,) and e.device == x.device
    assert oar.clone(x) is not x and oar.detach(x).requires_grad is False
    assert oar.zero_(x.clone()).abs().sum().item() == 0
    assert 0.5 in x and 7 not in x
    assert [t.item() for t in x] == [0.5, -0.25]
    with pytest.raises(TypeError):
        iter(oar.tensor(1.0))
    assert np.array_equal(N(+x), N(x))
    p = x.clone()
    p **= 2
    np.testing.assert_allclose(N(p), [0.25, 0.0625])
    m = oar.ones(2, 3, 4, device=device)
    assert tuple(m.bmm(oar.ones(2, 4, 5, device=device)).shape) == (2, 3, 5)
    assert tuple(m.sum_to_size(3, 1).shape) == (3, 1) and N(m.sum_to_size(3, 1))[0, 0] == 8
    assert [tuple(t.shape) for t in m.split_with_sizes([1, 3], dim=2)] == [(2, 3, 1), (2, 3, 3)]
    assert m.new([1, 2]).dtype == m.dtype and tuple(m.new(2, 2).shape) == (2, 2)
    assert oar.conj(x) is x and oar.real(x) is x
    c = oar.conv1d(oar.ones(1, 2, 5, device=device), oar.ones(3, 2, 2, device=device))
    np.testing.assert_allclose(N(c), np.full((1, 3, 4), 4.0))
    np.testing.assert_allclose(N(oar.selu_(oar.tensor([-1.0, 1.0], device=device))),
                               N(oar.nn.functional.selu(oar.tensor([-1.0, 1.0]))), rtol=1e-6)


# ---- statistics against torch ----

def _both(a, device, torch, dtype=np.float64):
    a = np.asarray(a, dtype=dtype)
    return oar.tensor(a, device=device), to_torch(a)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantiles_match_torch(device, torch, interpolation):
    x = RNG.standard_normal((4, 7))
    x[1, 3] = np.nan
    ox, tx = _both(x, device, torch)
    q = [0.1, 0.5, 0.75]
    got = oar.quantile(ox, oar.tensor(q, dtype=oar.float64, device=device), dim=1, keepdim=True,
                       interpolation=interpolation)
    want = torch.quantile(tx, torch.tensor(q, dtype=torch.float64), dim=1, keepdim=True, interpolation=interpolation)
    np.testing.assert_allclose(N(got), from_torch(want), rtol=1e-12, equal_nan=True)
    got = oar.nanquantile(ox, 0.3, dim=0, interpolation=interpolation)
    want = torch.nanquantile(tx, 0.3, dim=0, interpolation=interpolation)
    np.testing.assert_allclose(N(got), from_torch(want), rtol=1e-12, equal_nan=True)
    got = oar.nanquantile(ox, oar.tensor([0.2, 0.9], dtype=oar.float64, device=device), keepdim=True,
                          interpolation=interpolation)
    want = torch.nanquantile(tx, torch.tensor([0.2, 0.9], dtype=torch.float64), keepdim=True,
                             interpolation=interpolation)
    np.testing.assert_allclose(N(got), from_torch(want), rtol=1e-12)
    np.testing.assert_allclose(N(ox[0].quantile(0.4)), np.quantile(x[0], 0.4), rtol=1e-12)


def test_quantile_gradient_and_errors(device, torch):
    u = RNG.standard_normal((3, 10))
    w = oar.tensor(u, device=device, requires_grad=True)
    oar.quantile(w, 0.4, dim=1).sum().backward()
    tw = to_torch(u).requires_grad_()
    torch.quantile(tw, 0.4, dim=1).sum().backward()
    np.testing.assert_allclose(N(w.grad), from_torch(tw.grad), rtol=1e-12)
    with pytest.raises(ValueError):
        oar.quantile(w, 1.5)
    with pytest.raises(oar.DTypeError):
        oar.quantile(oar.tensor([1, 2]), 0.5)
    with pytest.raises(ValueError):
        oar.quantile(w, 0.5, interpolation="cubic")


def test_cov_corrcoef_histogram_match_torch(device, torch):
    y = RNG.standard_normal((3, 10))
    fw, aw = RNG.integers(1, 4, 10), RNG.random(10)
    oy, ty = _both(y, device, torch)
    np.testing.assert_allclose(N(oar.cov(oy)), np.cov(y), rtol=1e-12)
    got = oar.cov(oy, correction=0, fweights=oar.tensor(fw, device=device), aweights=oar.tensor(aw, device=device))
    want = torch.cov(ty, correction=0, fweights=torch.tensor(fw.tolist()), aweights=to_torch(aw))
    np.testing.assert_allclose(N(got), from_torch(want), rtol=1e-12)
    np.testing.assert_allclose(N(oar.cov(oy, aweights=oar.tensor(aw, device=device))),
                               np.cov(y, aweights=aw), rtol=1e-12)
    np.testing.assert_allclose(N(oar.cov(oy[0])), np.cov(y[0]), rtol=1e-12)
    np.testing.assert_allclose(N(oar.corrcoef(oy)), np.corrcoef(y), rtol=1e-12)
    for kw in (dict(bins=5), dict(bins=4, range=(-1.0, 1.0)), dict(bins=6, density=True)):
        h, edges = oar.histogram(oy, **kw)
        th, tedges = torch.histogram(ty, **kw)
        np.testing.assert_allclose(N(h), from_torch(th), rtol=1e-12)
        np.testing.assert_allclose(N(edges), from_torch(tedges), rtol=1e-12)
    h, _ = oar.histogram(oy, oar.tensor([-3.0, 0.0, 0.5, 3.0], dtype=oar.float64, device=device),
                         weight=oy.abs())
    nh, _ = np.histogram(y, [-3.0, 0.0, 0.5, 3.0], weights=np.abs(y))
    np.testing.assert_allclose(N(h), nh, rtol=1e-12)


def test_isin_dist_renorm_logspace(device, torch):
    e, t = RNG.integers(0, 10, (3, 4)), RNG.integers(0, 10, 5)
    oe, ot = oar.tensor(e, device=device), oar.tensor(t, device=device)
    assert np.array_equal(N(oar.isin(oe, ot)), np.isin(e, t))
    assert np.array_equal(N(oar.isin(oe, ot, invert=True)), ~np.isin(e, t))
    assert np.array_equal(N(oar.isin(oe, 3)), e == 3)
    assert not N(oar.isin(oe, oar.tensor([], dtype=oar.int64, device=device))).any()
    y = RNG.standard_normal((3, 10))
    oy, ty = _both(y, device, torch)
    np.testing.assert_allclose(N(oar.dist(oy[0], oy[1], 3)), np.sum(np.abs(y[0] - y[1]) ** 3) ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(N(oar.renorm(oy, 2, 0, 2.0)), from_torch(torch.renorm(ty, 2, 0, 2.0)), rtol=1e-6)
    np.testing.assert_allclose(N(oar.logspace(-2, 2, 9, device=device)), np.logspace(-2, 2, 9), rtol=1e-6)
    np.testing.assert_allclose(N(oar.logspace(0, 3, 4, base=2.0, device=device)), [1, 2, 4, 8])
    np.testing.assert_allclose(N(oar.logaddexp2(oy[0], oy[1])), np.logaddexp2(y[0], y[1]), rtol=1e-12)
    np.testing.assert_allclose(N(oar.angle(oy)), np.angle(y), rtol=1e-12)


def test_gcd_lcm_ldexp(device):
    a, b = RNG.integers(-50, 50, 30), RNG.integers(-50, 50, 30)
    a[0] = b[0] = 0
    oa, ob = oar.tensor(a, device=device), oar.tensor(b, device=device)
    assert np.array_equal(N(oar.gcd(oa, ob)), np.gcd(a, b))
    assert np.array_equal(N(oar.lcm(oa, ob)), np.lcm(a, b))
    assert np.array_equal(N(oa.gcd(oar.tensor(6, device=device))), np.gcd(a, 6))
    with pytest.raises(oar.DTypeError):
        oar.gcd(oar.ones(2), oar.ones(2))
    x = RNG.standard_normal(5)
    e = np.array([1, -2, 0, 3, 5])
    np.testing.assert_allclose(N(oar.ldexp(oar.tensor(x, device=device), oar.tensor(e, device=device))),
                               np.ldexp(x, e), rtol=1e-12)


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True), ((3, 5), True),
                                        ((4, 4, 4), False)])
def test_fill_diagonal_unfold_match_torch(device, torch, shape, wrap):
    z = oar.zeros(*shape, device=device)
    assert z.fill_diagonal_(2.5, wrap=wrap) is z
    want = torch.zeros(*shape).fill_diagonal_(2.5, wrap=wrap)
    assert np.array_equal(N(z), from_torch(want))
    u = RNG.standard_normal((3, 10))
    for dim, size, step in ((1, 4, 3), (0, 2, 1), (-1, 10, 1), (1, 3, 5)):
        got = oar.tensor(u, device=device).unfold(dim, size, step)
        assert np.array_equal(N(got), from_torch(to_torch(u).unfold(dim, size, step)))
    g = oar.tensor(u, device=device, requires_grad=True)
    g.unfold(1, 4, 3).sum().backward()
    tg = to_torch(u).requires_grad_()
    tg.unfold(1, 4, 3).sum().backward()
    assert np.array_equal(N(g.grad), from_torch(tg.grad))
    with pytest.raises(oar.ShapeError):
        oar.zeros(3, device=device).unfold(0, 5, 1)


def test_script_compile_assert_asarray_frombuffer():
    m = oar.nn.Linear(2, 2)
    assert oar.compile(m) is m and oar.jit.script(m) is m and not oar.jit.is_scripting()

    @oar.compile(mode="max-autotune")
    def double(x):
        return x * 2
    assert double(oar.ones(1)).item() == 2

    @oar.jit.ignore
    def skipped(x):
        return x + 1
    assert skipped(1) == 2 and oar.jit.annotate(list, [3]) == [3]
    oar._assert(oar.tensor(True), "fine")
    with pytest.raises(AssertionError, match="boom"):
        oar._assert(False, "boom")
    oar.set_float32_matmul_precision("high")
    assert oar.get_float32_matmul_precision() == "high"
    oar.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        oar.set_float32_matmul_precision("fast")
    t = oar.ones(2)
    assert oar.asarray(t) is t and oar.asarray(t, copy=True) is not t
    assert oar.asarray([1.5, 2]).dtype == oar.float32 and oar.asarray(t, dtype=oar.float64).dtype == oar.float64
    with pytest.raises(ValueError):
        oar.asarray(t, dtype=oar.float64, copy=False)
    raw = np.array([1, -2, 3], dtype="<i4").tobytes()
    assert oar.frombuffer(raw, dtype=oar.int32).tolist() == [1, -2, 3]
    assert oar.frombuffer(raw, dtype=oar.int32, count=1, offset=4).tolist() == [-2]


def test_load_state_dict_result_prints_as_torchs():
    m = oar.nn.Linear(2, 2)
    result = m.load_state_dict(m.state_dict())
    assert repr(result) == "<All keys matched successfully>" and str(result) == repr(result)
    assert result.missing_keys == [] and result.unexpected_keys == [] and tuple(result) == ([], [])
    partial = m.load_state_dict({"weight": m.weight.detach()}, strict=False)
    assert repr(partial) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"  # torch's class name


def test_review_edge_cases(device):
    x = oar.tensor([1.0, 2.0], device=device)
    assert x.to(x.device, dtype=oar.float64).dtype == oar.float64
    assert x.to(str(x.device), dtype=oar.float64).dtype == oar.float64
    big = oar.zeros(20000, dtype=oar.int64, device=device).random_()
    odd = N(big) % 2
    assert 0.45 < odd.mean() < 0.55 and N(big).min() >= 0  # all 63 bits random, not float64-rounded
    wide = N(oar.randint(-2 ** 62, 2 ** 62, (20000,), device=device))
    assert 0.45 < (wide % 2).mean() < 0.55 and 0.45 < (wide < 0).mean() < 0.55
    assert tuple(x.new(oar.Size([2, 3])).shape) == (2, 3) and tuple(oar.FloatTensor(oar.Size([2, 3])).shape) == (2, 3)
    assert tuple(oar.FloatTensor().shape) == (0,)
    m = oar.tensor([[1.0, 2, 3], [4, 5, 7]], device=device)
    assert tuple(oar.quantile(m, oar.tensor(0.5, device=device), dim=1).shape) == (2,)
    assert tuple(oar.nanquantile(m, oar.tensor(0.5, device=device), dim=1, keepdim=True).shape) == (2, 1)
    assert tuple(oar.tensor(3.0, device=device).quantile(0.5, dim=0, keepdim=True).shape) == ()
    assert tuple(oar.tensor(3.0, device=device).unfold(0, 1, 1).shape) == (1,)
    with pytest.raises(TypeError):
        m.contiguous(memory_format="channels_last")
    with pytest.raises(TypeError):
        m.to(memory_format=5)
    with pytest.raises(oar.ShapeError):
        oar.renorm(oar.ones(3, device=device), 2, 0, 1.0)
    with pytest.raises(oar.DTypeError):
        oar.cov(m, fweights=oar.tensor([1.0, 2.0, 1.0], device=device))
    with pytest.raises(AssertionError, match="types do not match"):
        oar.testing.assert_close(1, 1.0)
    oar.testing.assert_allclose(oar.tensor([1.0], device=device), oar.tensor([1.00005], device=device))
    F = oar.nn.functional
    got = F.interpolate(oar.arange(7.0, device=device).reshape(1, 1, 7), scale_factor=41.0, mode="nearest")
    assert N(got)[0, 0, [41, 82, 164]].tolist() == [0.0, 1.0, 3.0]  # PyTorch's float32 index map
    with pytest.raises(oar.ShapeError):
        F.interpolate(oar.zeros(1, 1, 0, device=device), size=3)


def test_linear_with_zero_features_trains(device):
    """nn.Linear(3, 0) and nn.Linear(0, 3) (AdaptiveLogSoftmax's empty clusters): forward and backward."""
    x = oar.ones(2, 3, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="zero-element"):  # as torch's init warns
        empty_out = oar.nn.Linear(3, 0).to(device)
    y = empty_out(x)
    assert tuple(y.shape) == (2, 0)
    (y.sum() + x.sum()).backward()
    assert np.array_equal(N(x.grad), np.ones((2, 3))) and tuple(empty_out.weight.grad.shape) == (0, 3)
    with pytest.warns(UserWarning, match="zero-element"):
        empty_in = oar.nn.Linear(0, 3).to(device)
    z = oar.zeros(4, 0, device=device, requires_grad=True)
    out = empty_in(z)
    np.testing.assert_allclose(N(out), np.broadcast_to(N(empty_in.bias), (4, 3)))
    out.sum().backward()
    assert np.array_equal(N(empty_in.bias.grad), [4.0, 4.0, 4.0]) and tuple(z.grad.shape) == (4, 0)


def test_checkpoint_gives_the_plain_gradients(device):
    from oar.utils.checkpoint import checkpoint, checkpoint_sequential
    oar.manual_seed(4)
    m = oar.nn.Sequential(oar.nn.Linear(2, 3), oar.nn.Tanh(), oar.nn.Linear(3, 1)).to(device)
    x = oar.tensor(RNG.standard_normal((4, 2)), dtype=oar.float32, device=device)
    grads = []
    for run in (lambda: m(x), lambda: checkpoint(m, x, use_reentrant=False),
                lambda: checkpoint_sequential(m, 2, x, use_reentrant=False)):
        m.zero_grad()
        run().sum().backward()
        grads.append([N(p.grad).copy() for p in m.parameters()])
    for other in grads[1:]:
        for a, b in zip(grads[0], other):
            assert np.array_equal(a, b)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(m, x)


def test_inplace_shape_methods(device):
    z = oar.arange(6.0, device=device).reshape(2, 3)
    assert z.unsqueeze_(0) is z and tuple(z.shape) == (1, 2, 3)
    assert tuple(z.squeeze_(0).shape) == (2, 3)
    assert tuple(z.t_().shape) == (3, 2) and N(z).tolist() == [[0, 3], [1, 4], [2, 5]]
    assert tuple(z.transpose_(0, 1).shape) == (2, 3) and tuple(z.swapaxes_(0, 1).shape) == (3, 2)
    z.swapdims_(0, 1)
    assert N(z.resize_(2, 2)).tolist() == [[0, 1], [2, 3]]
    assert N(z.resize_(5)).tolist() == [0, 1, 2, 3, 0]
    assert tuple(oar.zeros(3, device=device).resize_as_(oar.zeros(1, 2)).shape) == (1, 2)
    w = oar.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w.unsqueeze_(0)
    with oar.no_grad():
        w.unsqueeze_(0)
    assert tuple(w.shape) == (1, 3)
    assert w.detach_() is w and not w.requires_grad
    computed = oar.ones(2, device=device, requires_grad=True) * 2
    assert computed.detach_() is computed and computed.grad_fn is None and not computed.requires_grad


# ---- dtype= of reductions and softmax, == None, the CPU device's name ----

def test_dtype_argument_casts_before_the_op(device):
    x = oar.tensor([[100, 27, 3], [-128, 127, 5]], dtype=oar.int8, device=device)
    a = np.array([[100, 27, 3], [-128, 127, 5]], np.int64)
    # cast first: the int8 values sum and multiply in int64 / float64 without wrapping
    assert x.sum(dtype=oar.int64).item() == a.sum() and oar.sum(x, 1, dtype=oar.int64).tolist() == a.sum(1).tolist()
    assert x.prod(1, dtype=oar.int64).tolist() == a.prod(1).tolist()
    m = oar.mean(x, 1, dtype=oar.float64)
    assert m.dtype == oar.float64 and np.allclose(N(m), a.mean(1))
    assert x.mean(dtype=oar.float32).item() == pytest.approx(a.mean())
    f = oar.tensor(RNG.standard_normal((3, 4)).astype(np.float32), device=device)
    for fn, ref in ((oar.softmax, lambda v: np.exp(v) / np.exp(v).sum(1, keepdims=True)),
                    (oar.log_softmax, lambda v: v - np.log(np.exp(v).sum(1, keepdims=True)))):
        y = fn(f, 1, dtype=oar.float64)
        assert y.dtype == oar.float64
        np.testing.assert_allclose(N(y), ref(N(f).astype(np.float64)), rtol=1e-12)
    assert f.softmax(-1, dtype=oar.float64).dtype == oar.float64 and f.log_softmax(dim=0, dtype=oar.float64).dtype == oar.float64


def test_comparing_with_none_and_the_cpu_device_name():
    t = oar.ones(2)
    assert (t == None) is False and (t != None) is True  # noqa: E711 (what scripts write)
    assert str(t.device) == "cpu" and repr(t.device) == "device(type='cpu')"
    assert str(oar.device("cpu:0")) == "cpu" and oar.device("cpu") == t.device and t.device == "cpu"
    for name in DEVICES:
        if not name.startswith("cpu"):
            assert str(oar.device(name)) == name and "index=" in repr(oar.device(name))
