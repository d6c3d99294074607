"""oar.fft: torch.fft's discrete Fourier transforms, on oar's frontend complex tensors.

fft, ifft, rfft, irfft, hfft, ihfft and their 2-D and n-D forms (fft2, ifft2, rfft2, irfft2, hfft2, ihfft2,
fftn, ifftn, rfftn, irfftn, hfftn, ihfftn) with torch's n / s, dim and norm ("backward", "ortho", "forward")
arguments; fftfreq, rfftfreq, fftshift, ifftshift. Also torch.stft / torch.istft and the window functions
(oar.fft._spectral).

The transforms are composed of real oar ops (oar.fft._engine: matmuls with cached DFT matrices, a mixed-radix
split for composite sizes, Bluestein for large primes), so they run on every oar device and autograd
differentiates them. Complex results are oar.ComplexTensor (complex64 for float32 input, complex128 for
float64); integer input is taken as the default float dtype, float16 / bfloat16 as float32 (oar has no
complex32).
"""
import math
import numbers

from .. import _C
from .._C import Tensor
from .._complex._tensor import ComplexTensor
from . import _engine

_D = _C.dtype

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _scale(norm, n, inverse):
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm!r} (expected 'backward', 'ortho' or 'forward')")
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm in (None, "backward")) == inverse:
        return 1.0 / n
    return 1.0


def _swap(norm):
    """The norm of the transform an h-transform is computed with (hfft's 'backward' is irfft's 'forward')."""
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm!r} (expected 'backward', 'ortho' or 'forward')")
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _float(x, name):
    """x as a complex tensor or a real floating tensor the transforms compute in."""
    if isinstance(x, ComplexTensor):
        return x
    if not isinstance(x, Tensor):
        raise TypeError(f"torch.fft.{name}: expected a tensor, got {type(x).__name__}")
    if x.dtype in (_D.float32, _D.float64):
        return x
    if x.dtype in (_D.float16, _D.bfloat16):
        return x.to(_D.float32)
    from .._creation import get_default_dtype
    return x.to(get_default_dtype())


def _dim(d, ndim):
    if ndim == 0:  # torch: a 0-d tensor has no signal to transform
        raise RuntimeError("Invalid number of data points (0) specified")
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                         f"{max(ndim, 1) - 1}], but got {d})")
    return d % max(ndim, 1)


def _resize(x, d, n):
    """x cut or zero-padded (at the end) to n entries along dim d."""
    size = x.shape[d]
    if n == size:
        return x
    if n < size:
        return x.narrow(d, 0, n)
    from .._creation import zeros
    shape = list(x.shape)
    shape[d] = n - size
    if isinstance(x, ComplexTensor):
        pad = zeros(*shape, dtype=x.re.dtype, device=x.device)
        return ComplexTensor(_cat([x.re, pad], d), _cat([x.im, pad], d))
    return _cat([x, zeros(*shape, dtype=x.dtype, device=x.device)], d)


def _cat(ts, d):
    from .._functions import cat
    return cat(ts, d)


def _check_n(n, name):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _along(x, d, fn):
    """fn applied to x with dim d moved last and the rest flattened: fn gets (B, n) real or (B, 2, n) packed
    and returns (B, k) real or (B, 2, k) packed; the result is laid back out with dim d in place."""
    from .._functions import stack
    complex_in = isinstance(x, ComplexTensor)
    last = x.ndim - 1
    moved = x if d == last else x.movedim(d, -1)
    batch = tuple(moved.shape[:-1])
    n = moved.shape[-1]
    b = 1
    for s in batch:
        b *= s
    if complex_in:
        data = stack([moved.re, moved.im], -2).reshape(b, 2, n)
    else:
        data = moved.reshape(b, n)
    out = fn(data)
    if out.ndim == 3:
        k = out.shape[2]
        out = out.reshape(*batch, 2, k)
        res = ComplexTensor(out.select(-2, 0), out.select(-2, 1))
    else:
        res = out.reshape(*batch, out.shape[1])
    return res if d == last else res.movedim(-1, d)


def _empty_batch(x):
    return x.numel() == 0


def _c2c_1d(x, d, n, norm, inverse, name):
    """fft / ifft of x (complex or real) along d with n points."""
    _check_n(n, name)
    x = _resize(x, d, n)
    sign = 1 if inverse else -1
    s = _scale(norm, n, inverse)
    if _empty_batch(x):
        return _zeros_complex(x, d, n)
    if isinstance(x, ComplexTensor):
        return _along(x, d, lambda z: _engine.c2c(z, n, sign, None, s))
    return _along(x, d, lambda r: _engine.r2c(r, n, sign, None, s))


def _zeros_complex(x, d, n):
    from .._creation import zeros
    shape = list(x.shape)
    shape[d] = n
    rd = x.re.dtype if isinstance(x, ComplexTensor) else x.dtype
    z = zeros(*shape, dtype=rd, device=x.device)
    return ComplexTensor(z, z.clone())


def _real_input(x, name):
    if isinstance(x, ComplexTensor):
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype}")
    return x


def fft(input, n=None, dim=-1, norm=None):
    """torch.fft.fft: the 1-D discrete Fourier transform."""
    x = _float(input, "fft")
    d = _dim(dim, x.ndim)
    return _c2c_1d(x, d, x.shape[d] if n is None else n, norm, False, "fft")


def ifft(input, n=None, dim=-1, norm=None):
    """torch.fft.ifft: the 1-D inverse discrete Fourier transform."""
    x = _float(input, "ifft")
    d = _dim(dim, x.ndim)
    return _c2c_1d(x, d, x.shape[d] if n is None else n, norm, True, "ifft")


def _rfft_1d(x, d, n, norm, inverse, name):
    _check_n(n, name)
    x = _resize(x, d, n)
    keep = n // 2 + 1
    if _empty_batch(x):
        return _zeros_complex(x, d, keep)
    s = _scale(norm, n, inverse)
    return _along(x, d, lambda r: _engine.r2c(r, n, 1 if inverse else -1, keep, s))


def rfft(input, n=None, dim=-1, norm=None):
    """torch.fft.rfft: the one-sided (n//2 + 1 entries) DFT of a real signal."""
    x = _real_input(_float(input, "rfft"), "rfft")
    d = _dim(dim, x.ndim)
    return _rfft_1d(x, d, x.shape[d] if n is None else n, norm, False, "rfft")


def _irfft_1d(x, d, n, norm, name):
    """The real inverse of a one-sided spectrum x along d, n output points."""
    _check_n(n, name)
    if not isinstance(x, ComplexTensor):
        x = ComplexTensor(x, x * 0)
    x = _resize(x, d, n // 2 + 1)
    s = _scale(norm, n, True)
    if _empty_batch(x):
        from .._creation import zeros
        shape = list(x.shape)
        shape[d] = n
        return zeros(*shape, dtype=x.re.dtype, device=x.device)
    return _along(x, d, lambda z: _engine.c2r(z, n, s))


def _irfft_n(x, d, n):
    if n is None:
        n = 2 * (x.shape[d] - 1)
    return n


def irfft(input, n=None, dim=-1, norm=None):
    """torch.fft.irfft: the inverse of rfft, n real outputs (default 2 * (input.size(dim) - 1))."""
    x = _float(input, "irfft")
    d = _dim(dim, x.ndim)
    return _irfft_1d(x, d, _irfft_n(x, d, n), norm, "irfft")


def hfft(input, n=None, dim=-1, norm=None):
    """torch.fft.hfft: the DFT of a Hermitian-symmetric signal given by its first half; a real result."""
    x = _float(input, "hfft")
    d = _dim(dim, x.ndim)
    n = _irfft_n(x, d, n)
    return _irfft_1d(x.conj() if isinstance(x, ComplexTensor) else x, d, n, _swap(norm), "hfft")


def ihfft(input, n=None, dim=-1, norm=None):
    """torch.fft.ihfft: the inverse of hfft, the one-sided inverse DFT of a real signal."""
    x = _real_input(_float(input, "ihfft"), "ihfft")
    d = _dim(dim, x.ndim)
    return _rfft_1d(x, d, x.shape[d] if n is None else n, _swap(norm), False, "ihfft").conj()


def _dims_and_sizes(x, s, dim, name):
    """torch's n-D argument rules: the dims transformed and the signal size along each."""
    ndim = x.ndim
    if dim is not None:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        dims = [_dim(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{name}: dims must be unique, got {list(dim)}")
        if s is not None and len(s) != len(dims):
            raise RuntimeError(f"{name}: when given, dim and shape arguments must have the same length (got "
                               f"{len(dims)} dims and {len(s)} sizes)")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"{name}: got shape with {len(s)} values but input tensor only has {ndim} "
                               f"dimensions")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        sizes = [x.shape[d] if int(v) == -1 else int(v) for d, v in zip(dims, s)]
    return dims, sizes


def _fftn(input, s, dim, norm, inverse, name):
    x = _float(input, name)
    dims, sizes = _dims_and_sizes(x, s, dim, name)
    if not dims:
        return x.clone() if isinstance(x, ComplexTensor) else ComplexTensor(x, x * 0)
    for d, n in reversed(list(zip(dims, sizes))):
        x = _c2c_1d(x, d, n, norm, inverse, name)
    return x


def fftn(input, s=None, dim=None, norm=None):
    """torch.fft.fftn: the n-D DFT over `dim` (all dims by default), of size `s`."""
    return _fftn(input, s, dim, norm, False, "fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """torch.fft.ifftn: the n-D inverse DFT."""
    return _fftn(input, s, dim, norm, True, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.fft2: the DFT over the last two dims."""
    return _fftn(input, s, dim, norm, False, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.ifft2: the inverse DFT over the last two dims."""
    return _fftn(input, s, dim, norm, True, "ifft2")


def _rfftn(input, s, dim, norm, inverse, name):
    x = _real_input(_float(input, name), name)
    dims, sizes = _dims_and_sizes(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _rfft_1d(x, dims[-1], sizes[-1], norm, inverse, name)
    for d, n in reversed(list(zip(dims[:-1], sizes[:-1]))):
        x = _c2c_1d(x, d, n, norm, inverse, name)
    return x


def rfftn(input, s=None, dim=None, norm=None):
    """torch.fft.rfftn: the n-D DFT of a real signal, one-sided in the last dim transformed."""
    return _rfftn(input, s, dim, norm, False, "rfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.rfft2: rfftn over the last two dims."""
    return _rfftn(input, s, dim, norm, False, "rfft2")


def _irfftn(input, s, dim, norm, name, conj=False):
    x = _float(input, name)
    if not isinstance(x, ComplexTensor):
        x = ComplexTensor(x, x * 0)
    if conj:
        x = x.conj()
    dims, sizes = _dims_and_sizes(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or int(s[-1]) == -1:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    for d, n in reversed(list(zip(dims[:-1], sizes[:-1]))):
        x = _c2c_1d(x, d, n, norm, True, name)
    return _irfft_1d(x, dims[-1], sizes[-1], norm, name)


def irfftn(input, s=None, dim=None, norm=None):
    """torch.fft.irfftn: the inverse of rfftn (a real result; the last dim's size is 2 * (m - 1) by default)."""
    return _irfftn(input, s, dim, norm, "irfftn")


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.irfft2: irfftn over the last two dims."""
    return _irfftn(input, s, dim, norm, "irfft2")


def hfftn(input, s=None, dim=None, norm=None):
    """torch.fft.hfftn: the n-D DFT of a signal Hermitian-symmetric in the last dim transformed (a real result)."""
    return _irfftn(input, s, dim, _swap(norm), "hfftn", conj=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.hfft2: hfftn over the last two dims."""
    return _irfftn(input, s, dim, _swap(norm), "hfft2", conj=True)


def ihfftn(input, s=None, dim=None, norm=None):
    """torch.fft.ihfftn: the inverse of hfftn."""
    return _rfftn(input, s, dim, _swap(norm), False, "ihfftn").conj()


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.ihfft2: ihfftn over the last two dims."""
    return _rfftn(input, s, dim, _swap(norm), False, "ihfft2").conj()


def _freq_tensor(values, dtype, device, requires_grad):
    from .._creation import get_default_dtype, tensor
    t = tensor(values, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_(True) if requires_grad else t


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.fftfreq: the sample frequencies [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)."""
    k = list(range(0, (n - 1) // 2 + 1)) + list(range(-(n // 2), 0))
    return _freq_tensor([v / (d * n) for v in k], dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.rfftfreq: [0, 1, ..., n//2] / (d * n)."""
    return _freq_tensor([v / (d * n) for v in range(n // 2 + 1)], dtype, device, requires_grad)


def _shift(input, dim, sign):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        dims = [_dim(d, input.ndim) for d in dims]
    if not dims:
        return input
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    if isinstance(input, ComplexTensor):
        return input.roll(shifts, dims)
    from .._tensor_layout import roll
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """torch.fft.fftshift: the zero frequency moved to the middle (a roll by n//2 along each dim)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """torch.fft.ifftshift: the inverse of fftshift (a roll by -(n//2))."""
    return _shift(input, dim, -1)


def _install(oar):
    """oar.fft, torch.stft / torch.istft, Tensor.stft / istft and the window functions."""
    import sys
    from . import _spectral
    oar.fft = sys.modules[__name__]
    oar.stft = _spectral.stft
    oar.istft = _spectral.istft
    Tensor.stft = _spectral.stft
    Tensor.istft = _spectral.istft
    for name in _spectral.WINDOWS:
        if not hasattr(oar, name):
            setattr(oar, name, getattr(_spectral, name))
