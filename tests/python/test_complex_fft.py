"""Complex tensors (oar.ComplexTensor: complex64 / complex128 as pairs of real tensors) and torch.fft (oar.fft),
on every oar device.

- every transform against NumPy (np.fft) on random input at sizes 1, 2, 7, 12, 64, 100, 1000, 4096, 16384 (and
  a Bluestein prime), float64 to 1e-10 and float32 to 1e-4 of the largest output, every norm mode, n shorter and
  longer than the input, other dims, 2-D and n-D forms, fftfreq / fftshift;
- gradients by finite differences (oar.autograd.gradcheck, float64) and against PyTorch 1.13 where it imports;
- LLaMA's rotary embeddings, as Meta's model.py writes them, run under `python -m oar.compat` against PyTorch;
- stft / istft round trips and against PyTorch;
- the complex tensor API (creation, conversion, arithmetic, shape ops, printing, promotion, autograd's
  convention) and the errors for what it does not support.
"""
import json
import pickle
import warnings

import numpy as np
import pytest

import oar
from test_compat import ok, run_compat, run_torch, script, torch_python  # noqa: F401  (torch_python: a fixture)
from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]
SIZES = [1, 2, 7, 12, 64, 100, 1000, 4096, 16384]
NORMS = [None, "backward", "ortho", "forward"]
TOL = {np.float64: 1e-10, np.float32: 1e-4}
RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def N(t):
    """An oar tensor (real or complex) as a NumPy array."""
    return t.detach().cpu().numpy()


def R(a, device, requires_grad=False):
    return oar.tensor(np.array(a), device=device, requires_grad=requires_grad)


def C(a, device):
    return oar.complex(R(a.real, device), R(a.imag, device))


def rand(shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def crand(shape, dtype=np.float64):
    return rand(shape, dtype) + 1j * rand(shape, dtype)


def assert_close(got, ref, tol, what=""):
    g = N(got) if not isinstance(got, np.ndarray) else got
    assert g.shape == ref.shape, f"{what}: shape {g.shape} != {ref.shape}"
    scale = max(float(np.abs(ref).max()) if ref.size else 0.0, 1e-30)
    err = float(np.abs(g - ref).max()) / scale if ref.size else 0.0
    assert err <= tol, f"{what}: relative error {err:.3g} > {tol:g}"


def _swap(norm):
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


# ---- the transforms against NumPy ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", SIZES)
def test_fft_ifft_match_numpy(device, n, dtype):
    a = crand((3, n), dtype)
    x = rand((3, n), dtype)
    z, xr = C(a, device), R(x, device)
    want = oar.complex128 if dtype == np.float64 else oar.complex64
    for norm in NORMS:
        got = oar.fft.fft(z, norm=norm)
        assert got.dtype is want and tuple(got.shape) == (3, n)
        assert_close(got, np.fft.fft(a, norm=norm), TOL[dtype], f"fft n={n} norm={norm}")
        assert_close(oar.fft.ifft(z, norm=norm), np.fft.ifft(a, norm=norm), TOL[dtype], f"ifft n={n} {norm}")
        assert_close(oar.fft.fft(xr, norm=norm), np.fft.fft(x, norm=norm), TOL[dtype], f"fft(real) n={n}")
        assert_close(oar.fft.ifft(xr, norm=norm), np.fft.ifft(x, norm=norm), TOL[dtype], f"ifft(real) n={n}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", SIZES)
def test_rfft_irfft_hfft_ihfft_match_numpy(device, n, dtype):
    x = rand((2, n), dtype)
    half = crand((2, n // 2 + 1), dtype)
    xr, h = R(x, device), C(half, device)
    for norm in NORMS:
        got = oar.fft.rfft(xr, norm=norm)
        assert tuple(got.shape) == (2, n // 2 + 1)
        assert_close(got, np.fft.rfft(x, norm=norm), TOL[dtype], f"rfft n={n} norm={norm}")
        back = oar.fft.irfft(h, n=n, norm=norm)
        assert back.dtype == xr.dtype and not back.is_complex()
        assert_close(back, np.fft.irfft(half, n=n, norm=norm), TOL[dtype], f"irfft n={n} norm={norm}")
        assert_close(oar.fft.hfft(h, n=n, norm=norm), np.fft.hfft(half, n=n, norm=norm), TOL[dtype], f"hfft n={n}")
        assert_close(oar.fft.ihfft(xr, norm=norm), np.fft.ihfft(x, norm=norm), TOL[dtype], f"ihfft n={n}")
    if n > 1:  # irfft's default length 2 * (m - 1)
        spec = oar.fft.rfft(xr)
        assert_close(oar.fft.irfft(spec), np.fft.irfft(np.fft.rfft(x)), TOL[dtype], f"irfft default n={n}")
        if n % 2 == 0:
            assert_close(oar.fft.irfft(spec), x, TOL[dtype] * 10, f"irfft(rfft(x)) n={n}")


@pytest.mark.parametrize("n", [1031, 2062])  # a prime past the direct DFT matrices: Bluestein's algorithm
def test_large_prime_sizes(device, n):
    a = crand((2, n))
    assert_close(oar.fft.fft(C(a, device)), np.fft.fft(a), 1e-10, f"fft n={n}")
    assert_close(oar.fft.ifft(C(a, device), norm="ortho"), np.fft.ifft(a, norm="ortho"), 1e-10, f"ifft n={n}")
    x = rand((2, n), np.float32)
    assert_close(oar.fft.rfft(R(x, device)), np.fft.rfft(x), 1e-4, f"rfft float32 n={n}")
    assert_close(oar.fft.irfft(oar.fft.rfft(R(x, device)), n=n), x, 1e-4, f"irfft float32 n={n}")


@pytest.mark.parametrize("size", [12, 100, 1000])
def test_n_shorter_and_longer_than_the_input(device, size):
    a = crand((3, size))
    x = rand((size, 3))
    for n in sorted({1, size // 2, size - 1, size + 1, 2 * size, 3 * size + 1} - {0}):
        for norm in ("backward", "ortho", "forward"):
            assert_close(oar.fft.fft(C(a, device), n=n, norm=norm), np.fft.fft(a, n=n, norm=norm), 1e-10,
                         f"fft n={n}")
            assert_close(oar.fft.ifft(C(a, device), n=n, dim=1, norm=norm), np.fft.ifft(a, n=n, norm=norm),
                         1e-10, f"ifft n={n}")
            assert_close(oar.fft.rfft(R(x, device), n=n, dim=0, norm=norm), np.fft.rfft(x, n=n, axis=0,
                         norm=norm), 1e-10, f"rfft dim=0 n={n}")
            assert_close(oar.fft.irfft(C(a, device), n=n, norm=norm), np.fft.irfft(a, n=n, norm=norm), 1e-10,
                         f"irfft n={n}")
            assert_close(oar.fft.hfft(C(a, device), n=n, norm=norm), np.fft.hfft(a, n=n, norm=norm), 1e-10,
                         f"hfft n={n}")
            assert_close(oar.fft.ihfft(R(x, device), n=n, dim=-2, norm=norm),
                         np.fft.ihfft(x, n=n, axis=-2, norm=norm), 1e-10, f"ihfft n={n}")


def test_transforms_along_other_dims(device):
    a = crand((4, 6, 5))
    z = C(a, device)
    for dim in (0, 1, -3, -2):
        assert_close(oar.fft.fft(z, dim=dim), np.fft.fft(a, axis=dim), 1e-10, f"fft dim={dim}")
        assert_close(oar.fft.ifft(z, dim=dim, norm="ortho"), np.fft.ifft(a, axis=dim, norm="ortho"), 1e-10)
        assert_close(oar.fft.rfft(R(a.real, device), dim=dim), np.fft.rfft(a.real, axis=dim), 1e-10)
    one = crand(())
    assert_close(oar.fft.fft(C(one.reshape(1), device)), np.fft.fft(one.reshape(1)), 1e-12)


def test_2d_and_nd_transforms_match_numpy(device):
    a = crand((3, 5, 8))
    x = rand((3, 5, 8))
    z, xr = C(a, device), R(x, device)
    cases = [dict(), dict(s=(4, 6)), dict(s=(7, 9)), dict(dim=(0, 2)), dict(s=(6, 3), dim=(2, 0))]
    for kw in cases:
        axes = kw.get("dim", (-2, -1))
        np_kw = dict(s=kw.get("s"), axes=axes)
        for norm in NORMS:
            assert_close(oar.fft.fft2(z, norm=norm, **kw), np.fft.fft2(a, norm=norm, **np_kw), 1e-10, f"fft2 {kw}")
            assert_close(oar.fft.ifft2(z, norm=norm, **kw), np.fft.ifft2(a, norm=norm, **np_kw), 1e-10)
            assert_close(oar.fft.rfft2(xr, norm=norm, **kw), np.fft.rfft2(x, norm=norm, **np_kw), 1e-10)
            assert_close(oar.fft.irfft2(z, norm=norm, **kw), np.fft.irfft2(a, norm=norm, **np_kw), 1e-10)
            # NumPy has no hfft2 / ihfft2: they are irfft2 of the conjugate and the conjugate of rfft2
            assert_close(oar.fft.hfft2(z, norm=norm, **kw), np.fft.irfft2(a.conj(), norm=_swap(norm), **np_kw),
                         1e-10, f"hfft2 {kw}")
            assert_close(oar.fft.ihfft2(xr, norm=norm, **kw),
                         np.fft.rfft2(x, norm=_swap(norm), **np_kw).conj(), 1e-10, f"ihfft2 {kw}")
    nd_cases = [dict(), dict(s=(4, 6)), dict(dim=(0, 2)), dict(dim=1), dict(s=(2, 7, 9)), dict(s=(6, 3), dim=(2, 0))]
    for kw in nd_cases:
        np_kw = dict(s=kw.get("s"), axes=kw.get("dim"))
        if isinstance(np_kw["axes"], int):
            np_kw["axes"] = (np_kw["axes"],)
        if np_kw["axes"] is None and np_kw["s"] is not None:
            np_kw["axes"] = tuple(range(3 - len(np_kw["s"]), 3))
        for norm in NORMS:
            assert_close(oar.fft.fftn(z, norm=norm, **kw), np.fft.fftn(a, norm=norm, **np_kw), 1e-10, f"fftn {kw}")
            assert_close(oar.fft.ifftn(z, norm=norm, **kw), np.fft.ifftn(a, norm=norm, **np_kw), 1e-10)
            assert_close(oar.fft.rfftn(xr, norm=norm, **kw), np.fft.rfftn(x, norm=norm, **np_kw), 1e-10)
            assert_close(oar.fft.irfftn(z, norm=norm, **kw), np.fft.irfftn(a, norm=norm, **np_kw), 1e-10)
            assert_close(oar.fft.hfftn(z, norm=norm, **kw), np.fft.irfftn(a.conj(), norm=_swap(norm), **np_kw),
                         1e-10, f"hfftn {kw}")
            assert_close(oar.fft.ihfftn(xr, norm=norm, **kw),
                         np.fft.rfftn(x, norm=_swap(norm), **np_kw).conj(), 1e-10, f"ihfftn {kw}")


def test_fftn_of_large_images(device):
    a = rand((2, 64, 100), np.float32)
    assert_close(oar.fft.rfft2(R(a, device)), np.fft.rfft2(a), 1e-4, "rfft2 float32")
    spec = np.fft.rfft2(a)
    assert_close(oar.fft.irfft2(C(spec.astype(np.complex64), device), s=(64, 100)), a, 1e-4, "irfft2 float32")


def test_fftfreq_and_shifts(device):
    for n in (1, 2, 7, 12):
        for d in (1.0, 0.5):
            f = oar.fft.fftfreq(n, d, device=device)
            assert f.device == oar.device(device) and f.dtype == oar.float32
            np.testing.assert_allclose(N(f), np.fft.fftfreq(n, d), rtol=1e-6)
            np.testing.assert_allclose(N(oar.fft.rfftfreq(n, d, dtype=oar.float64, device=device)),
                                       np.fft.rfftfreq(n, d), rtol=1e-12)
    x = rand((4, 7))
    a = crand((5, 6))
    for dim in (None, 0, 1, (0, 1), -1):
        np.testing.assert_array_equal(N(oar.fft.fftshift(R(x, device), dim)), np.fft.fftshift(x, axes=dim))
        np.testing.assert_array_equal(N(oar.fft.ifftshift(R(x, device), dim)), np.fft.ifftshift(x, axes=dim))
        np.testing.assert_array_equal(N(oar.fft.fftshift(C(a, device), dim)), np.fft.fftshift(a, axes=dim))
        np.testing.assert_array_equal(N(oar.fft.ifftshift(C(a, device), dim)), np.fft.ifftshift(a, axes=dim))


def test_input_dtypes(device):
    ints = oar.arange(8, device=device)
    assert oar.fft.fft(ints).dtype is oar.complex64
    np.testing.assert_allclose(N(oar.fft.rfft(ints)), np.fft.rfft(np.arange(8)), atol=1e-5)
    assert oar.fft.rfft(R(rand(8), device)).dtype is oar.complex128
    assert oar.fft.rfft(R(rand(8, np.float32), device)).dtype is oar.complex64
    assert oar.fft.irfft(C(crand(5), device)).dtype == oar.float64


def test_argument_errors():
    x = oar.randn(8)
    z = oar.fft.fft(x)
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        oar.fft.fft(x, norm="bogus")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        oar.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        oar.fft.irfft(oar.fft.rfft(oar.randn(1)))  # the default n, 2 * (1 - 1)
    with pytest.raises(RuntimeError, match="real input"):
        oar.fft.rfft(z)
    with pytest.raises(IndexError, match="Dimension out of range"):
        oar.fft.fft(x, dim=1)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        oar.fft.fft(oar.tensor(1.0))  # a 0-d tensor, as torch
    with pytest.raises(RuntimeError, match="unique"):
        oar.fft.fftn(oar.randn(3, 3), dim=(0, 0))
    with pytest.raises(RuntimeError, match="same length"):
        oar.fft.fft2(oar.randn(3, 3), s=(3,))
    out = oar.empty(0, dtype=oar.complex64)  # out= as every out= of oar (test_out_keyword.py): resized, written
    assert oar.fft.fft(x, out=out) is out and oar.equal(out.re, z.re) and oar.equal(out.im, z.im)
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        oar.fft.fft(x, out=oar.empty(8))


# ---- gradients -------------------------------------------------------------------------------------------------

def _gradcheck(fn, *arrays, device):
    inputs = tuple(R(a, device, requires_grad=True) for a in arrays)
    assert oar.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("n", [1, 7, 12, 135])  # 135 = 9 * 15: the mixed-radix path
def test_gradcheck_transforms(device, n):
    w = R(rand(n), device)
    w2 = R(rand(n // 2 + 1), device)

    def power(re, im):  # |fft(z)|^2, weighted: a real loss of a complex intermediate
        return (oar.fft.fft(oar.complex(re, im)).abs() ** 2 * w).sum()

    def power_ortho_inverse(re, im):
        return (oar.fft.ifft(oar.complex(re, im), norm="ortho").abs() ** 2 * w).sum()

    def rfft_real_view(x):  # every output of rfft, through view_as_real
        return oar.view_as_real(oar.fft.rfft(x, norm="forward"))

    def irfft_of(re, im):
        return oar.fft.irfft(oar.complex(re, im), n=n) * w

    def hfft_of(re, im):
        return oar.fft.hfft(oar.complex(re, im), n=n, norm="ortho") * w

    def ihfft_power(x):
        return (oar.fft.ihfft(x).abs() ** 2 * w2).sum()

    m = n // 2 + 1
    _gradcheck(power, rand(n), rand(n), device=device)
    _gradcheck(power_ortho_inverse, rand(n), rand(n), device=device)
    _gradcheck(ihfft_power, rand(n), device=device)
    if n <= 12:  # a Jacobian per output: the small sizes
        _gradcheck(rfft_real_view, rand(n), device=device)
        _gradcheck(irfft_of, rand(m), rand(m), device=device)
        _gradcheck(hfft_of, rand(m), rand(m), device=device)
    else:
        _gradcheck(lambda re, im: irfft_of(re, im).sum(), rand(m), rand(m), device=device)


def test_gradcheck_nd_transforms(device):
    w = R(rand((4, 6)), device)

    def fft2_power(re, im):
        return (oar.fft.fft2(oar.complex(re, im), norm="ortho").abs() ** 2 * w).sum()

    def rfftn_real_view(x):
        return oar.view_as_real(oar.fft.rfftn(x, s=(4, 5)))

    def irfft2_of(re, im):
        return oar.fft.irfft2(oar.complex(re, im), s=(4, 6)) * w

    _gradcheck(fft2_power, rand((4, 6)), rand((4, 6)), device=device)
    _gradcheck(rfftn_real_view, rand((3, 5)), device=device)
    _gradcheck(irfft2_of, rand((4, 4)), rand((4, 4)), device=device)


def _torch_complex(torch, a, requires_grad=False):
    t = torch.complex(torch.tensor(a.real.tolist(), dtype=torch.float64),
                      torch.tensor(a.imag.tolist(), dtype=torch.float64))
    return t.requires_grad_(requires_grad)


def _from_torch(t):
    if t.is_complex():
        r = np.array(t.detach().resolve_conj().real.tolist()), np.array(t.detach().resolve_conj().imag.tolist())
        return r[0] + 1j * r[1]
    return np.array(t.detach().tolist())


@pytest.mark.parametrize("n", [64, 1000, 1031, 4096])
def test_gradients_match_pytorch(device, torch, n):
    a = crand((2, n))
    x = rand((2, n))
    wr, wi = rand((2, n)), rand((2, n // 2 + 1))

    def loss(lib, z, xr, wr_, wi_):
        spec = lib.fft.fft(z, norm="ortho")
        half = lib.fft.rfft(xr)
        back = lib.fft.irfft(half * wi_, n=n)
        return ((spec.abs() ** 2) * wr_).sum() + (lib.view_as_real(half)[..., 1] * wi_).sum() + (back * wr_).sum()

    tz = _torch_complex(torch, a, True)
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    loss(torch, tz, tx, torch.tensor(wr.tolist(), dtype=torch.float64),
         torch.tensor(wi.tolist(), dtype=torch.float64)).backward()
    z = C(a, device).requires_grad_()
    xr = R(x, device, requires_grad=True)
    loss(oar, z, xr, R(wr, device), R(wi, device)).backward()
    assert_close(z.grad, _from_torch(tz.grad), 1e-10, "d/dz")
    assert_close(xr.grad, _from_torch(tx.grad), 1e-10, "d/dx")


def test_nd_results_and_gradients_match_pytorch(device, torch):
    a = crand((3, 6, 10))
    w = rand((3, 6, 18))
    tz = _torch_complex(torch, a, True)
    tw = torch.tensor(w.tolist(), dtype=torch.float64)
    for name, kw in (("hfftn", dict(dim=(1, 2))), ("irfftn", dict(s=(5, 18))), ("hfft2", dict(s=(6, 18)))):
        tout = getattr(torch.fft, name)(tz, **kw)
        out = getattr(oar.fft, name)(C(a, device), **kw)
        assert_close(out, _from_torch(tout), 1e-10, name)
    tz.grad = None
    (torch.fft.irfftn(tz, s=(6, 18), dim=(1, 2)) * tw).sum().backward()
    z = C(a, device).requires_grad_()
    (oar.fft.irfftn(z, s=(6, 18), dim=(1, 2)) * R(w, device)).sum().backward()
    assert_close(z.grad, _from_torch(tz.grad), 1e-10, "irfftn grad")
    tx = torch.tensor(w.tolist(), dtype=torch.float64, requires_grad=True)
    (torch.view_as_real(torch.fft.ihfftn(tx, dim=(0, 2))) ** 2).sum().backward()
    xr = R(w, device, requires_grad=True)
    (oar.view_as_real(oar.fft.ihfftn(xr, dim=(0, 2))) ** 2).sum().backward()
    assert_close(xr.grad, _from_torch(tx.grad), 1e-10, "ihfftn grad")


# ---- LLaMA rotary embeddings ---------------------------------------------------------------------------------

def _rotary_reference(xq, freqs):
    """Meta's apply_rotary_emb in NumPy: pairs (x0, x1) of the last dim rotated by the angles `freqs`."""
    pairs = xq.reshape(*xq.shape[:-1], -1, 2)
    zc = pairs[..., 0] + 1j * pairs[..., 1]
    rot = zc * np.exp(1j * freqs)[None, :, None, :]
    return np.stack([rot.real, rot.imag], -1).reshape(xq.shape)


def test_rotary_embedding_functions_and_gradcheck(device):
    dim, end, start, seqlen = 16, 32, 5, 6
    freqs = 1.0 / (10000.0 ** (oar.arange(0, dim, 2, device=device)[: (dim // 2)].double() / dim))
    t = oar.arange(end, device=device, dtype=oar.float64)
    freqs = oar.outer(t, freqs)
    freqs_cis = oar.polar(oar.ones_like(freqs), freqs)
    assert freqs_cis.dtype is oar.complex128 and oar.is_complex(freqs_cis) and tuple(freqs_cis.shape) == (end, 8)
    fc = freqs_cis[start: start + seqlen]
    xq = rand((2, seqlen, 3, dim))

    def rotate(x):
        x_ = oar.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        shape = [d if i == 1 or i == x_.ndim - 1 else 1 for i, d in enumerate(x_.shape)]
        return oar.view_as_real(x_ * fc.view(*shape)).flatten(3).type_as(x)

    out = rotate(R(xq, device))
    assert out.dtype == oar.float64 and tuple(out.shape) == xq.shape
    ref = _rotary_reference(xq, N(freqs)[start: start + seqlen])
    assert_close(out, ref, 1e-12, "rotary")
    w = R(rand(xq.shape), device)
    _gradcheck(lambda x: (rotate(x) * w).sum(), xq, device=device)
    x = R(xq, device, requires_grad=True)
    (rotate(x) * w).sum().backward()  # a rotation: the gradient is w rotated back
    assert_close(x.grad, _rotary_reference(N(w), -N(freqs)[start: start + seqlen]), 1e-12, "rotary grad")


@pytest.fixture(scope="module")
def rope_runs():
    """rope_runs(device) -> the JSON llama_rope.py prints under `python -m oar.compat --device device`, once."""
    runs = {}

    def run(device):
        if device not in runs:
            out = ok(run_compat(script("llama_rope.py"), "--device", device))
            assert f"parameters on {oar.device(device)}" in out, out
            runs[device] = _rope_result(out)
        return runs[device]
    return run


def _rope_result(out):
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    assert line, out
    return json.loads(line[0][len("RESULT "):])


ROPE_KEYS = ("freqs_cis", "rotated", "out", "grad_x", "grad_wq", "grad_wk")


def test_llama_rotary_program_runs_on_every_device(rope_runs, device):
    """compat_scripts/llama_rope.py, Meta's code unchanged, under oar.compat: the CPU's numbers on every device."""
    ours = rope_runs(device)
    assert ours["is_complex"] and ours["freqs_dtype"] == "torch.complex64"
    cpu = rope_runs(DEVICES[0])
    for key in ROPE_KEYS:
        np.testing.assert_allclose(np.array(ours[key]), np.array(cpu[key]), rtol=1e-4, atol=1e-5, err_msg=key)


def test_llama_rotary_program_matches_pytorch(rope_runs, device, torch_python):
    theirs = _rope_result(ok(run_torch(torch_python, script("llama_rope.py"))))
    ours = rope_runs(device)
    for key in ROPE_KEYS:
        np.testing.assert_allclose(np.array(ours[key]), np.array(theirs[key]), rtol=1e-4, atol=1e-5, err_msg=key)
    assert abs(ours["loss"] - theirs["loss"]) < 1e-5 * abs(theirs["loss"])


# ---- stft / istft ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stft_istft_round_trip(device, dtype):
    x = rand((2, 300), dtype)
    odt = oar.float64 if dtype == np.float64 else oar.float32
    for kw in (dict(n_fft=64, hop_length=16), dict(n_fft=50, hop_length=10, win_length=40),
               dict(n_fft=32, hop_length=8, center=False), dict(n_fft=64, hop_length=16, normalized=True)):
        # hann's first sample is 0: without center padding the first sample has no window, so hamming there
        make = oar.hann_window if kw.get("center", True) else oar.hamming_window
        win = make(kw.get("win_length", kw["n_fft"]), dtype=odt, device=device)
        spec = oar.stft(R(x, device), window=win, return_complex=True, **kw)
        assert spec.dtype is (oar.complex128 if dtype == np.float64 else oar.complex64)
        assert spec.shape[1] == kw["n_fft"] // 2 + 1
        length = 300 if kw.get("center", True) else None
        y = oar.istft(spec, window=win, length=length, **kw)
        n = y.shape[-1]
        if not kw.get("center", True):  # no padding: the signal up to the last whole frame
            assert n == 32 + 8 * ((300 - 32) // 8)
            assert_close(y, x[:, :n], TOL[dtype] * 10, f"round trip {kw}")
        else:
            assert n == 300
            assert_close(y, x, TOL[dtype] * 10, f"round trip {kw}")
    single = oar.stft(R(x[0], device), 64, window=oar.hann_window(64, dtype=odt, device=device), return_complex=True)
    assert single.ndim == 2
    assert_close(oar.istft(single, 64, window=oar.hann_window(64, dtype=odt, device=device), length=300), x[0],
                 TOL[dtype] * 10, "1-D signal")


STFT_CASES = [dict(n_fft=64), dict(n_fft=64, hop_length=16, window="hann"),
              dict(n_fft=64, win_length=40, hop_length=10, window="hann", center=False),
              dict(n_fft=50, hop_length=10, window="hamming", normalized=True, pad_mode="constant"),
              dict(n_fft=32, onesided=False, window="hann"), dict(n_fft=16, hop_length=4, window="blackman"),
              dict(n_fft=16, hop_length=4, return_complex=False, window="hann")]


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
def test_stft_istft_match_pytorch(device, torch, case):
    kw = dict(STFT_CASES[case])
    window = kw.pop("window", None)
    rc = kw.pop("return_complex", True)
    wl = kw.get("win_length", kw["n_fft"])
    x = rand((2, 300))
    tw = getattr(torch, f"{window}_window")(wl, dtype=torch.float64) if window else None
    ow = getattr(oar, f"{window}_window")(wl, dtype=oar.float64, device=device) if window else None
    if ow is not None:
        np.testing.assert_allclose(N(ow), np.array(tw.tolist()), atol=1e-12)
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    ox = R(x, device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tspec = torch.stft(tx, window=tw, return_complex=rc, **kw)
    ospec = oar.stft(ox, window=ow, return_complex=rc, **kw)
    assert_close(ospec, _from_torch(tspec), 1e-10, f"stft {STFT_CASES[case]}")
    weight = rand(tuple(tspec.shape))
    if rc:
        (torch.view_as_real(tspec)[..., 0] * torch.tensor(weight.tolist(), dtype=torch.float64)).sum().backward()
        (oar.view_as_real(ospec)[..., 0] * R(weight, device)).sum().backward()
    else:
        (tspec * torch.tensor(weight.tolist(), dtype=torch.float64)).sum().backward()
        (ospec * R(weight, device)).sum().backward()
    assert_close(ox.grad, _from_torch(tx.grad), 1e-10, "stft gradient")
    if not rc or (tw is None and kw.get("center", True) is False):
        return
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    for length in (None, 290, 320):
        try:
            tref = torch.istft(tspec.detach(), window=tw, length=length, **ikw)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                oar.istft(ospec.detach(), window=ow, length=length, **ikw)
            continue
        spec = ospec.detach().requires_grad_()
        got = oar.istft(spec, window=ow, length=length, **ikw)
        assert_close(got, _from_torch(tref), 1e-10, f"istft length={length}")
        tspec_leaf = tspec.detach().requires_grad_()
        (torch.istft(tspec_leaf, window=tw, length=length, **ikw) ** 2).sum().backward()
        (got ** 2).sum().backward()
        assert_close(spec.grad, _from_torch(tspec_leaf.grad), 1e-9, f"istft gradient length={length}")


def test_stft_gradcheck(device):
    win = oar.hann_window(8, dtype=oar.float64, device=device)
    _gradcheck(lambda x: oar.view_as_real(oar.stft(x, 8, 2, window=win, return_complex=True)), rand(20),
               device=device)
    spec = crand((5, 11))
    _gradcheck(lambda re, im: oar.istft(oar.complex(re, im), 8, 2, window=win), spec.real, spec.imag, device=device)


def test_stft_arguments():
    x = oar.randn(100)
    with pytest.raises(RuntimeError, match="return_complex"):
        oar.stft(x, 16)
    with pytest.raises(RuntimeError, match="n_fft"):
        oar.stft(x, 0, return_complex=True)
    spec = oar.stft(x, 16, 4, return_complex=True)
    assert x.stft(16, 4, return_complex=True).shape == spec.shape
    with pytest.raises(RuntimeError, match="overlap add"):  # a window with zeros at the hop points: NOLA fails
        oar.istft(spec, 16, 16, window=oar.hann_window(16, periodic=False))


# ---- the complex tensor API ------------------------------------------------------------------------------------

def test_arithmetic_matches_numpy(device):
    a, b = crand((3, 4)), crand((4,))
    r, s = rand((3, 4)), rand(())
    za, zb, rr = C(a, device), C(b, device), R(r, device)
    checks = [
        (za + zb, a + b), (za - zb, a - b), (za * zb, a * b), (za / zb, a / b), (-za, -a),
        (za + rr, a + r), (rr + za, r + a), (rr - za, r - a), (za - rr, a - r), (rr * za, r * a), (rr / za, r / a),
        (za * 2, a * 2), (2.5 * za, 2.5 * a), (za + 1j, a + 1j), (1j * za, 1j * a), (za / (1 - 2j), a / (1 - 2j)),
        ((1 + 1j) / za, (1 + 1j) / a), (1 - za, 1 - a), (za * R(s, device), a * s), (rr * 1j, r * 1j),
        (2j + rr, 2j + r), (np.float64(2.0) * za, 2.0 * a), (za * np.complex64(1j), a * 1j),
        (np.complex128(1 + 1j) - za, (1 + 1j) - a), (rr * np.complex64(2j), r * 2j), (oar.add(za, zb), a + b),
        (oar.mul(rr, zb), r * b), (oar.sub(za, 1j, alpha=2), a - 2j),
        (za.exp(), np.exp(a)), (oar.exp(za), np.exp(a)), (za.abs(), np.abs(a)), (oar.abs(za), np.abs(a)),
        (za.angle(), np.angle(a)), (oar.angle(za), np.angle(a)), (za.conj(), a.conj()), (oar.conj(za), a.conj()),
        (za.log(), np.log(a)), (za.sqrt(), np.sqrt(a)), (za ** 2, a ** 2), (za ** 0.5, a ** 0.5),
        (za.sum(), a.sum()), (za.sum(0), a.sum(0)), (oar.sum(za, dim=1, keepdim=True), a.sum(1, keepdims=True)),
        (za.mean(), a.mean()), (oar.mean(za, 0), a.mean(0)), (za.sin(), np.sin(a)), (za.cos(), np.cos(a)),
        (za.reciprocal(), 1 / a), (za.sgn(), a / np.abs(a)), (za.cumsum(1), a.cumsum(1)), (za.prod(1), a.prod(1)),
        (za.var(), a.var(ddof=1)), (za.norm(), np.linalg.norm(a)),
    ]
    for i, (got, want) in enumerate(checks):
        assert_close(got, np.asarray(want), 1e-12, f"check {i}")
    m1, m2 = crand((2, 3, 4)), crand((4, 5))
    assert_close(C(m1, device) @ C(m2, device), m1 @ m2, 1e-12, "@")
    assert_close(oar.matmul(C(m1, device), C(m2, device)), m1 @ m2, 1e-12, "matmul")
    assert_close(C(m1[0], device).mm(C(m2, device)), m1[0] @ m2, 1e-12, "mm")
    assert_close(R(m2.real, device).T @ C(m1[0].T, device), m2.real.T @ m1[0].T, 1e-12, "real @ complex")
    assert_close(oar.einsum("bij,jk->bik", C(m1, device), C(m2, device)), m1 @ m2, 1e-12, "einsum")
    v1, v2 = crand(5), crand(5)
    assert_close(oar.outer(C(v1, device), C(v2, device)), np.outer(v1, v2), 1e-12, "outer")
    assert_close(oar.dot(C(v1, device), C(v2, device)), np.dot(v1, v2), 1e-12, "dot")
    assert_close(oar.vdot(C(v1, device), C(v2, device)), np.vdot(v1, v2), 1e-12, "vdot")
    assert bool((za == za).all()) and not bool((za != za).any()) and za.equal(za) and oar.allclose(za, za + 1e-12)
    z = za.clone()
    z += zb
    z *= 2j
    assert_close(z, (a + b) * 2j, 1e-12, "in place")


def test_shape_ops_and_indexing(device):
    a = crand((2, 3, 4))
    z = C(a, device)
    assert tuple(z.shape) == (2, 3, 4) and z.ndim == 3 and z.dim() == 3 and z.numel() == 24 and len(z) == 2
    checks = [
        (z.reshape(6, 4), a.reshape(6, 4)), (z.view(-1), a.reshape(-1)), (oar.reshape(z, (4, 6)), a.reshape(4, 6)),
        (z.permute(2, 0, 1), a.transpose(2, 0, 1)), (z.transpose(0, 2), a.swapaxes(0, 2)),
        (oar.transpose(z, 1, 2), a.swapaxes(1, 2)), (z.unsqueeze(1), a[:, None]), (z.flatten(1), a.reshape(2, 12)),
        (oar.flatten(z), a.reshape(-1)), (z[1], a[1]), (z[:, 1:, ::2], a[:, 1:, ::2]), (z[..., -1], a[..., -1]),
        (z[0, 2, 3], a[0, 2, 3]), (z[:, oar.tensor([2, 0], device=device)], a[:, [2, 0]]),
        (oar.cat([z, z], 1), np.concatenate([a, a], 1)), (oar.stack([z, z], -1), np.stack([a, a], -1)),
        (oar.cat([z, R(a.real, device)]), np.concatenate([a, a.real])), (z.flip(2), a[:, :, ::-1]),
        (oar.roll(z, 1, 2), np.roll(a, 1, 2)), (z.mT, a.swapaxes(-1, -2)), (z.mH, a.swapaxes(-1, -2).conj()),
        (z.squeeze(), a), (z[:1].squeeze(0), a[0]), (z.expand(3, 2, 3, 4), np.broadcast_to(a, (3, 2, 3, 4))),
        (z.movedim(0, -1), np.moveaxis(a, 0, -1)), (oar.where(R(a.real > 0, device), z, 0),
                                                      np.where(a.real > 0, a, 0)),
    ]
    for i, (got, want) in enumerate(checks):
        assert_close(got, np.asarray(want), 0, f"shape check {i}")
    parts = z.chunk(2, 2)
    assert len(parts) == 2 and all(tuple(p.shape) == (2, 3, 2) for p in parts)
    assert [tuple(p.shape) for p in z.unbind(0)] == [(3, 4), (3, 4)]
    assert [tuple(p.shape) for p in oar.split(z, [1, 2], 1)] == [(2, 1, 4), (2, 2, 4)]
    w = z.clone()
    w[0, 1] = 5 - 1j
    w[1] = R(np.ones((3, 4)), device)
    want = a.copy()
    want[0, 1] = 5 - 1j
    want[1] = 1
    assert_close(w, want, 0, "setitem")
    assert [tuple(p.shape) for p in z] == [(3, 4), (3, 4)]


def test_creation_and_conversion(device):
    z = oar.tensor([1 + 2j, 3 - 4j], device=device)
    assert isinstance(z, oar.ComplexTensor) and z.dtype is oar.complex64 and z.device == oar.device(device)
    assert oar.tensor(2 + 1j).ndim == 0 and oar.tensor(2 + 1j).item() == 2 + 1j
    assert oar.tensor([1, 2j], dtype=oar.complex128).dtype is oar.complex128
    assert oar.tensor(np.array([1 + 2j, 3j])).dtype is oar.complex128  # NumPy's complex128 keeps its precision
    assert oar.tensor([1.0, 2.0], dtype=oar.cfloat).tolist() == [1 + 0j, 2 + 0j]
    assert oar.from_numpy(np.array([1 + 2j], dtype=np.complex64)).dtype is oar.complex64
    assert oar.as_tensor(np.array([1j])).tolist() == [1j]
    for fn, want in ((oar.zeros, 0), (oar.ones, 1), (oar.empty, None)):
        t = fn(2, 3, dtype=oar.complex64, device=device)
        assert isinstance(t, oar.ComplexTensor) and tuple(t.shape) == (2, 3) and t.device == oar.device(device)
        if want is not None:
            assert (N(t) == want).all()
    assert N(oar.full((2,), 1 - 1j, device=device)).tolist() == [1 - 1j, 1 - 1j]
    assert oar.full((2,), 1j).dtype is oar.complex64
    assert N(oar.zeros_like(z)).tolist() == [0j, 0j] and oar.ones_like(z).dtype is oar.complex64
    assert oar.zeros_like(oar.ones(2), dtype=oar.complex128).dtype is oar.complex128
    assert N(oar.full_like(z, 2j)).tolist() == [2j, 2j]
    g = oar.randn(20000, dtype=oar.complex64, device=device)
    assert abs(float((g.abs() ** 2).mean()) - 1.0) < 0.05  # torch: E|z|^2 = 1, each part of variance 1/2
    assert oar.randn_like(z).dtype is oar.complex64 and tuple(oar.rand(3, dtype=oar.cdouble).shape) == (3,)
    c = oar.complex(R(np.array([1.0, 2.0]), device), R(np.array([3.0, -4.0]), device))
    assert c.dtype is oar.complex128 and N(c).tolist() == [1 + 3j, 2 - 4j]
    p = oar.polar(R(np.array([2.0]), device), R(np.array([0.5]), device))
    assert_close(p, 2 * np.exp(0.5j) * np.ones(1), 1e-15)
    # .real / .imag share values with the complex tensor, in both directions
    c.real.mul_(10)
    c.imag[0] = 7.0
    assert N(c).tolist() == [10 + 7j, 20 - 4j]
    x = R(np.array([[1.0, 2.0], [3.0, 4.0]]), device)
    v = oar.view_as_complex(x)
    assert N(v).tolist() == [1 + 2j, 3 + 4j]
    x[0, 1] = 9.0  # view_as_complex's parts are views of x
    assert N(v).tolist() == [1 + 9j, 3 + 4j]
    assert N(oar.view_as_real(v)).tolist() == [[1.0, 9.0], [3.0, 4.0]]
    assert z.to(oar.complex128).dtype is oar.complex128 and z.cdouble().dtype is oar.complex128
    assert z.to("cpu").device == oar.device("cpu") and z.to(device, oar.complex128).dtype is oar.complex128
    assert R(np.array([1.0]), device).to(oar.complex64).dtype is oar.complex64
    assert R(np.array([1.0]), device).type_as(z).dtype is oar.complex64
    arr = z.cpu().numpy()
    assert arr.dtype == np.complex64 and arr.tolist() == [1 + 2j, 3 - 4j] and np.asarray(z).dtype == np.complex64
    assert z.tolist() == [1 + 2j, 3 - 4j] and complex(z[1]) == 3 - 4j
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert N(z.float()).tolist() == [1.0, 3.0]
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.to(oar.float64).dtype == oar.float64
    d = z.detach()
    assert not d.requires_grad and oar.is_tensor(z) and oar.is_complex(z) and not oar.is_complex(x)
    assert not z.is_floating_point() and z.is_complex() and z.element_size() == 8
    back = pickle.loads(pickle.dumps(z.cpu()))
    assert back.dtype is oar.complex64 and back.tolist() == z.tolist()


def test_dtypes():
    assert oar.complex64.is_complex and oar.complex128.is_complex and not oar.float32.is_complex
    assert not oar.complex64.is_floating_point and oar.cfloat is oar.complex64 and oar.cdouble is oar.complex128
    assert repr(oar.complex64) == "oar.complex64" and oar.complex128.itemsize == 16
    assert oar.complex64.to_real() == oar.float32
    assert pickle.loads(pickle.dumps(oar.complex128)) is oar.complex128
    assert oar.promote_types(oar.complex64, oar.float64) is oar.complex128
    assert oar.promote_types(oar.float32, oar.complex64) is oar.complex64
    assert oar.finfo(oar.complex128).eps == oar.finfo(oar.float64).eps


def test_type_promotion_as_pytorch(device):
    z64 = oar.tensor([1 + 2j], device=device)
    z128 = oar.tensor([1 + 2j], dtype=oar.complex128, device=device)
    f64 = R(np.array([2.0]), device)
    f32 = R(np.array([2.0], np.float32), device)
    assert (z64 * f64).dtype is oar.complex128  # a dimensioned float64 tensor: complex128
    assert (z64 * R(np.array(2.0), device)).dtype is oar.complex64  # a 0-d one does not decide
    assert (z128 * f32).dtype is oar.complex128 and (z64 + z128).dtype is oar.complex128
    assert (f64 * 1j).dtype is oar.complex128 and (f32 * 1j).dtype is oar.complex64
    assert (oar.arange(3, device=device) * 1j).dtype is oar.complex64
    assert (z64 * 2.5).dtype is oar.complex64 and (z64 + 1).dtype is oar.complex64


def test_printing_as_pytorch():
    # PyTorch 1.13's output for the same tensors
    assert repr(oar.tensor([1 + 2j, 3 - 4j])) == "tensor([1.+2.j, 3.-4.j])"
    assert repr(oar.tensor([1.5 + 2j, -3.25 - 4e-5j])) == "tensor([ 1.5000+2.0000e+00j, -3.2500-4.0000e-05j])"
    assert repr(oar.tensor([[1 + 2j, 3 - 4j], [0j, 1e6j]], dtype=oar.complex128)) == (
        "tensor([[1.+2.0000e+00j, 3.-4.0000e+00j],\n        [0.+0.0000e+00j, 0.+1.0000e+06j]], dtype=oar.complex128)")
    assert repr(oar.tensor(1 + 2j)) == "tensor(1.+2.j)"
    assert repr(oar.zeros(2, dtype=oar.cfloat)) == "tensor([0.+0.j, 0.+0.j])"
    assert repr(oar.tensor([1 + 2j]).requires_grad_()) == "tensor([1.+2.j], requires_grad=True)"
    assert repr(oar.tensor([float("nan") + 1j, float("inf") - 2j])) == "tensor([nan+1.j, inf-2.j])"
    assert repr(oar.tensor([[1 + 2j, 3 - 4j, 0.5j], [2, -1 - 1j, 1e-3 + 2j]]).conj()) == (
        "tensor([[ 1.0000e+00-2.0000j,  3.0000e+00+4.0000j,  0.0000e+00-0.5000j],\n"
        "        [ 2.0000e+00-0.0000j, -1.0000e+00+1.0000j,  1.0000e-03-2.0000j]])")
    long = repr(oar.tensor([[1 + 1j] * 20] * 3))
    assert long.splitlines()[0] == "tensor([[" + ", ".join(["1.+1.j"] * 10) + ","  # 10 a line, as torch
    assert "..." in repr(oar.zeros(2000, dtype=oar.complex64))
    z = oar.tensor([1 + 2j], requires_grad=True)
    assert repr(z * 2).endswith("grad_fn=<MulBackward0>)")


def test_autograd_follows_pytorchs_convention(device):
    # values from PyTorch 1.13: z.grad = dL/d(real) + 1j * dL/d(imag)
    def grad_of(fn, value=1 + 2j):
        z = oar.tensor([value], device=device).requires_grad_()
        fn(z).sum().backward()
        return z.grad.tolist()[0]
    assert grad_of(lambda z: (z * z).real) == pytest.approx(2 - 4j)
    assert grad_of(lambda z: z.angle()) == pytest.approx(-0.4 + 0.2j)
    assert grad_of(lambda z: z.exp().imag) == pytest.approx(2.4717266720048188 - 1.1312043837568135j)
    assert grad_of(lambda z: z.abs(), 0j) == 0 and grad_of(lambda z: z.angle(), 0j) == 0  # torch's 0 at 0
    z = oar.tensor([1 + 2j, 3 - 1j], device=device).requires_grad_()
    (z * (2 - 1j)).backward(oar.tensor([1 + 0j, 1j], device=device))
    assert z.grad.tolist() == pytest.approx([2 + 1j, -1 + 2j])  # conj(2 - 1j) * gradient, as torch
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * 2).sum().backward()


def test_unsupported_operations_say_so():
    z = oar.tensor([1 + 2j, 3j])
    with pytest.raises(NotImplementedError, match=r"Tensor\.relu is not implemented for complex tensors"):
        z.relu()
    assert not hasattr(z, "relu") and getattr(z, "max", None) is None
    with pytest.raises(NotImplementedError, match="complex"):
        z < 0
    with pytest.raises(TypeError, match="ComplexTensor"):  # a real-only op: oar.ComplexTensor is named
        oar.relu(z)
    with pytest.raises(TypeError, match="ComplexTensor"):
        oar.nn.functional.linear(z, oar.randn(2, 2))
    with pytest.raises(TypeError, match="ComplexTensor"):
        oar.sigmoid(z)
    with pytest.raises(TypeError, match="complex"):
        float(z[0])
    with pytest.raises(RuntimeError, match="only supported for complex"):
        oar.view_as_real(oar.randn(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        oar.view_as_complex(oar.randn(3))
    with pytest.raises(RuntimeError, match="non-complex"):
        oar.imag(oar.randn(2))
    with pytest.raises(NotImplementedError, match="complex32"):
        oar.complex(oar.randn(2).half(), oar.randn(2).half())
    with pytest.raises(NotImplementedError, match="floor division"):
        z // 2


def test_dft_matrices_are_cached_per_size_dtype_and_device(device):
    from oar.fft import _engine
    _engine.clear_cache()
    x = R(rand((2, 4096), np.float32), device)
    oar.fft.rfft(x)
    keys = set(_engine._CACHE)
    assert keys and all(k[-2] == oar.float32 and k[-1] == str(oar.device(device)) for k in keys)
    # 4096 = 64 x 64: nothing of 4096^2 entries is built
    assert max(t.numel() for t in _engine._CACHE.values()) <= 2 * 64 * 2 * 64
    oar.fft.rfft(x)
    assert set(_engine._CACHE) == keys  # the second call builds nothing
    oar.fft.rfft(x.double())
    assert len(_engine._CACHE) > len(keys)
