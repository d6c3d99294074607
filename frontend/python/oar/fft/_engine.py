"""The discrete Fourier transform along the last dimension, written with real oar ops (matmul, permute,
elementwise products), so it runs on every device and autograd differentiates it unchanged.

Complex data travel packed: a real tensor of shape (B, 2, n), [:, 0] the real and [:, 1] the imaginary parts.

- Small sizes (n <= DIRECT_MAX) and primes up to PRIME_DIRECT_MAX: one matmul with the DFT matrix written as a
  real block matrix, [Xr | Xi] @ [[C, S], [-S, C]] (W = C + iS).
- Composite sizes, n = n1 * n2 with n1 the divisor nearest sqrt(n) from below (Cooley-Tukey, the "four-step"
  form): DFTs of size n1 over the n2 interleaved subsequences, a twiddle product, DFTs of size n2, each one a
  recursive call, and a transpose; 16384 = 128 x 128 costs two matmuls with 256x256 matrices, never a
  16384^2 one.
- Larger primes: Bluestein's chirp-z, a convolution done with power-of-two FFTs of the above kinds.

Only the outputs asked for are computed (`keep`: rfft keeps n//2 + 1), and a normalisation `scale` is folded
into the last constant applied. The matrices, twiddles and chirps are built once in float64 NumPy and cached
per (kind, n, sign, keep, scale, dtype, device).
"""
import math
from collections import OrderedDict

import numpy as np

from .. import _C

_D = _C.dtype

DIRECT_MAX = 128
PRIME_DIRECT_MAX = 512
CACHE_SIZE = 256

_CACHE = OrderedDict()
_PLANS = {}


def clear_cache():
    """Drops the cached DFT matrices, twiddles and chirps (they are rebuilt on the next use)."""
    _CACHE.clear()


def _const(key, build, like):
    """The constant `build()` (a float64 NumPy array) as a tensor of like's dtype on like's device, cached."""
    k = key + (like.dtype, str(like.device))
    hit = _CACHE.get(k)
    if hit is not None:
        _CACHE.move_to_end(k)
        return hit
    from .._creation import tensor
    arr = build()
    np_dtype = np.float64 if like.dtype == _D.float64 else np.float32
    t = tensor(np.ascontiguousarray(arr, dtype=np_dtype), dtype=like.dtype, device=like.device)
    _CACHE[k] = t
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return t


def _cis(n, rows, cols, sign):
    """cos and sin of sign * 2*pi*r*c/n for r < rows, c < cols, the product reduced mod n exactly."""
    prod = np.outer(np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64)) % n
    angle = prod * (2.0 * math.pi / n)
    return np.cos(angle), sign * np.sin(angle)


def plan(n):
    """'direct', 'bluestein' or (n1, n2) with n = n1 * n2."""
    p = _PLANS.get(n)
    if p is not None:
        return p
    if n <= DIRECT_MAX:
        p = "direct"
    else:
        p = None
        for d in range(math.isqrt(n), 1, -1):
            if n % d == 0:
                p = (d, n // d)
                break
        if p is None:
            p = "direct" if n <= PRIME_DIRECT_MAX else "bluestein"
    _PLANS[n] = p
    return p


def _direct_c2c(n, keep, sign, scale):
    c, s = _cis(n, n, keep, sign)
    return np.block([[c, s], [-s, c]]) * scale


def _direct_r2c(n, keep, sign, scale):
    c, s = _cis(n, n, keep, sign)
    return np.concatenate([c, s], axis=1) * scale


def _cmul(y, re_im, axis):
    """y (packed along `axis`) times the complex constant given as (A, B) = ([cr, cr], [-ci, ci]) stacked on
    that axis: y*A + flip(y)*B."""
    a, b = re_im
    return y * a + y.flip([axis]) * b


def _twiddle(n1, n2, sign, scale, like):
    def build(part):
        def make():
            c, s = _cis(n1 * n2, n2, n1, sign)
            if part == 0:
                return np.stack([c, c], axis=1) * scale
            return np.stack([-s, s], axis=1) * scale
        return make
    key = ("twiddle", n1, n2, sign, scale)
    return (_const(key + (0,), build(0), like), _const(key + (1,), build(1), like))


def c2c(z, n, sign, keep=None, scale=1.0):
    """The DFT of packed complex z (B, 2, n): (B, 2, keep), sum_j z[j] exp(sign*2*pi*i*j*k/n) * scale."""
    keep = n if keep is None else keep
    b = z.shape[0]
    if n == 1:
        out = z if scale == 1.0 else z * scale
        return out
    p = plan(n)
    if p == "direct":
        m = _const(("c2c", n, keep, sign, scale), lambda: _direct_c2c(n, keep, sign, scale), z)
        return z.reshape(b, 2 * n).matmul(m).reshape(b, 2, keep)
    if p == "bluestein":
        return _bluestein(z, n, sign, keep, scale)
    n1, n2 = p
    y = z.reshape(b, 2, n1, n2).permute(0, 3, 1, 2).reshape(b * n2, 2, n1)  # [b, j2, part, j1]
    y = c2c(y, n1, sign)
    return _second_stage(y.reshape(b, n2, 2, n1), b, n, n1, n2, sign, keep, scale)


def _second_stage(y, b, n, n1, n2, sign, keep, scale):
    """y[b, j2, part, k1], the size-n1 DFTs: twiddle, the size-n2 DFTs, output index k = k1 + n1*k2."""
    y = _cmul(y, _twiddle(n1, n2, sign, scale, y), 2)
    k2 = -(-keep // n1)
    y = y.permute(0, 3, 2, 1).reshape(b * n1, 2, n2)  # [b, k1, part, j2]
    y = c2c(y, n2, sign, k2)
    y = y.reshape(b, n1, 2, k2).permute(0, 2, 3, 1).reshape(b, 2, k2 * n1)  # [b, part, k2, k1]
    return y if k2 * n1 == keep else y[:, :, :keep]


def r2c(x, n, sign, keep=None, scale=1.0):
    """The DFT of real x (B, n): packed (B, 2, keep)."""
    keep = n if keep is None else keep
    b = x.shape[0]
    if n == 1:
        from .._functions import stack
        out = stack([x, x * 0], 1)
        return out if scale == 1.0 else out * scale
    p = plan(n)
    if p == "direct":
        m = _const(("r2c", n, keep, sign, scale), lambda: _direct_r2c(n, keep, sign, scale), x)
        return x.matmul(m).reshape(b, 2, keep)
    if p == "bluestein":
        from .._functions import stack
        return _bluestein(stack([x, x * 0], 1), n, sign, keep, scale)
    n1, n2 = p
    y = x.reshape(b, n1, n2).permute(0, 2, 1).reshape(b * n2, n1)  # [b, j2, j1]
    y = r2c(y, n1, sign)
    return _second_stage(y.reshape(b, n2, 2, n1), b, n, n1, n2, sign, keep, scale)


def _direct_c2r(n, m, scale):
    """(2m, n): x[j] = scale * sum_k w_k (Xr[k] cos(2pi jk/n) - Xi[k] sin(2pi jk/n)), w_k = 2 but for k = 0 and
    k = n/2, whose imaginary parts drop out as they do in torch (the Hermitian extension of X)."""
    c, s = _cis(n, m, n, 1)
    w = np.full((m, 1), 2.0)
    w[0] = 1.0
    if n % 2 == 0 and m - 1 == n // 2:
        w[m - 1] = 1.0
    return np.concatenate([c * w, -s * w], axis=0) * scale


def c2r(z, n, scale=1.0):
    """The inverse DFT (sign +1) of the Hermitian signal whose first m = n//2 + 1 entries are packed z (B, 2, m):
    real (B, n)."""
    b, m = z.shape[0], z.shape[2]
    p = plan(n)
    if n == 1 or p == "direct":
        mat = _const(("c2r", n, m, scale), lambda: _direct_c2r(n, m, scale), z)
        return z.reshape(b, 2 * m).matmul(mat)
    # the full spectrum X[n-k] = conj(X[k]), then a complex inverse DFT whose real part is the answer
    from .._functions import cat
    tail = z[:, :, 1:n - m + 1].flip([2])
    sign = _const(("conj",), lambda: np.array([[1.0], [-1.0]]), z)
    full = cat([z, tail * sign], 2)
    return c2c(full, n, 1, None, scale)[:, 0, :]


def _bluestein(z, n, sign, keep, scale):
    """Bluestein: X[k] = c[k] * sum_j (z[j] c[j]) d[k - j], c[j] = exp(sign*pi*i*j^2/n), d = conj(c), the
    convolution by power-of-two FFTs of size m >= 2n - 1."""
    m = 1 << (2 * n - 2).bit_length()
    b = z.shape[0]

    def chirp(count, part, factor):
        def make():
            j = np.arange(count, dtype=np.int64)
            ang = ((j * j) % (2 * n)) * (math.pi / n)
            c, s = np.cos(ang) * factor, sign * np.sin(ang) * factor
            return np.stack([c, c]) if part == 0 else np.stack([-s, s])
        return make
    a = _cmul(z, (_const(("chirp", n, sign, n, 0, 1.0), chirp(n, 0, 1.0), z),
                  _const(("chirp", n, sign, n, 1, 1.0), chirp(n, 1, 1.0), z)), 1)
    from .._functions import cat
    from .._creation import zeros
    a = cat([a, zeros(b, 2, m - n, dtype=z.dtype, device=z.device)], 2)
    spec = c2c(a, m, -1)

    def kernel(part):
        def make():
            d = np.zeros(m, dtype=np.complex128)
            j = np.arange(n, dtype=np.int64)
            ang = ((j * j) % (2 * n)) * (math.pi / n)
            v = np.exp(-1j * sign * ang)
            d[:n] = v
            d[m - n + 1:] = v[1:][::-1]
            f = np.fft.fft(d) / m
            return np.stack([f.real, f.real]) if part == 0 else np.stack([-f.imag, f.imag])
        return make
    spec = _cmul(spec, (_const(("bluestein_kernel", n, sign, 0), kernel(0), z),
                        _const(("bluestein_kernel", n, sign, 1), kernel(1), z)), 1)
    conv = c2c(spec, m, 1, keep)
    return _cmul(conv, (_const(("chirp", n, sign, keep, 0, scale), chirp(keep, 0, scale), z),
                        _const(("chirp", n, sign, keep, 1, scale), chirp(keep, 1, scale), z)), 1)
