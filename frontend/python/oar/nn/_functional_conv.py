"""Convolutions, pooling and im2col of oar.nn.functional beyond the catalog's 2-D ops (re-exported there).

Everything is a composition of catalog ops that have gradients and run on every device:
  * conv1d / conv_transpose1d: the 2-D ops on a height-1 input;
  * conv3d: one conv2d whose channels are the kD depth-strided slices of the input (channel c * kD + kd,
    which keeps the groups contiguous), on the batch of output depths;
  * conv_transpose2d: the catalog's conv2d_backward_data (it has gradients for both operands);
    conv_transpose3d: that op with the kernel depth folded into the output channels, then an index_add
    of each (input depth, kernel depth) plane into output depth d * stride + kd * dilation;
  * pooling with dilation, indices, 3-D or adaptive windows: a table of flat input positions per output
    window (-1 outside the input) read with index_select (padding reads a -inf / 0 column), then
    argmax + gather (max: the first maximum gets the gradient, as in PyTorch) or a weighted sum (avg);
  * unfold / fold: the same position tables, read with index_select / accumulated with index_add.
The index tables are built once per shape with NumPy and cached per device.
"""
import functools
import numbers

import numpy as np

from .. import _C
from .._C import ShapeError
from .._ops import ops
from ._loss_functions import _check_tensor

__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool1d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool3d", "lp_pool1d",
           "lp_pool2d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold", "fold"]


# ---------------------------------------------------------------- argument helpers
def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _ntuple(v, n, name):
    """An int or a sequence of n ints as a tuple of n ints (PyTorch's _single/_pair/_triple)."""
    if _is_int(v):
        return (int(v),) * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(_is_int(e) for e in v):
        return tuple(int(e) for e in v)
    if isinstance(v, (tuple, list)) and len(v) == 1 and _is_int(v[0]):
        return (int(v[0]),) * n
    raise TypeError(f"{name} must be an int or a tuple of {n} ints, got {v!r}")


def _shape(t):
    return list(t.shape)


_DEVICE_CACHE = {}


def _on_device(key, device, build, dtype=None):
    """The tensor of build() (a NumPy array) on device, cached per (key, device, dtype)."""
    k = (key, str(device), str(dtype))
    t = _DEVICE_CACHE.get(k)
    if t is None:
        if len(_DEVICE_CACHE) > 512:
            _DEVICE_CACHE.clear()
        t = _tensor(build(), dtype if dtype is not None else _C.dtype.int64, device)
        _DEVICE_CACHE[k] = t
    return t


def _tensor(arr, dtype, device):
    from .._creation import tensor
    return tensor(np.ascontiguousarray(arr), dtype=dtype, device=device)


def _fill(shape, value, like):
    return ops.fill(shape=[int(s) for s in shape], value=float(value), dtype=like.dtype, device=like.device)


def _batched(input, nsp, name, what="input"):
    """(input with a batch dim, whether one was added): [C, *sp] or [N, C, *sp] with nsp spatial dims."""
    if input.ndim == nsp + 1:
        return input.unsqueeze(0), True
    if input.ndim != nsp + 2:
        raise ShapeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) {what} to {name}, but got "
                         f"input of size: {_shape(input)}")
    return input, False


def _check_conv_operands(x, weight, bias, groups, nsp, transposed, name):
    """PyTorch's messages for mismatched convolution operands (x batched)."""
    if weight.ndim != nsp + 2:
        raise ShapeError(f"{name}: expected weight to be {nsp + 2}-dimensional, but got weight of size "
                         f"{_shape(weight)}")
    if not _is_int(groups) or groups < 1:
        raise ValueError(f"{name}: non-positive groups is not supported, got groups={groups!r}")
    C = x.shape[1]
    if transposed:
        if C != weight.shape[0]:
            raise ShapeError(f"Given transposed=1, weight of size {_shape(weight)}, expected input{_shape(x)} to "
                             f"have {weight.shape[0]} channels, but got {C} channels instead")
        if weight.shape[0] % groups:
            raise ShapeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                             f"but got weight of size {_shape(weight)} instead")
        out_channels = weight.shape[1] * groups
    else:
        if weight.shape[0] % groups:
            raise ShapeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                             f"but got weight of size {_shape(weight)} instead")
        if C != weight.shape[1] * groups:
            raise ShapeError(f"Given groups={groups}, weight of size {_shape(weight)}, expected input{_shape(x)} "
                             f"to have {weight.shape[1] * groups} channels, but got {C} channels instead")
        out_channels = weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise ShapeError(f"Given weight of size {_shape(weight)}, expected bias to be 1-dimensional with "
                         f"{out_channels} elements, but got bias of size {_shape(bias)} instead")
    return out_channels


def _conv_padding(padding, weight, stride, dilation, nsp, name):
    """(padding per dim, explicit (left, right) F.pad list or None) for ints, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nsp, None
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(nsp)]
            lo = [t // 2 for t in total]
            if any(t % 2 for t in total):  # odd total: the extra row goes at the end, as PyTorch
                pads = []
                for i in reversed(range(nsp)):
                    pads += [lo[i], total[i] - lo[i]]
                return (0,) * nsp, pads
            return tuple(lo), None
        raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    return _ntuple(padding, nsp, "padding"), None


def _check_sizes(x, weight, padding, dilation, nsp, name):
    k = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(nsp)]
    padded = [x.shape[2 + i] + 2 * padding[i] for i in range(nsp)]
    if any(padded[i] < k[i] for i in range(nsp)):
        raise ShapeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                         f"size: ({' x '.join(map(str, k))}). Kernel size can't be greater than actual input size")


def _narrow(x, dim, start, length):
    """x.narrow(dim, start, length) as basic indexing (a view)."""
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def circular_pad(x, pads):
    """F.pad(mode='circular'): pads = (left, right, top, bottom, ...) from the last dim, wrapping around."""
    for i in range(len(pads) // 2):
        dim = x.ndim - 1 - i
        lo, hi = int(pads[2 * i]), int(pads[2 * i + 1])
        n = x.shape[dim]
        if lo > n or hi > n:
            raise ValueError("Padding value causes wrapping around more than once.")
        if lo < 0:
            x, n, lo = _narrow(x, dim, -lo, n + lo), n + lo, 0
        if hi < 0:
            x, n, hi = _narrow(x, dim, 0, n + hi), n + hi, 0
        parts = ([_narrow(x, dim, n - lo, lo)] if lo else []) + [x] + ([_narrow(x, dim, 0, hi)] if hi else [])
        if len(parts) > 1:
            x = ops.concat(parts, dim=dim)
    return x


# ---------------------------------------------------------------- convolutions
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of [N, C, L] (or [C, L]) with weight [C_out, C / groups, k]: conv2d at height 1."""
    _check_tensor(input, "input", "conv1d")
    x, squeeze = _batched(input, 1, "conv1d")
    stride, dilation = _ntuple(stride, 1, "stride"), _ntuple(dilation, 1, "dilation")
    _check_conv_operands(x, weight, bias, groups, 1, False, "conv1d")
    padding, pads = _conv_padding(padding, weight, stride, dilation, 1, "conv1d")
    if pads is not None:
        x = ops.pad(x, pads=pads)
    _check_sizes(x, weight, padding, dilation, 1, "conv1d")
    y = ops.conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, stride=[1, stride[0]], padding=[0, padding[0]],
                   dilation=[1, dilation[0]], groups=int(groups)).squeeze(2)
    return y.squeeze(0) if squeeze else y


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of [N, C, D, H, W] (or unbatched) with weight [C_out, C / groups, kD, kH, kW]."""
    _check_tensor(input, "input", "conv3d")
    x, squeeze = _batched(input, 3, "conv3d")
    stride, dilation = _ntuple(stride, 3, "stride"), _ntuple(dilation, 3, "dilation")
    O = _check_conv_operands(x, weight, bias, groups, 3, False, "conv3d")
    padding, pads = _conv_padding(padding, weight, stride, dilation, 3, "conv3d")
    if pads is not None:
        x = ops.pad(x, pads=pads)
    _check_sizes(x, weight, padding, dilation, 3, "conv3d")
    if padding[0]:
        x = ops.pad(x, pads=[0, 0, 0, 0, padding[0], padding[0]])
    N, C, D, H, W = x.shape
    kD = weight.shape[2]
    sD, dD = stride[0], dilation[0]
    oD = (D - dD * (kD - 1) - 1) // sD + 1
    span = (oD - 1) * sD + 1
    if kD == 1:
        cols = x[:, :, 0:span:sD]  # [N, C, oD, H, W]
        x2 = cols.permute(0, 2, 1, 3, 4).reshape(N * oD, C, H, W)
    else:
        slices = [x[:, :, kd * dD:kd * dD + span:sD] for kd in range(kD)]
        cols = ops.stack(slices, dim=2)  # [N, C, kD, oD, H, W]
        x2 = cols.permute(0, 3, 1, 2, 4, 5).reshape(N * oD, C * kD, H, W)
    w2 = weight.reshape(O, weight.shape[1] * kD, weight.shape[3], weight.shape[4])
    y = ops.conv2d(x2, w2, bias, stride=list(stride[1:]), padding=list(padding[1:]), dilation=list(dilation[1:]),
                   groups=int(groups))
    y = y.reshape(N, oD, O, y.shape[2], y.shape[3]).permute(0, 2, 1, 3, 4)
    return y.squeeze(0) if squeeze else y


def _transposed_sizes(x, weight, stride, padding, output_padding, dilation, nsp, name):
    for i in range(nsp):
        if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
            raise ShapeError(f"output padding must be smaller than either stride or dilation, but got "
                             f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
        if stride[i] < 1 or dilation[i] < 1 or padding[i] < 0 or output_padding[i] < 0:
            raise ShapeError(f"{name}: stride and dilation must be positive, padding and output_padding "
                             f"non-negative, got stride={stride}, padding={padding}, output_padding="
                             f"{output_padding}, dilation={dilation}")
    out = [(x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1)
           + output_padding[i] + 1 for i in range(nsp)]
    if any(o <= 0 for o in out):
        raise ShapeError(f"{name}: given input size {_shape(x)[2:]}, the calculated output size {out} is too small")
    return out


def _transposed_args(input, weight, bias, stride, padding, output_padding, groups, dilation, nsp, name):
    _check_tensor(input, "input", name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, squeeze = _batched(input, nsp, name)
    stride, padding = _ntuple(stride, nsp, "stride"), _ntuple(padding, nsp, "padding")
    output_padding, dilation = _ntuple(output_padding, nsp, "output_padding"), _ntuple(dilation, nsp, "dilation")
    O = _check_conv_operands(x, weight, bias, groups, nsp, True, name)
    out = _transposed_sizes(x, weight, stride, padding, output_padding, dilation, nsp, name)
    return x, squeeze, stride, padding, output_padding, dilation, O, out


def _add_bias(y, bias, nsp):
    return y if bias is None else y + bias.reshape(-1, *([1] * nsp))


def _transposed2d(x, weight, O, out, stride, padding, output_padding, dilation, groups):
    """Transposed 2-D convolution [N, C_in, H, W] -> [N, O, *out] (no bias) with the catalog's
    conv2d_backward_data. That op needs the forward conv of out to give back H x W, which fails when
    output_padding >= stride (allowed while output_padding < dilation): then the full, unpadded result is
    computed, zero-extended by the output padding past the cropped rows and cropped to out."""
    if all(output_padding[i] < stride[i] for i in range(2)):
        return ops.conv2d_backward_data(x, weight, input_shape=[x.shape[0], O] + list(out), stride=list(stride),
                                        padding=list(padding), dilation=list(dilation), groups=int(groups))
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(2)]
    y = ops.conv2d_backward_data(x, weight, input_shape=[x.shape[0], O] + full, stride=list(stride),
                                 padding=[0, 0], dilation=list(dilation), groups=int(groups))
    extra = [max(0, output_padding[i] - padding[i]) for i in range(2)]
    if any(extra):
        y = ops.pad(y, pads=[0, extra[1], 0, extra[0]])
    return y[:, :, padding[0]:padding[0] + out[0], padding[1]:padding[1] + out[1]]


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution of [N, C_in, H, W] with weight [C_in, C_out / groups, kH, kW]."""
    x, squeeze, stride, padding, output_padding, dilation, O, out = _transposed_args(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")
    y = _transposed2d(x, weight, O, out, stride, padding, output_padding, dilation, groups)
    y = _add_bias(y, bias, 2)
    return y.squeeze(0) if squeeze else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of [N, C_in, L] with weight [C_in, C_out / groups, k]."""
    x, squeeze, stride, padding, output_padding, dilation, O, out = _transposed_args(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")
    y = _transposed2d(x.unsqueeze(2), weight.unsqueeze(2), O, [1] + out, [1, stride[0]], [0, padding[0]],
                      [0, output_padding[0]], [1, dilation[0]], groups).squeeze(2)
    y = _add_bias(y, bias, 1)
    return y.squeeze(0) if squeeze else y


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of [N, C_in, D, H, W] with weight [C_in, C_out / groups, kD, kH, kW]."""
    x, squeeze, stride, padding, output_padding, dilation, O, out = _transposed_args(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d")
    N, Ci, D, H, W = x.shape
    kD = weight.shape[2]
    x2 = x.permute(0, 2, 1, 3, 4).reshape(N * D, Ci, H, W)
    # kernel depth folded into the output channels: channel co * kD + kd (the groups stay contiguous)
    w2 = weight.reshape(Ci, weight.shape[1] * kD, weight.shape[3], weight.shape[4])
    y2 = _transposed2d(x2, w2, O * kD, out[1:], stride[1:], padding[1:], output_padding[1:], dilation[1:], groups)
    Ho, Wo = out[1], out[2]
    src = y2.reshape(N, D, O, kD, Ho, Wo).permute(0, 2, 1, 3, 4, 5).reshape(N, O, D * kD, Ho, Wo)
    sD, dD, pD = stride[0], dilation[0], padding[0]
    full = out[0] + 2 * pD
    idx = _on_device(("convT3d", D, kD, sD, dD), x.device,
                     lambda: (np.arange(D)[:, None] * sD + np.arange(kD)[None, :] * dD).ravel())
    y = ops.index_add(_fill([N, O, full, Ho, Wo], 0.0, src), idx, src, dim=2)
    if pD:
        y = _narrow(y, 2, pD, out[0])
    y = _add_bias(y, bias, 3)
    return y.squeeze(0) if squeeze else y


# ---------------------------------------------------------------- pooling: window tables
def _pool_out_size(L, k, s, p, d, ceil_mode):
    o = (L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= L + p:
        o -= 1
    return o


def _combine(per_dim, sizes):
    """Per-dim position arrays [O_i, K_i] (-1 outside) -> flat positions [prod O, prod K] (-1 outside)."""
    n = len(per_dim)
    flat = np.zeros([1] * (2 * n), dtype=np.int64)
    valid = np.ones([1] * (2 * n), dtype=bool)
    stride = 1
    for i in reversed(range(n)):
        pos = per_dim[i]
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = pos.shape
        pos = pos.reshape(shape)
        flat = flat + np.where(pos >= 0, pos, 0) * stride
        valid = valid & (pos >= 0)
        stride *= sizes[i]
    flat = np.where(valid, flat, -1)
    P = int(np.prod([p.shape[0] for p in per_dim]))
    K = int(np.prod([p.shape[1] for p in per_dim]))
    return np.broadcast_to(flat, [p.shape[0] for p in per_dim] + [p.shape[1] for p in per_dim]).reshape(P, K)


@functools.lru_cache(maxsize=256)
def _window_table(sizes, k, s, p, d, ceil_mode):
    """(output sizes, flat input positions [P, K] of each window, -1 in the padding)."""
    outs, per_dim = [], []
    for i, L in enumerate(sizes):
        o = _pool_out_size(L, k[i], s[i], p[i], d[i], ceil_mode)
        pos = np.arange(o)[:, None] * s[i] - p[i] + np.arange(k[i])[None, :] * d[i]
        per_dim.append(np.where((pos >= 0) & (pos < L), pos, -1))
        outs.append(o)
    table = _combine(per_dim, sizes)
    # padding entries last in each window: max pooling's argmax takes the first maximum, and a window of -inf
    # must give (as PyTorch) its first input position, not the padding
    order = np.argsort(table < 0, axis=1, kind="stable")
    return tuple(outs), np.take_along_axis(table, order, axis=1)


@functools.lru_cache(maxsize=256)
def _avg_divisors(sizes, k, s, p, ceil_mode, count_include_pad):
    """PyTorch's avg_pool divisor per window: the window clipped to the padded input (count_include_pad)
    or to the input."""
    div = np.ones([1] * len(sizes), dtype=np.float64)
    for i, L in enumerate(sizes):
        o = _pool_out_size(L, k[i], s[i], p[i], 1, ceil_mode)
        start = np.arange(o) * s[i] - p[i]
        end = np.minimum(start + k[i], L + p[i])
        n = end - start if count_include_pad else np.minimum(end, L) - np.maximum(start, 0)
        shape = [1] * len(sizes)
        shape[i] = o
        div = div * n.reshape(shape)
    return div.ravel()


@functools.lru_cache(maxsize=256)
def _adaptive_table(sizes, outs):
    """(flat input positions [P, K] of PyTorch's adaptive bins [floor(i L / o), ceil((i + 1) L / o)), -1 past a
    bin's end; the number of positions per bin [P])."""
    per_dim, counts = [], np.ones([1] * len(sizes), dtype=np.int64)
    for i, (L, o) in enumerate(zip(sizes, outs)):
        start = (np.arange(o) * L) // o
        end = ((np.arange(o) + 1) * L + o - 1) // o
        kmax = int((end - start).max())
        pos = start[:, None] + np.arange(kmax)[None, :]
        per_dim.append(np.where(pos < end[:, None], pos, -1))
        shape = [1] * len(sizes)
        shape[i] = o
        counts = counts * (end - start).reshape(shape)
    return _combine(per_dim, sizes), counts.ravel()


def _windows(x, table_key, table, pad_value):
    """x [N, C, *sp] -> [N, C, P, K]: the window entries (pad_value where the table says -1)."""
    N, C = x.shape[0], x.shape[1]
    S = int(np.prod(x.shape[2:]))
    P, K = table.shape
    xf = x.reshape(N, C, S)
    if (table < 0).any():
        xf = ops.concat([xf, _fill([N, C, 1], pad_value, x)], dim=2)
    idx = _on_device(("win",) + table_key, x.device, lambda: np.where(table < 0, S, table).ravel())
    return ops.index_select(xf, idx, dim=2).reshape(N, C, P, K)


def _max_over_windows(x, table_key, table, outs, return_indices):
    if not x.is_floating_point():
        raise _C.DTypeError(f"max pooling is only implemented for floating-point inputs, got {x.dtype}")
    N, C = x.shape[0], x.shape[1]
    w = _windows(x, table_key, table, float("-inf"))
    am = ops.argmax(w, dims=[3], keepdim=True)
    y = ops.gather(w, am, dim=3).reshape(N, C, *outs)
    if not return_indices:
        return y
    tbl = _on_device(("tbl",) + table_key, x.device, lambda: table)
    ind = ops.gather(tbl.expand(N, C, *table.shape), am, dim=3).reshape(N, C, *outs)
    return y, ind


def _pool_check(input, nsp, name):
    _check_tensor(input, "input", name)
    if input.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(f"{name}: Expected {nsp + 1}D or {nsp + 2}D (batch mode) tensor for input, but got input "
                         f"of size: {_shape(input)}")
    return (input.unsqueeze(0), True) if input.ndim == nsp + 1 else (input, False)


def _pool_params(kernel_size, stride, padding, dilation, nsp, name):
    k = _ntuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        _ntuple(stride, nsp, "stride")
    p, d = _ntuple(padding, nsp, "padding"), _ntuple(dilation, nsp, "dilation")
    if any(v <= 0 for v in k):
        raise ShapeError(f"{name}: kernel_size must be greater than zero, but got {k}")
    if any(v <= 0 for v in s):
        raise ShapeError(f"{name}: stride must be greater than zero, but got {s}")
    if any(v <= 0 for v in d):
        raise ShapeError(f"{name}: dilation must be greater than zero, but got {d}")
    if any(v < 0 for v in p) or any(p[i] > ((k[i] - 1) * d[i] + 1) // 2 for i in range(nsp)):
        raise ShapeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                         f"kernel_size={k} and dilation={d}")
    return k, s, p, d


def _check_out(x, outs, name):
    if any(o < 1 for o in outs):
        sp = "x".join(str(v) for v in [x.shape[1]] + list(x.shape[2:]))
        op = "x".join(str(v) for v in [x.shape[1]] + list(outs))
        raise ShapeError(f"{name}: Given input size: ({sp}). Calculated output size: ({op}). Output size is too "
                         f"small")


def _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nsp, name):
    x, squeeze = _pool_check(input, nsp, name)
    k, s, p, d = _pool_params(kernel_size, stride, padding, dilation, nsp, name)
    sizes = tuple(x.shape[2:])
    outs = tuple(_pool_out_size(sizes[i], k[i], s[i], p[i], d[i], bool(ceil_mode)) for i in range(nsp))
    _check_out(x, outs, name)
    if not return_indices and all(v == 1 for v in d) and nsp <= 2:  # the catalog's kernel
        if nsp == 1:
            y = ops.max_pool2d(x.unsqueeze(2), kernel_size=[1, k[0]], stride=[1, s[0]], padding=[0, p[0]],
                               ceil_mode=bool(ceil_mode)).squeeze(2)
        else:
            y = ops.max_pool2d(x, kernel_size=list(k), stride=list(s), padding=list(p), ceil_mode=bool(ceil_mode))
        return y.squeeze(0) if squeeze else y
    key = (sizes, k, s, p, d, bool(ceil_mode))
    outs, table = _window_table(*key)
    r = _max_over_windows(x, ("max",) + key, table, outs, return_indices)
    if squeeze:
        return (r[0].squeeze(0), r[1].squeeze(0)) if return_indices else r.squeeze(0)
    return r


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def max_pool2d_generic(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                       return_indices=False):
    """max_pool2d with dilation and/or return_indices (F.max_pool2d hands those cases here)."""
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool2d_generic(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nsp, name):
    x, squeeze = _pool_check(input, nsp, name)
    k, s, p, _ = _pool_params(kernel_size, stride, padding, 1, nsp, name)
    if divisor_override is not None and (not _is_int(divisor_override) or divisor_override == 0):
        raise ShapeError(f"{name}: divisor must be not zero")
    sizes = tuple(x.shape[2:])
    outs = tuple(_pool_out_size(sizes[i], k[i], s[i], p[i], 1, bool(ceil_mode)) for i in range(nsp))
    _check_out(x, outs, name)
    if nsp == 1 and divisor_override is None:
        y = ops.avg_pool2d(x.unsqueeze(2), kernel_size=[1, k[0]], stride=[1, s[0]], padding=[0, p[0]],
                           ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad)).squeeze(2)
        return y.squeeze(0) if squeeze else y
    key = (sizes, k, s, p, (1,) * nsp, bool(ceil_mode))
    outs, table = _window_table(*key)
    w = _windows(x, ("avg",) + key, table, 0.0)
    if divisor_override is not None:
        y = ops.sum(w, dims=[3]) * (1.0 / float(divisor_override))
    else:
        inv = _on_device(("avgdiv", sizes, k, s, p, bool(ceil_mode), bool(count_include_pad)), x.device,
                         lambda: 1.0 / _avg_divisors(sizes, k, s, p, bool(ceil_mode), bool(count_include_pad)),
                         dtype=x.dtype)
        y = ops.sum(w, dims=[3]) * inv
    y = y.reshape(x.shape[0], x.shape[1], *outs)
    return y.squeeze(0) if squeeze else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                        "avg_pool3d")


def avg_pool2d_generic(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                       divisor_override=None):
    """avg_pool2d with divisor_override (any padding / ceil_mode)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                        "avg_pool2d")


# ---------------------------------------------------------------- adaptive pooling
def _adaptive_sizes(x, output_size, nsp, name):
    if output_size is None or _is_int(output_size):
        output_size = (output_size,) * nsp
    if not isinstance(output_size, (tuple, list)) or len(output_size) != nsp:
        raise ValueError(f"{name}: output_size must be an int or a tuple of {nsp} ints (or None), got "
                         f"{output_size!r}")
    outs = tuple(x.shape[2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    if any(o < 0 for o in outs) or (any(o == 0 for o in outs) and x.numel()):
        raise ShapeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                         f"{list(outs)}")
    if any(x.shape[2 + i] == 0 for i in range(nsp)):
        raise ShapeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but input has "
                         f"sizes {_shape(x)} with dimension {2 + [x.shape[2 + i] for i in range(nsp)].index(0)} "
                         f"being empty")
    return outs


def _adaptive_check(input, nsp, name):
    _check_tensor(input, "input", name)
    if input.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: {_shape(input)}")
    return (input.unsqueeze(0), True) if input.ndim == nsp + 1 else (input, False)


def _adaptive_max_nd(input, output_size, return_indices, nsp, name):
    x, squeeze = _adaptive_check(input, nsp, name)
    outs = _adaptive_sizes(x, output_size, nsp, name)
    sizes = tuple(x.shape[2:])
    if not return_indices and nsp <= 2 and all(sizes[i] % outs[i] == 0 for i in range(nsp)):
        k = [sizes[i] // outs[i] for i in range(nsp)]  # even bins: the catalog's kernel
        if nsp == 1:
            y = ops.max_pool2d(x.unsqueeze(2), kernel_size=[1, k[0]], stride=[1, k[0]], padding=[0, 0]).squeeze(2)
        else:
            y = ops.max_pool2d(x, kernel_size=k, stride=k, padding=[0, 0])
        return y.squeeze(0) if squeeze else y
    table, _ = _adaptive_table(sizes, outs)
    r = _max_over_windows(x, ("amax", sizes, outs), table, outs, return_indices)
    if squeeze:
        return (r[0].squeeze(0), r[1].squeeze(0)) if return_indices else r.squeeze(0)
    return r


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


def _adaptive_avg_nd(input, output_size, nsp, name):
    x, squeeze = _adaptive_check(input, nsp, name)
    outs = _adaptive_sizes(x, output_size, nsp, name)
    sizes = tuple(x.shape[2:])
    if nsp == 1 and sizes[0] % outs[0] == 0:
        k = sizes[0] // outs[0]
        y = ops.avg_pool2d(x.unsqueeze(2), kernel_size=[1, k], stride=[1, k], padding=[0, 0]).squeeze(2)
        return y.squeeze(0) if squeeze else y
    table, counts = _adaptive_table(sizes, outs)
    w = _windows(x, ("aavg", sizes, outs), table, 0.0)
    inv = _on_device(("aavgdiv", sizes, outs), x.device, lambda: 1.0 / counts.astype(np.float64), dtype=x.dtype)
    y = (ops.sum(w, dims=[3]) * inv).reshape(x.shape[0], x.shape[1], *outs)
    return y.squeeze(0) if squeeze else y


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg_nd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_nd(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_avg_pool2d_generic(input, output_size):
    return _adaptive_avg_nd(input, output_size, 2, "adaptive_avg_pool2d")


# ---------------------------------------------------------------- power-average and unpooling
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nsp):
    from . import functional as F
    k = _ntuple(kernel_size, nsp, "kernel_size")
    pool = F.avg_pool2d if nsp == 2 else avg_pool1d
    if stride is not None:
        out = pool(input.pow(float(norm_type)), k, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(float(norm_type)), k, padding=0, ceil_mode=ceil_mode)
    return (ops.sign(out) * ops.relu(ops.abs(out)) * float(np.prod(k))).pow(1.0 / float(norm_type))


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x ** p) ** (1 / p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nsp, name):
    _check_tensor(input, "input", name)
    _check_tensor(indices, "indices", name)
    k = _ntuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None else _ntuple(stride, nsp, "stride")
    p = _ntuple(padding, nsp, "padding")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{name}: Expected shape of indices to be same as that of the input tensor "
                         f"({_shape(input)}) but got indices tensor with shape: {_shape(indices)}")
    if input.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(f"{name}: Expected {nsp + 1}D or {nsp + 2}D tensor, but got: {_shape(input)}")
    default = [(input.shape[input.ndim - nsp + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nsp)]
    if output_size is None:
        out = default
    else:
        out = [int(v) for v in output_size]
        if len(out) == nsp + 2 or (len(out) == nsp + 1 and input.ndim == nsp + 1):
            out = out[len(out) - nsp:]
        if len(out) != nsp:
            raise ValueError(f"output_size should be a sequence containing {nsp} or {nsp + 2} elements, but it has "
                             f"a length of '{len(out)}'")
        for i in range(nsp):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < out[i] < hi:
                raise ValueError(f"invalid output_size \"{out}\" (dim {i} must be between {lo} and {hi})")
    squeeze = input.ndim == nsp + 1
    x, ind = (input.unsqueeze(0), indices.unsqueeze(0)) if squeeze else (input, indices)
    N, C = x.shape[0], x.shape[1]
    S = int(np.prod(out))
    flat = ind.reshape(N, C, -1)
    src = x.reshape(N, C, -1)
    zeros = _fill([N, C, S], 0.0, x)
    # PyTorch writes output[idx] = input (overlapping windows repeat an index, with the same value): the sum
    # of the repeats over their count is that value; each repeat's gradient is the output's at its index.
    total = ops.scatter_add(zeros, flat, src.detach(), dim=2)
    count = ops.scatter_add(zeros, flat, _fill(flat.shape, 1.0, x), dim=2)
    y = total / ops.clamp(count, min=1.0)
    if src.requires_grad:
        y = y + ops.scatter_add(zeros, flat, src - src.detach(), dim=2)
    y = y.reshape(N, C, *out)
    return y.squeeze(0) if squeeze else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool1d(return_indices=True): zeros except the maxima, put back at their indices."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


# ---------------------------------------------------------------- im2col / col2im
@functools.lru_cache(maxsize=256)
def _im2col_table(padded, k, d, s):
    """Flat positions in the padded [Hp, Wp] plane of each block element: [K, L] (K = kh * kw, L = blocks)."""
    outs = [(padded[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    rows = np.arange(k[0])[:, None] * d[0] + np.arange(outs[0])[None, :] * s[0]  # [kh, oh]
    cols = np.arange(k[1])[:, None] * d[1] + np.arange(outs[1])[None, :] * s[1]  # [kw, ow]
    t = rows[:, None, :, None] * padded[1] + cols[None, :, None, :]  # [kh, kw, oh, ow]
    return tuple(outs), t.reshape(k[0] * k[1], outs[0] * outs[1])


def _fold_args(kernel_size, dilation, padding, stride):
    k, d = _ntuple(kernel_size, 2, "kernel_size"), _ntuple(dilation, 2, "dilation")
    p, s = _ntuple(padding, 2, "padding"), _ntuple(stride, 2, "stride")
    if any(v <= 0 for v in k) or any(v <= 0 for v in d) or any(v <= 0 for v in s) or any(v < 0 for v in p):
        raise ShapeError(f"kernel size, dilation and stride should be greater than zero and padding non-negative, "
                         f"but got kernel_size={k}, dilation={d}, padding={p}, stride={s}")
    return k, d, p, s


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L], the sliding blocks as columns."""
    _check_tensor(input, "input", "unfold")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4):
        raise ShapeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    squeeze = input.ndim == 3
    x = input.unsqueeze(0) if squeeze else input
    N, C, H, W = x.shape
    padded = (H + 2 * p[0], W + 2 * p[1])
    outs = [(padded[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if any(o < 1 for o in outs):
        raise ShapeError(f"Given input with spatial size ({H}, {W}), kernel_size={k}, dilation={d}, padding={p}, "
                         f"calculated shape of the array of sliding blocks as ({outs[0]}, {outs[1]}), but its "
                         f"components must be at least one.")
    if any(p):
        x = ops.pad(x, pads=[p[1], p[1], p[0], p[0]])
    outs, table = _im2col_table(padded, k, d, s)
    idx = _on_device(("im2col", padded, k, d, s), x.device, lambda: table.ravel())
    K, L = table.shape
    y = ops.index_select(x.reshape(N, C, padded[0] * padded[1]), idx, dim=2).reshape(N, C * K, L)
    return y.squeeze(0) if squeeze else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: [N, C * kh * kw, L] (or unbatched) -> [N, C, H, W], overlapping block entries summed."""
    _check_tensor(input, "input", "fold")
    o = _ntuple(output_size, 2, "output_size")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3):
        raise ShapeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                         f"(got {input.ndim}D)")
    squeeze = input.ndim == 2
    x = input.unsqueeze(0) if squeeze else input
    N, CK, L = x.shape
    K = k[0] * k[1]
    if CK % K:
        raise ShapeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                         f"got input.size(1)={CK} and kernel_size={k}")
    padded = (o[0] + 2 * p[0], o[1] + 2 * p[1])
    blocks = [(padded[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if any(b < 1 for b in blocks):
        raise ShapeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                         f"calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), but its "
                         f"components must be at least one.")
    if blocks[0] * blocks[1] != L:
        raise ShapeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, expected "
                         f"size of input's dimension 2 to match the calculated number of sliding blocks "
                         f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={L}.")
    C = CK // K
    _, table = _im2col_table(padded, k, d, s)
    idx = _on_device(("im2col", padded, k, d, s), x.device, lambda: table.ravel())
    y = ops.index_add(_fill([N, C, padded[0] * padded[1]], 0.0, x), idx, x.reshape(N, C, K * L), dim=2)
    y = y.reshape(N, C, padded[0], padded[1])
    if any(p):
        y = y[:, :, p[0]:p[0] + o[0], p[1]:p[1] + o[1]]
    return y.squeeze(0) if squeeze else y
