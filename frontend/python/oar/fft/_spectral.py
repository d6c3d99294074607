"""torch.stft / torch.istft (PyTorch 1.13's semantics) and the window functions audio code passes them
(hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window).

stft frames the (reflect-padded, when center) signal with Tensor.unfold, multiplies by the window and takes
rfft / fft of each frame; istft takes irfft / ifft of each frame, multiplies by the window and overlap-adds
the frames (index_add), dividing by the overlap-added squared window. All of it is oar ops, on every device,
differentiable in the signal and the window.
"""
import math

import numpy as np

from .. import _C
from .._C import Tensor
from .._complex._tensor import ComplexTensor

_D = _C.dtype

WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


def _window(values_of, window_length, periodic, dtype, device, requires_grad, name):
    from .._creation import get_default_dtype, tensor
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype or get_default_dtype()
    if window_length == 0:
        values = np.zeros(0)
    elif window_length == 1:
        values = np.ones(1)
    else:
        n = window_length + 1 if periodic else window_length
        values = values_of(np.arange(window_length, dtype=np.float64), n)
    t = tensor(np.asarray(values, dtype=np.float64), dtype=dtype, device=device)
    return t.requires_grad_(True) if requires_grad else t


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.hann_window: 0.5 - 0.5 cos(2 pi k / (N - 1)), N = window_length + 1 when periodic."""
    return _window(lambda k, n: 0.5 - 0.5 * np.cos(2 * math.pi * k / (n - 1)), window_length, periodic, dtype,
                   device, requires_grad, "hann_window")


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """torch.hamming_window: alpha - beta cos(2 pi k / (N - 1))."""
    return _window(lambda k, n: alpha - beta * np.cos(2 * math.pi * k / (n - 1)), window_length, periodic, dtype,
                   device, requires_grad, "hamming_window")


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.blackman_window: 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    def values(k, n):
        return 0.42 - 0.5 * np.cos(2 * math.pi * k / (n - 1)) + 0.08 * np.cos(4 * math.pi * k / (n - 1))
    return _window(values, window_length, periodic, dtype, device, requires_grad, "blackman_window")


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.bartlett_window: 1 - |2k / (N - 1) - 1|."""
    return _window(lambda k, n: 1.0 - np.abs(2.0 * k / (n - 1) - 1.0), window_length, periodic, dtype, device,
                   requires_grad, "bartlett_window")


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """torch.kaiser_window: I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta)."""
    return _window(lambda k, n: np.i0(beta * np.sqrt(np.maximum(0.0, 1.0 - (2.0 * k / (n - 1) - 1.0) ** 2)))
                   / np.i0(beta), window_length, periodic, dtype, device, requires_grad, "kaiser_window")


def _padded_window(window, win_length, n_fft, like_dtype, device, name):
    """The window (ones by default) centred in n_fft entries."""
    from .._creation import ones, zeros
    from .._functions import cat
    if window is None:
        window = ones(win_length, dtype=like_dtype, device=device)
    else:
        if isinstance(window, ComplexTensor):
            from .._complex._tensor import _unsupported
            raise _unsupported(f"{name} with a complex window")
        if window.ndim != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, but "
                               f"got window with size {list(window.shape)}")
        if window.dtype != like_dtype:
            window = window.to(like_dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = cat([zeros(left, dtype=like_dtype, device=window.device), window,
                      zeros(n_fft - win_length - left, dtype=like_dtype, device=window.device)])
    return window


def _pad_reflect(x, pad, mode):
    """torch.stft's center padding: F.pad of the signal viewed as (1, B, L)."""
    from ..nn import functional as F
    if isinstance(x, ComplexTensor):
        return ComplexTensor(_pad_reflect(x.re, pad, mode), _pad_reflect(x.im, pad, mode))
    shape = list(x.shape)
    out = F.pad(x.reshape(1, -1, shape[-1]) if x.ndim < 3 else x, [pad, pad], mode)
    return out.reshape(*shape[:-1], out.shape[-1])


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """torch.stft (PyTorch 1.13): the short-time Fourier transform of a 1-D signal or a batch (B, L):
    complex (B?, n_fft//2 + 1 or n_fft, n_frames)."""
    from . import fft, rfft
    from .._complex._functions import view_as_real
    is_complex = isinstance(input, ComplexTensor)
    if return_complex is None:
        if not is_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    x = input
    if not is_complex and not x.is_floating_point():
        from .._creation import get_default_dtype
        x = x.to(get_default_dtype())
    if center:
        x = _pad_reflect(x, n_fft // 2, pad_mode)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    rd = x.re.dtype if is_complex else x.dtype
    w = _padded_window(window, win_length, n_fft, rd, x.device, "stft")
    frames = x.unfold(-1, n_fft, hop)  # (B?, n_frames, n_fft)
    if window is not None or win_length < n_fft:
        frames = frames * w
    if onesided is None:
        onesided = not is_complex
    norm = "ortho" if normalized else "backward"
    if onesided:
        if is_complex:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = rfft(frames, dim=-1, norm=norm)
    else:
        spec = fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    return spec if return_complex else view_as_real(spec)


def _overlap_add(frames, hop, out_len):
    """frames (B, n_frames, n_fft) summed into (B, out_len), frame t starting at t * hop."""
    from .._creation import arange, zeros
    b, n_frames, n_fft = frames.shape
    idx = (arange(n_frames, device=frames.device).reshape(-1, 1) * hop
           + arange(n_fft, device=frames.device).reshape(1, -1)).reshape(-1)
    out = zeros(b, out_len, dtype=frames.dtype, device=frames.device)
    return out.index_add(1, idx, frames.reshape(b, n_frames * n_fft))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """torch.istft (PyTorch 1.13): the inverse of stft by overlap-add, normalised by the overlap-added squared
    window (which must be nonzero everywhere: the NOLA condition)."""
    from . import ifft, irfft
    from .._complex._functions import view_as_complex
    x = input
    if not isinstance(x, ComplexTensor):
        if isinstance(x, Tensor) and x.ndim >= 3 and x.shape[-1] == 2:
            x = view_as_complex(x if x.is_floating_point() else x.float())  # the deprecated real form
        else:
            raise RuntimeError("istft requires a complex-valued input tensor")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, got {x.ndim}")
    batched = x.ndim == 3
    if not batched:
        x = x.unsqueeze(0)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    fft_size, n_frames = x.shape[1], x.shape[2]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                               f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win_length:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    rd = x.re.dtype
    w = _padded_window(window, win_length, n_fft, rd, x.device, "istft")
    x = x.transpose(1, 2)  # (B, n_frames, fft_size)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = ifft(x, dim=-1, norm=norm)
    else:
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = irfft(x, n=n_fft, dim=-1, norm=norm)
    frames = frames * w.reshape(1, 1, n_fft)
    expected = n_fft + hop * (n_frames - 1)
    if isinstance(frames, ComplexTensor):
        y = ComplexTensor(_overlap_add(frames.re, hop, expected), _overlap_add(frames.im, hop, expected))
    else:
        y = _overlap_add(frames, hop, expected)
    envelope = _overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft), hop, expected)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected - n_fft // 2
    else:
        end = expected
    stop = min(end, expected)
    y = y.narrow(-1, start, max(stop - start, 0))
    envelope = envelope.narrow(-1, start, max(stop - start, 0))
    if envelope.numel() and float(envelope.abs().min().item()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: the window's overlap-added square is (near) zero "
                           "somewhere (the NOLA condition fails); use a window and hop_length that overlap")
    y = y / envelope
    if end > expected:
        from .._creation import zeros
        pad = zeros(y.shape[0], end - expected, dtype=rd, device=y.device)
        if isinstance(y, ComplexTensor):
            y = ComplexTensor(_cat([y.re, pad]), _cat([y.im, pad]))
        else:
            y = _cat([y, pad])
    return y if batched else y.squeeze(0)


def _cat(ts):
    from .._functions import cat
    return cat(ts, -1)
