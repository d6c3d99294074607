"""Resampling and lookups of oar.nn.functional (re-exported there): interpolate / upsample, pixel_shuffle,
affine_grid / grid_sample, embedding (padding_idx, max_norm, scale_grad_by_freq) and embedding_bag.

All are compositions of catalog ops with gradients on every device:
  * interpolate is separable: per spatial dim, a few index_select taps times per-output weights
    (nearest: 1 tap, linear: 2, cubic: 4, antialiased: the filter's support), the source indices and
    weights computed with NumPy by PyTorch's coordinate rules (its float32 arithmetic for nearest,
    A = -0.75 with border clamping for bicubic, PIL's filters for antialias); mode='area' is
    adaptive average pooling;
  * grid_sample gathers the 2^d (bilinear, nearest: 1, bicubic: 16) neighbours of each sampling point
    from the flattened input; the weights are differentiable functions of the grid, so gradients
    reach both the input (gather) and the grid;
  * embedding_bag: embedding rows summed into their bags with index_add, or, for max, padded per bag
    and reduced with argmax + gather.
"""
import functools
import math
import numbers
import warnings

import numpy as np

from .. import _C
from .._C import ShapeError
from .._ops import ops
from ..autograd import no_grad
from ._loss_functions import _check_tensor
from . import _functional_conv as _conv
from ._functional_conv import _on_device, _fill, _shape

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "affine_grid", "grid_sample", "embedding_bag"]


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


# ---------------------------------------------------------------- interpolate
_MODES_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _cubic_coeffs(t, A):
    """Keys' cubic convolution weights of the 4 taps at offsets -1, 0, 1, 2 for a fraction t (PyTorch's order)."""
    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [c2(t + 1.0), c1(t), c1(1.0 - t), c2(2.0 - t)]


def _opmath(dtype):
    return np.float64 if dtype == _C.dtype.float64 else np.float32


def _scale_value(L, O, align_corners, scale, ft):
    """PyTorch's area_pixel_compute_scale in the op's math type ft."""
    if align_corners:
        return ft(L - 1) / ft(O - 1) if O > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(L) / ft(O)


@functools.lru_cache(maxsize=256)
def _taps(L, O, mode, align_corners, scale, float64):
    """[(source indices [O], weights [O] or None)] of one spatial dim, as PyTorch's CPU kernels compute them."""
    ft = np.float64 if float64 else np.float32
    i = np.arange(O)
    if mode in ("nearest", "nearest-exact"):
        sc = _scale_value(L, O, False, scale, ft)
        real = i.astype(ft) * sc if mode == "nearest" else \
            np.maximum(sc * (i.astype(ft) + ft(0.5)) - ft(0.5), ft(0)) + ft(0.5)
        idx = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), L - 1)
        return [(idx, None)]
    if mode == "linear":
        if O == L:  # PyTorch copies when the size is kept, whatever the scale
            return [(i, None)]
        sc = _scale_value(L, O, align_corners, scale, ft)
        real = sc * i.astype(ft) if align_corners else np.maximum(sc * (i.astype(ft) + ft(0.5)) - ft(0.5), ft(0))
        i0 = real.astype(np.int64)
        i1 = i0 + (i0 < L - 1)
        lam1 = np.clip(real - i0, 0, 1).astype(ft)
        return [(i0, (ft(1) - lam1)), (i1, lam1)]
    if mode == "cubic":
        sc = _scale_value(L, O, align_corners, scale, ft)
        real = sc * i.astype(ft) if align_corners else sc * (i.astype(ft) + ft(0.5)) - ft(0.5)
        i0 = np.floor(real.astype(np.float32)).astype(np.int64)
        coeffs = _cubic_coeffs((real - i0).astype(ft), ft(-0.75))
        return [(np.clip(i0 - 1 + j, 0, L - 1), coeffs[j].astype(ft)) for j in range(4)]
    raise AssertionError(mode)


@functools.lru_cache(maxsize=256)
def _taps_aa(L, O, mode, align_corners, scale, float64):
    """Antialiased taps (PyTorch's _upsample_*_aa, PIL's filters): a triangle (linear) or Keys' cubic with
    A = -0.5 stretched by the downscale factor, normalised to sum 1 per output."""
    ft = np.float64 if float64 else np.float32
    interp = 2 if mode == "linear" else 4
    sc = _scale_value(L, O, align_corners, scale, ft)
    support = ft(interp * 0.5) * sc if sc >= 1.0 else ft(interp * 0.5)
    invscale = ft(1.0) / sc if sc >= 1.0 else ft(1.0)

    def filt(x):
        x = np.abs(x)
        if mode == "linear":
            return np.maximum(ft(0), ft(1) - x)
        A = ft(-0.5)
        return np.where(x < 1, ((A + 2) * x - (A + 3)) * x * x + 1,
                        np.where(x < 2, ((A * x - 5 * A) * x + 8 * A) * x - 4 * A, ft(0)))
    center = sc * (np.arange(O).astype(ft) + ft(0.5))
    xmin = np.maximum((center - support + ft(0.5)).astype(np.int64), 0)
    xsize = np.minimum((center + support + ft(0.5)).astype(np.int64), L) - xmin
    K = int(xsize.max())
    j = np.arange(K)
    w = filt((j[None, :] + xmin[:, None] - center[:, None] + ft(0.5)) * invscale).astype(ft)
    w = np.where(j[None, :] < xsize[:, None], w, ft(0))
    total = w.sum(axis=1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(ft)
    idx = np.minimum(xmin[:, None] + j[None, :], L - 1)
    return [(idx[:, t].copy(), w[:, t].copy()) for t in range(K)]


def _resample_dim(x, dim, taps, key):
    """sum over taps of x.index_select(dim, idx) * weight (broadcast along dim)."""
    out = None
    shape = [1] * x.ndim
    for t, (idx, w) in enumerate(taps):
        g = ops.index_select(x, _on_device(key + (t, "i"), x.device, lambda: idx), dim=dim)
        if w is not None:
            shape[dim] = w.shape[0]
            g = g * _on_device(key + (t, "w"), x.device, lambda: w, dtype=x.dtype).reshape(*shape)
        out = g if out is None else out + g
    return out


_REPEAT_MAPS = {}


def _nearest_is_repeat(L, O, scale, float64):
    """Whether PyTorch's nearest index map (in its own float arithmetic, which _taps reproduces) from L to
    O entries is o // (O / L): true for most integer factors, not all (float32 1/41 rounds down)."""
    key = (L, O, scale, float64)
    if key not in _REPEAT_MAPS:
        idx = _taps(L, O, "nearest", False, scale, float64)[0][0]
        _REPEAT_MAPS[key] = bool(np.array_equal(idx, np.arange(O) // (O // L)))
    return _REPEAT_MAPS[key]


def _repeat_each(x, dim, k):
    """x with every entry along dim repeated k times in place (nearest upsampling by an integer factor)."""
    shape = list(x.shape)
    wide = shape[:dim + 1] + [k] + shape[dim + 1:]
    out = shape[:dim] + [shape[dim] * k] + shape[dim + 1:]
    return x.unsqueeze(dim + 1).expand(*wide).reshape(*out)


def _output_and_scales(input, size, scale_factor, recompute_scale_factor, mode):
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 f"(o1, o2, ...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size] * dim
        if not all(_is_int(s) for s in output_size):
            raise TypeError(f"interpolate(): size must be an int or a tuple of ints, got {size!r}")
        output_size = [int(s) for s in output_size]
        scales = [None] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        output_size = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if output_size is None:
        output_size = [int(math.floor(float(input.shape[2 + i]) * scales[i])) for i in range(dim)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * dim
    if any(s <= 0 for s in input.shape[2:]) or any(o <= 0 for o in output_size):
        raise ShapeError(f"Input and output sizes should be greater than 0, but got input "
                         f"{tuple(input.shape[2:])} output {tuple(output_size)}")
    return output_size, scales


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples [N, C, *spatial] (1 to 3 spatial dims) to size or by scale_factor: modes nearest,
    nearest-exact, linear (3-D), bilinear / bicubic (4-D), trilinear (5-D) and area, as PyTorch."""
    _check_tensor(input, "input", "interpolate")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    else:
        align_corners = False if align_corners is None else bool(align_corners)
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    known = ("nearest", "nearest-exact", "area") + tuple(_MODES_DIMS)
    if input.ndim not in (3, 4, 5) or mode not in known:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in _MODES_DIMS and input.ndim != _MODES_DIMS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_MODES_DIMS[mode]}D input")
    output_size, scales = _output_and_scales(input, size, scale_factor, recompute_scale_factor, mode)
    nsp = input.ndim - 2
    if mode == "area":
        return _conv._adaptive_avg_nd(input, tuple(output_size), nsp, "adaptive_avg_pool%dd" % nsp)
    if mode not in ("nearest", "nearest-exact") and not input.is_floating_point():
        raise _C.DTypeError(f"interpolate(): mode {mode!r} needs a floating-point input, got {input.dtype}")
    kind = "cubic" if mode == "bicubic" else "linear" if mode in ("linear", "bilinear", "trilinear") else mode
    f64 = input.dtype == _C.dtype.float64
    x = input
    for i in range(nsp):
        L, O = input.shape[2 + i], output_size[i]
        if O == L and not antialias and (kind == "linear" or (kind != "cubic" and scales[i] is None)):
            continue  # PyTorch copies (linear: always; nearest: the index map is then the identity)
        if kind == "nearest" and O % L == 0 and _nearest_is_repeat(L, O, scales[i], f64):
            x = _repeat_each(x, 2 + i, O // L)  # source index o // k: each entry k times, one copy
            continue
        args = (L, O, kind, bool(align_corners), scales[i], f64)
        taps = _taps_aa(*args) if antialias else _taps(*args)
        x = _resample_dim(x, 2 + i, taps, ("interp", bool(antialias)) + args)
    return x if x is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (PyTorch's F.upsample)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------- pixel shuffle
def pixel_shuffle(input, upscale_factor):
    """[*, C * r * r, H, W] -> [*, C, H * r, W * r]."""
    _check_tensor(input, "input", "pixel_shuffle")
    r = int(upscale_factor)
    if r <= 0:
        raise ShapeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.ndim < 3:
        raise ShapeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                         f"{input.ndim} dimension(s)")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    batch = list(input.shape[:-3])
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] -> [*, C * r * r, H, W]."""
    _check_tensor(input, "input", "pixel_unshuffle")
    r = int(downscale_factor)
    if r <= 0:
        raise ShapeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if input.ndim < 3:
        raise ShapeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                         f"{input.ndim} dimension(s)")
    c, h, w = input.shape[-3:]
    if h % r:
        raise ShapeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                         f" is not divisible by {r}")
    if w % r:
        raise ShapeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w}"
                         f" is not divisible by {r}")
    batch = list(input.shape[:-3])
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """[N, g * k, *] -> channels regrouped as [N, k * g, *] (ShuffleNet)."""
    _check_tensor(input, "input", "channel_shuffle")
    if input.ndim < 3:
        raise ShapeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                         f"{input.ndim} dimension(s)")
    g = int(groups)
    if g <= 0:
        raise ShapeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    c = input.shape[1]
    if c % g:
        raise ShapeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    rest = list(input.shape[2:])
    x = input.reshape(input.shape[0], g, c // g, *rest).transpose(1, 2)
    return x.reshape(input.shape[0], c, *rest)


# ---------------------------------------------------------------- affine_grid / grid_sample
def _default_align_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        return False
    return bool(align_corners)


def _linspace_from_neg_one(n, align_corners):
    if n <= 1:
        return np.zeros(max(n, 1))
    r = np.linspace(-1.0, 1.0, n)
    return r if align_corners else r * (n - 1) / n


@functools.lru_cache(maxsize=64)
def _base_grid(spatial, align_corners):
    """[prod(spatial), nsp + 1]: (x, y[, z], 1) of every output point, x along the last dim."""
    axes = [_linspace_from_neg_one(n, align_corners) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # mesh[i] varies along spatial dim i
    cols = [mesh[i].ravel() for i in reversed(range(len(spatial)))] + [np.ones(mesh[0].size)]
    return np.stack(cols, axis=1)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of the affine maps theta [N, 2, 3] ([N, 3, 4])."""
    _check_tensor(theta, "theta", "affine_grid")
    align_corners = _default_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{list(theta.shape)}.")
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{list(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = tuple(size[2:])
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ShapeError(f"affine_grid: expected theta with batch size {size[0]} (size[0]), got {list(theta.shape)}")
    nsp = len(spatial)
    base = _on_device(("affine_base", spatial, align_corners), theta.device,
                      lambda: _base_grid(spatial, align_corners), dtype=theta.dtype)
    grid = base.unsqueeze(0) @ theta.transpose(1, 2)  # [N, P, nsp]
    return grid.reshape(size[0], *spatial, nsp)


def _unnormalize(c, size, align_corners):
    if align_corners:
        return (c + 1) * ((size - 1) / 2.0)
    return ((c + 1) * size - 1) / 2.0


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return c * 0.0
    mn = twice_low / 2.0
    span = (twice_high - twice_low) / 2.0
    c = ops.abs(c - mn)
    flips = ops.floor(c.detach() / span)
    extra = c - flips * span
    even = ops.fmod(flips, _C.tensor(2.0, flips.dtype, flips.device)) == 0
    return ops.where(even, extra + mn, (extra * -1.0) + (span + mn))


def _clip(c, size):
    """clamp(c, 0, size - 1) whose gradient is zero at the limits too (PyTorch's clip_coordinates_set_grad: a
    grid point exactly on the border gets no gradient)."""
    inside = ops.logical_and(c.detach() > 0.0, c.detach() < float(size - 1))
    return ops.where(inside, c, ops.clamp(c.detach(), min=0.0, max=float(size - 1)))


def _compute_coordinates(c, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _clip(c, size)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _corner_value(xf, pos, sizes, dtype):
    """xf [N, C, S] at the (float, integral-valued) positions pos[i] [N, P] per spatial dim: (values [N, C, P],
    in-bounds mask [N, 1, P] in dtype)."""
    N, C = xf.shape[0], xf.shape[1]
    flat, valid, stride = None, None, 1
    for i in reversed(range(len(sizes))):
        p = pos[i]
        ok = ops.logical_and(p >= 0, p <= sizes[i] - 1)
        valid = ok if valid is None else ops.logical_and(valid, ok)
        term = ops.clamp(p, min=0.0, max=float(sizes[i] - 1)) * float(stride)
        flat = term if flat is None else flat + term
        stride *= sizes[i]
    idx = flat.to(_C.dtype.int64).unsqueeze(1)
    vals = ops.gather(xf, idx.expand(N, C, idx.shape[2]), dim=2)
    return vals, valid.to(dtype).unsqueeze(1)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input [N, C, H, W] (or [N, C, D, H, W]) at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]; 5-D: (x, y, z))
    with bilinear / nearest / bicubic (4-D) interpolation and zeros / border / reflection padding."""
    _check_tensor(input, "input", "grid_sample")
    _check_tensor(grid, "grid", "grid_sample")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _default_align_corners(align_corners)
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise ShapeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got "
                         f"input with sizes {_shape(input)} and grid with sizes {_shape(grid)}")
    nsp = input.ndim - 2
    if grid.shape[0] != input.shape[0]:
        raise ShapeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                         f"{_shape(input)} and grid with sizes {_shape(grid)}")
    if grid.shape[-1] != nsp:
        raise ShapeError(f"grid_sampler(): expected grid to have size {nsp} in last dimension, but got grid with "
                         f"sizes {_shape(grid)}")
    if any(s <= 0 for s in input.shape[2:]):
        raise ShapeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                         f"{_shape(input)}")
    if mode == "bicubic" and nsp != 2:
        raise ShapeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point() or grid.dtype != input.dtype:
        raise _C.DTypeError(f"grid_sampler(): expected input and grid to have the same floating-point dtype, but "
                            f"got input {input.dtype} and grid {grid.dtype}")
    N, C = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    out_sp = list(grid.shape[1:-1])
    P = int(np.prod(out_sp))
    g = grid.reshape(N, P, nsp)
    xf = input.reshape(N, C, int(np.prod(sizes)))
    # coordinate of spatial dim i (D, H, W order) is grid component nsp - 1 - i (x indexes W)
    coords = [_unnormalize(g.select(2, nsp - 1 - i), sizes[i], align_corners) for i in range(nsp)]
    out = None
    if mode == "bicubic":
        lo = [ops.floor(c.detach()) for c in coords]
        coeffs = [_cubic_coeffs(coords[i] - lo[i], -0.75) for i in range(2)]
        for a in range(4):  # H taps
            ph = _compute_coordinates(lo[0] + (a - 1), sizes[0], padding_mode, align_corners)
            for b in range(4):  # W taps
                pw = _compute_coordinates(lo[1] + (b - 1), sizes[1], padding_mode, align_corners)
                vals, valid = _corner_value(xf, [ph, pw], sizes, input.dtype)
                term = vals * (coeffs[0][a] * coeffs[1][b]).unsqueeze(1) * valid
                out = term if out is None else out + term
        return out.reshape(N, C, *out_sp)
    coords = [_compute_coordinates(c, sizes[i], padding_mode, align_corners) for i, c in enumerate(coords)]
    if mode == "nearest":
        vals, valid = _corner_value(xf, [ops.round(c.detach()) for c in coords], sizes, input.dtype)
        out = (vals * valid).reshape(N, C, *out_sp)
        if grid.requires_grad:  # PyTorch gives the grid a zero gradient (not None)
            off = ops.fill(shape=[1], value=0.0, dtype=_C.dtype.bool, device=grid.device)
            out = out + ops.sum(ops.where(off, grid, _fill([1], 0.0, grid)))
        return out
    lo = [ops.floor(c.detach()) for c in coords]
    # weights of the low / high neighbour: (lo + 1) - c and c - lo, as PyTorch
    weights = [((lo[i] + 1.0) - coords[i], coords[i] - lo[i]) for i in range(nsp)]
    for corner in range(2 ** nsp):
        bits = [(corner >> (nsp - 1 - i)) & 1 for i in range(nsp)]
        pos = [lo[i] + float(bits[i]) if bits[i] else lo[i] for i in range(nsp)]
        w = None
        for i in range(nsp):
            w = weights[i][bits[i]] if w is None else w * weights[i][bits[i]]
        vals, valid = _corner_value(xf, pos, sizes, input.dtype)
        term = vals * w.unsqueeze(1) * valid
        out = term if out is None else out + term
    return out.reshape(N, C, *out_sp)


# ---------------------------------------------------------------- embedding and embedding_bag
class _PaddingIdxError(AssertionError, ValueError):
    """PyTorch asserts (AssertionError) on a bad padding_idx or weight shape; oar also lets ValueError catch it."""


def _normalize_padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num:
            raise _PaddingIdxError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num:
            raise _PaddingIdxError("Padding_idx must be within num_embeddings")
        padding_idx = num + padding_idx
    return int(padding_idx)


def _host_indices(input):
    return np.asarray(input.detach().cpu().numpy()).astype(np.int64).ravel()


def embedding_renorm_(weight, input, max_norm, norm_type=2.0):
    """Rescales in place (no grad) the rows of weight that input looks up whose norm_type-norm exceeds max_norm
    to norm max_norm (scale max_norm / (norm + 1e-7)), as torch.embedding_renorm_."""
    uniq = np.unique(_host_indices(input))
    if uniq.size == 0:
        return weight
    V = weight.shape[0]
    if uniq[0] < 0 or uniq[-1] >= V:
        bad = uniq[0] if uniq[0] < 0 else uniq[-1]
        raise _C.IndexError(f"embedding: index {bad} is out of range for a weight with {V} rows (valid range "
                            f"[0, {V}))")
    with no_grad():
        idx = _conv._tensor(uniq, _C.dtype.int64, weight.device)
        rows = ops.index_select(weight.detach(), idx, dim=0)
        p = float(norm_type)
        a = ops.abs(rows)
        if math.isinf(p):
            norms = ops.max(a, dims=[1], keepdim=True) if p > 0 else ops.min(a, dims=[1], keepdim=True)
        elif p == 0:
            norms = ops.sum((a != 0).to(rows.dtype), dims=[1], keepdim=True)
        elif p == 1:
            norms = ops.sum(a, dims=[1], keepdim=True)
        elif p == 2:
            norms = ops.sqrt(ops.sum(rows * rows, dims=[1], keepdim=True))
        else:
            norms = ops.sum(a ** p, dims=[1], keepdim=True) ** (1.0 / p)
        scale = ops.where(norms > float(max_norm), float(max_norm) / (norms + 1e-7), norms * 0.0 + 1.0)
        weight[idx] = rows * scale
    return weight


def _scale_grad_by_freq(rows, flat_idx, num):
    """rows (looked up at flat_idx) with the same values and gradients divided by each index's count."""
    ones = _fill([flat_idx.shape[0]], 1.0, rows)
    counts = ops.index_add(_fill([num], 0.0, rows), flat_idx, ones, dim=0)
    inv = 1.0 / ops.index_select(counts, flat_idx, dim=0)
    shape = list(rows.shape)
    inv = inv.reshape(*shape[:-1], 1) if rows.ndim > 1 else inv
    d = rows.detach()
    return d + (rows - d) * inv


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight [V, D] at input (any shape); the padding_idx row gets no gradient, max_norm renormalises
    the looked-up rows in place first, scale_grad_by_freq divides gradients by the indices' counts."""
    _check_tensor(input, "input", "embedding")
    _check_tensor(weight, "weight", "embedding")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (use sparse=False)")
    if weight.ndim != 2:
        raise ShapeError(f"embedding(): weight must be 2-D [num_embeddings, dim], got {_shape(weight)}")
    if input.is_floating_point():
        raise _C.DTypeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                            f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding)")
    V = weight.shape[0]
    padding_idx = _normalize_padding_idx(padding_idx, V)
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    out = ops.embedding(weight, input, padding_idx=-1 if padding_idx is None else padding_idx)
    if scale_grad_by_freq and out.requires_grad:
        out = _scale_grad_by_freq(out, input.reshape(-1).to(_C.dtype.int64), V).reshape(*out.shape)
    return out


def _bags(offsets, T, include_last_offset):
    """(number of bags, bag of each of the T entries [T], start offsets [B], lengths [B]) from host offsets."""
    if offsets.is_floating_point() or offsets.dtype == _C.dtype.bool:
        raise _C.DTypeError(f"embedding_bag: expected offsets to have an integer dtype, got {offsets.dtype}")
    off = _host_indices(offsets)
    if off.size > 1 and (np.diff(off) < 0).any():
        raise ShapeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:
        if off.size < 1:
            raise ShapeError("include_last_offset: number of offset should be at least 1")
        starts, ends = off[:-1], off[1:]
    else:
        starts = off
        ends = np.append(off[1:], T)
    if off.size and off[0] != 0:
        raise ShapeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                         f"position 0. However, got {off[0]}")
    if off.size and off[-1] > T:
        raise ShapeError(f"offsets[-1] can not be greater than input's length ({T}), but got offsets[-1] of "
                         f"{off[-1]}")
    ends = np.minimum(np.maximum(ends, starts), T)
    lengths = ends - starts
    bag_of = np.repeat(np.arange(starts.size), lengths)
    return starts.size, bag_of, starts, lengths


def _no_entries(B, rows):
    """The zeros [B, D] of bags without entries, still attached to weight's graph (a zero gradient, as
    PyTorch, rather than none)."""
    zeros = _fill([B, rows.shape[-1]], 0.0, rows)
    if not rows.requires_grad:
        return zeros
    return zeros + ops.sum(rows.reshape(-1, rows.shape[-1]), dims=[0], keepdim=True) * 0.0


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embedding rows: input [B, L] (fixed-length bags) or 1-D with offsets (bag
    i = input[offsets[i]:offsets[i + 1]]); padding_idx entries are left out; empty bags give zeros."""
    _check_tensor(input, "input", "embedding_bag")
    _check_tensor(weight, "weight", "embedding_bag")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.is_floating_point():
        raise _C.DTypeError(f"embedding_bag: expected input to have an integer dtype, got {input.dtype}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported (use sparse=False)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    V, Dm = weight.shape
    padding_idx = _normalize_padding_idx(padding_idx, V)
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    flat = input.reshape(-1).to(_C.dtype.int64)
    T = flat.shape[0]
    rows = ops.embedding(weight, flat, padding_idx=-1 if padding_idx is None else padding_idx)  # [T, D]
    if scale_grad_by_freq and rows.requires_grad:
        rows = _scale_grad_by_freq(rows, flat, V)
    keep = None if padding_idx is None else (flat != padding_idx).to(weight.dtype).unsqueeze(1)  # [T, 1]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(weight.dtype)
    if input.ndim == 2:
        B, L = input.shape
        if mode in ("sum", "mean"):
            r = rows if keep is None else rows * keep
            out = ops.sum(r.reshape(B, L, Dm), dims=[1])
            if mode == "mean":
                if keep is None:
                    out = out * (1.0 / L) if L else out
                else:
                    cnt = ops.sum(keep.reshape(B, L, 1), dims=[1])
                    out = out / ops.clamp(cnt, min=1.0)
            return out
        table = np.arange(B * L).reshape(B, L)
        key = ("bag2d", B, L)
    else:
        B, bag_of, starts, lengths = _bags(offsets, T, include_last_offset)
        used = int(bag_of.size)  # with include_last_offset, the entries past offsets[-1] are in no bag
        if used < T:
            rows = rows[:used]
            keep = None if keep is None else keep[:used]
        if mode in ("sum", "mean"):
            r = rows if keep is None else rows * keep
            bag_t = _conv._tensor(bag_of, _C.dtype.int64, weight.device)
            out = ops.index_add(_fill([B, Dm], 0.0, rows), bag_t, r, dim=0) if used else _no_entries(B, rows)
            if mode == "mean":
                if keep is None:
                    out = out * _conv._tensor(1.0 / np.maximum(lengths, 1), weight.dtype, weight.device).unsqueeze(1)
                else:
                    cnt = ops.index_add(_fill([B, 1], 0.0, rows), bag_t, keep, dim=0) if used else \
                        _fill([B, 1], 0.0, rows)
                    out = out / ops.clamp(cnt, min=1.0)
            return out
        Lmax = int(lengths.max()) if lengths.size else 0
        j = np.arange(Lmax)
        table = np.where(j[None, :] < lengths[:, None], starts[:, None] + j[None, :], -1)
        key = None
    # max: per bag, the entries padded to the longest bag with -inf (padding_idx entries too)
    if table.size == 0:
        return _no_entries(B, rows)
    neg = _fill([1, Dm], float("-inf"), rows)
    r = rows if keep is None else ops.where(keep > 0, rows, neg)
    r = ops.concat([r, neg], dim=0)
    tidx = np.where(table < 0, rows.shape[0], table).ravel()  # the -inf row concatenated to r
    idx = _on_device(key, weight.device, lambda: tidx) if key else _conv._tensor(tidx, _C.dtype.int64, weight.device)
    w = ops.index_select(r, idx, dim=0).reshape(B, table.shape[1], Dm)
    am = ops.argmax(w, dims=[1], keepdim=True)
    out = ops.gather(w, am, dim=1).squeeze(1)
    empty = ops.max(w.detach(), dims=[1]) == float("-inf")
    return ops.where(empty, _fill([1], 0.0, rows), out)
