"""oar.nn.functional (import as F): PyTorch's functional API over the op catalog.

Each function validates its Python-level arguments (raising ValueError /
TypeError / oar.ShapeError with the argument's name) and then calls one or a
few catalog ops, so autograd comes from the ops' gradient rules. Features the
catalog has no op for (class weights in losses, soft-label cross entropy,
uneven adaptive pooling) are composed here from simpler ops.
"""
import numbers

from .. import _C
from .._C import ShapeError
from .._ops import ops
from .. import _functions as _fn
from ..autograd import no_grad, is_grad_enabled
from ._loss_functions import (_check_tensor, cross_entropy, nll_loss, mse_loss, l1_loss,  # noqa: F401
                              smooth_l1_loss, huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits)

__all__ = ["linear", "relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "elu", "softplus", "softmax",
           "log_softmax", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "hardtanh",
           "hardsigmoid", "hardswish", "mish", "selu", "celu", "threshold", "relu_", "elu_", "leaky_relu_",
           "hardtanh_", "selu_", "celu_", "threshold_", "conv2d", "max_pool2d", "avg_pool2d",
           "adaptive_avg_pool2d", "batch_norm", "layer_norm", "embedding", "cross_entropy", "nll_loss", "mse_loss",
           "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "pad", "one_hot", "normalize", "flatten", "feature_alpha_dropout", "bilinear"]

from .attention import scaled_dot_product_attention, multi_head_attention_forward  # noqa: E402,F401
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]

# Normalization, activation, loss and distance functions kept in their own modules (nn/_functional_*.py).
from ._functional_norm import *  # noqa: E402,F401,F403
from ._functional_activation import *  # noqa: E402,F401,F403
from ._functional_loss import *  # noqa: E402,F401,F403
from . import _functional_norm, _functional_activation, _functional_loss  # noqa: E402
# Convolutions, pooling, im2col (nn/_functional_conv.py); resampling, grid_sample, embedding_bag (_functional_sampling).
from ._functional_conv import *  # noqa: E402,F401,F403
from ._functional_sampling import *  # noqa: E402,F401,F403
from . import _functional_conv, _functional_sampling  # noqa: E402
__all__ += _functional_conv.__all__ + _functional_sampling.__all__
__all__ += _functional_norm.__all__ + _functional_activation.__all__ + _functional_loss.__all__


def _pair(v, name, n=2):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return [int(v)] * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(e, numbers.Integral) for e in v):
        return [int(e) for e in v]
    raise TypeError(f"{name} must be an int or a tuple of {n} ints, got {v!r}")


# ---- linear and activations ----
# y = input @ weight.T + bias: straight to C++ (the hot path of every MLP);
# the catalog's inference checks shapes, nanobind rejects non-tensors with TypeError.
linear = _C.linear


def _inplace(input, fn, inplace):
    """fn(input), or with inplace=True (PyTorch) fn's result made input's value, and input itself returned.
    The result's memory is taken over when nothing else sees input's (no copy; values saved for backward
    stay intact); otherwise, when autograd records, fn reads a clone (its op may save the input for
    backward, which the write would overwrite): Tensor._inplace_src decides."""
    if not inplace:
        return fn(input)
    return input._update_(fn(input._inplace_src()))


def relu(input, inplace=False):
    return _inplace(input, ops.relu, inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(f"hardtanh(): min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _inplace(input, lambda x: ops.clamp(x, min=float(min_val), max=float(max_val)), inplace)


def _hardsigmoid(x):
    return ops.clamp(x / 6.0 + 0.5, min=0.0, max=1.0)


def hardsigmoid(input, inplace=False):
    return _inplace(input, _hardsigmoid, inplace)


def hardswish(input, inplace=False):
    return _inplace(input, lambda x: x * _hardsigmoid(x), inplace)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    return ops.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _inplace(input, ops.silu, inplace)


def mish(input, inplace=False):
    return _inplace(input, lambda x: x * ops.tanh(softplus(x)), inplace)


def sigmoid(input):
    return ops.sigmoid(input)


def tanh(input):
    return ops.tanh(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace(input, lambda x: ops.leaky_relu(x, negative_slope=float(negative_slope)), inplace)


def _expm1_neg(input, alpha, scale_in=1.0):
    # alpha * (exp(min(x, 0) * scale_in) - 1): the negative branch of elu/celu/selu, without overflow for large x.
    return (ops.exp(ops.clamp(input, max=0.0) * scale_in) - 1) * alpha


def elu(input, alpha=1.0, inplace=False):
    return _inplace(input, lambda x: _fn.where(x > 0, x, _expm1_neg(x, alpha)), inplace)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _inplace(input, lambda x: _fn.where(x > 0, x, _expm1_neg(x, _SELU_ALPHA)) * _SELU_SCALE, inplace)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise ValueError("celu(): alpha must not be 0")
    return _inplace(input, lambda x: _fn.where(x > 0, x, _expm1_neg(x, alpha, 1.0 / alpha)), inplace)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value."""
    return _inplace(input, lambda x: _fn.where(x > threshold, x, value).to(dtype=x.dtype), inplace)


def _inplace_alias(fn):
    # F.relu_ and friends: the inplace=True forms under PyTorch's names.
    return lambda input, *args, **kwargs: fn(input, *args, inplace=True, **kwargs)


relu_, elu_, leaky_relu_, hardtanh_, selu_, celu_, threshold_ = (
    _inplace_alias(f) for f in (relu, elu, leaky_relu, hardtanh, selu, celu, threshold))


def softplus(input, beta=1.0, threshold=20.0):
    from ._loss_functions import _softplus
    bx = input * beta
    return _fn.where(bx > threshold, input, _softplus(bx) / beta)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # _stacklevel: PyTorch's warning depth, unused
    if dtype is not None:
        input = input.to(dtype=dtype)
    return ops.softmax(input, dim=_softmax_dim(input.ndim) if dim is None else int(dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # _stacklevel: PyTorch's warning depth, unused
    if dtype is not None:
        input = input.to(dtype=dtype)
    return ops.log_softmax(input, dim=_softmax_dim(input.ndim) if dim is None else int(dim))


def _check_p(p):
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1/(1-p); identity when not training."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _inplace(input, lambda x: x * 0.0, inplace)
    return _inplace(input, lambda x: ops.dropout(x, p=float(p))[0], inplace)


def _keep_mask(input, p, feature_dims):
    """1 with probability 1 - p, else 0: per element, or per channel when feature_dims > 0
    (shape [N, C, 1, ...] for the last feature_dims dims of an [N, C, *] input)."""
    shape = tuple(input.shape[:input.ndim - feature_dims]) + (1,) * feature_dims
    keep = _C.call("fill", [], {"shape": list(shape), "value": 1.0 - p, "dtype": input.dtype}, input.device)
    return ops.bernoulli(keep)


def _feature_dropout(input, p, training, inplace, feature_dims, name):
    _check_p(p)
    if input.ndim not in (feature_dims + 1, feature_dims + 2):
        raise ShapeError(f"{name}(): expected a {feature_dims + 1}-D (unbatched) or {feature_dims + 2}-D input, "
                         f"got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _inplace(input, lambda x: x * 0.0, inplace)
    return _inplace(input, lambda x: x * _keep_mask(x, p, feature_dims) * (1.0 / (1.0 - p)), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels ([N, C, L] or [C, L]) with probability p; the rest scale by 1/(1-p)."""
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


def _alpha_dropout(input, p, training, inplace, feature_dims):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return _inplace(input, lambda x: x * 0.0, inplace)
    alpha = _SELU_ALPHA * _SELU_SCALE
    a = ((alpha * alpha * p + 1) * (1 - p)) ** -0.5

    def drop(x):
        keep = _keep_mask(x, p, feature_dims)
        return x * keep * a + (keep - 1) * (alpha * a) + alpha * a * p
    return _inplace(input, drop, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements take SELU's negative
    saturation value, then an affine map a * x + b restores the moments (PyTorch's constants)."""
    return _alpha_dropout(input, p, training, inplace, 0)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels: one draw per (dim 0, dim 1) entry of an input with at least 2 dims
    (as PyTorch, dim 0 is the batch even for an unbatched input)."""
    _check_p(p)
    if input.ndim < 2:
        raise ShapeError("Feature dropout requires at least 2 dimensions in the input")
    return _alpha_dropout(input, p, training, inplace, input.ndim - 2)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]; input1 and input2 have the
    same leading dims (no broadcasting, as PyTorch)."""
    _check_tensor(input1, "input1", "bilinear")
    _check_tensor(input2, "input2", "bilinear")
    _check_tensor(weight, "weight", "bilinear")
    if input1.ndim != input2.ndim:
        raise ShapeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    if input1.ndim == 0:
        raise ShapeError("bilinear(): expected inputs with at least 1 dimension, got 0-D tensors")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise ShapeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                             f"and {input2.shape[i]}")
    if weight.ndim != 3:
        raise ShapeError(f"bilinear(): weight must be 3-D [out_features, in1_features, in2_features], got shape "
                         f"{tuple(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise ShapeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                         f"expected {in1}")
    if input2.shape[-1] != in2:
        raise ShapeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                         f"expected {in2}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out):
        raise ShapeError(f"bilinear(): bias size does not match weight size: got "
                         f"{bias.shape[0] if bias.ndim else tuple(bias.shape)} but expected {out}")
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    # [B, in1] @ [in1, out * in2] -> [B, out, in2], then the dot product with x2 over in2
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(-1, out, in2)
    y = ops.sum(t * x2.unsqueeze(1), dims=[2])
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, out)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


# ---- convolution and pooling ----
def _unbatched(input, fn, name):
    if input.ndim == 3:
        return input.unsqueeze(0), True
    if input.ndim != 4:
        raise ShapeError(f"{name}(): expected a 3-D (unbatched) or 4-D input [N, C, H, W], got shape "
                         f"{tuple(input.shape)}")
    return input, False


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    _check_tensor(input, "input", "conv2d")
    x, squeeze = _unbatched(input, conv2d, "conv2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0, 0]
        elif padding == "same":
            if stride != [1, 1]:
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(2)]
            lo = [t // 2 for t in total]
            if any(t % 2 for t in total):  # asymmetric: pad the extra row/column at the end, as PyTorch does
                x = ops.pad(x, pads=[lo[1], total[1] - lo[1], lo[0], total[0] - lo[0]])
                lo = [0, 0]
            padding = lo
        else:
            raise ValueError(f"conv2d(): invalid padding string {padding!r}; use 'valid', 'same' or ints")
    else:
        padding = _pair(padding, "padding")
    if not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"conv2d(): groups must be a positive int, got {groups!r}")
    y = ops.conv2d(x, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=int(groups))
    return y.squeeze(0) if squeeze else y


def _pool_args(kernel_size, stride, padding):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, "stride")
    p = _pair(padding, "padding")
    if any(v <= 0 for v in k) or any(v <= 0 for v in s):
        raise ValueError(f"pooling: kernel_size and stride must be positive, got {k} and {s}")
    if any(p[i] * 2 > k[i] for i in range(2)):
        raise ValueError(f"pooling: padding should be at most half of kernel size, but got padding={p} "
                         f"and kernel_size={k}")
    return k, s, p


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices or _pair(dilation, "dilation") != [1, 1]:  # window tables (nn/_functional_conv.py)
        return _functional_conv.max_pool2d_generic(input, kernel_size, stride, padding, dilation, ceil_mode,
                                                   return_indices)
    x, squeeze = _unbatched(input, max_pool2d, "max_pool2d")
    k, s, p = _pool_args(kernel_size, stride, padding)
    y = ops.max_pool2d(x, kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode))
    return y.squeeze(0) if squeeze else y


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    x, squeeze = _unbatched(input, avg_pool2d, "avg_pool2d")
    k, s, p = _pool_args(kernel_size, stride, padding)
    y = ops.avg_pool2d(x, kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
                       count_include_pad=bool(count_include_pad))
    if divisor_override is not None:
        if count_include_pad is False or any(p) or ceil_mode:  # window tables (nn/_functional_conv.py)
            return _functional_conv.avg_pool2d_generic(input, kernel_size, stride, padding, ceil_mode,
                                                       count_include_pad, divisor_override)
        y = y * (k[0] * k[1] / float(divisor_override))
    return y.squeeze(0) if squeeze else y


def adaptive_avg_pool2d(input, output_size):
    """Averages over PyTorch's adaptive bins [floor(i*H/oh), ceil((i+1)*H/oh)); None keeps the input size."""
    x, squeeze = _unbatched(input, adaptive_avg_pool2d, "adaptive_avg_pool2d")
    H, W = x.shape[2], x.shape[3]
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = [H if output_size[0] is None else int(output_size[0]), W if output_size[1] is None else int(output_size[1])]
    if oh <= 0 or ow <= 0:
        raise ValueError(f"adaptive_avg_pool2d(): output_size must be positive, got {(oh, ow)}")
    if (oh, ow) == (1, 1):
        y = ops.mean(x, dims=[2, 3], keepdim=True)
    elif H % oh == 0 and W % ow == 0:
        k = [H // oh, W // ow]
        y = ops.avg_pool2d(x, kernel_size=k, stride=k, padding=[0, 0])
    else:  # uneven bins: average each window and stack them
        rows = []
        for i in range(oh):
            h0, h1 = (i * H) // oh, -(-((i + 1) * H) // oh)
            cols = [ops.mean(x[:, :, h0:h1, (j * W) // ow:-(-((j + 1) * W) // ow)], dims=[2, 3])
                    for j in range(ow)]
            rows.append(ops.stack(cols, dim=-1))
        y = ops.stack(rows, dim=-2)
    return y.squeeze(0) if squeeze else y


# ---- normalization ----
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization over dim 1; in training the running stats (if given) are updated in place:
    running = (1 - momentum) * running + momentum * batch_stat, with the unbiased batch variance."""
    _check_tensor(input, "input", "batch_norm")
    if input.ndim < 2:
        raise ShapeError(f"batch_norm(): expected an input with at least 2 dims [N, C, ...], got {tuple(input.shape)}")
    C = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise ShapeError(f"batch_norm(): {name} has shape {tuple(t.shape)}, expected ({C},) for "
                             f"input of shape {tuple(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm(): running_mean and running_var are required when training=False")
    n = input.numel() // C if C else 0
    if training and n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{tuple(input.shape)}")
    y, mean, var = ops.batch_norm(input, weight, bias, running_mean, running_var, training=bool(training),
                                  eps=float(eps))
    if training and running_mean is not None and running_var is not None:
        with no_grad():
            m = float(momentum)
            running_mean.copy_(running_mean * (1 - m) + mean.detach() * m)
            running_var.copy_(running_var * (1 - m) + var.detach() * (m * n / (n - 1)))
    return y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise ShapeError(f"layer_norm(): input shape {tuple(input.shape)} does not end with normalized_shape "
                         f"{normalized_shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise ShapeError(f"layer_norm(): {name} has shape {tuple(t.shape)}, expected {normalized_shape}")
    return ops.layer_norm(input, weight, bias, normalized_ndim=k, eps=float(eps))[0]


def normalize(input, p=2.0, dim=1, eps=1e-12):
    if p == 2 or p == 2.0:
        norm = ops.sqrt(ops.sum(input * input, dims=[dim], keepdim=True))
    elif p == 1:
        norm = ops.sum(ops.abs(input), dims=[dim], keepdim=True)
    else:
        norm = ops.sum(ops.abs(input) ** float(p), dims=[dim], keepdim=True) ** (1.0 / p)
    return input / ops.clamp(norm, min=float(eps))


# ---- embedding ----
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:  # nn/_functional_sampling.py
        return _functional_sampling.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
                                              sparse)
    if weight.ndim != 2:
        raise ShapeError(f"embedding(): weight must be 2-D [num_embeddings, dim], got {tuple(weight.shape)}")
    V = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    else:
        if not -V <= padding_idx < V:
            raise ValueError(f"embedding(): padding_idx={padding_idx} must be within num_embeddings={V}")
        padding_idx = padding_idx % V
    return ops.embedding(weight, input, padding_idx=int(padding_idx))


def one_hot(tensor, num_classes=-1):
    """PyTorch's checks: an integer tensor whose values lie in [0, num_classes) (one host read of min / max,
    as torch's CPU kernel does; skipped while a graph is traced, which cannot read values); out-of-range
    values are an error, never a silently empty row."""
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == _C.dtype.bool:
        raise _C.DTypeError(f"one_hot is only applicable to index tensors, got {tensor.dtype}")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise _C.ValueError("Can not infer total number of classes from empty tensor.")
    elif num_classes < 0 or not _C.is_tracing():
        lo, hi = _fn.stack([ops.min(tensor), ops.max(tensor)]).tolist()  # one host read
        if lo < 0:
            raise _C.ValueError("Class values must be non-negative.")
        if num_classes < 0:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise _C.ValueError("Class values must be smaller than num_classes.")
    classes = _C.call("arange", [], {"start": 0.0, "end": float(num_classes), "dtype": tensor.dtype}, tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(dtype=_C.dtype.int64)


# ---- padding ----
def _pad_ints(pad):
    if not isinstance(pad, (tuple, list)) or not all(isinstance(p, numbers.Integral) and not isinstance(p, bool)
                                                     for p in pad):
        raise TypeError(f"pad(): pad must be a tuple of ints, got {pad!r}")
    return [int(p) for p in pad]


def _check_circular(input, pads):
    """torch's checks for mode='circular': 1 or 2 leading dims left unpadded, no padding wider than the
    dimension (it would wrap around more than once) and no dimension cropped below zero."""
    k, nd = len(pads) // 2, input.ndim
    if nd - k not in (1, 2):
        raise ShapeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                         f"to padding of length {(nd - 1) * 2} or {(nd - 2) * 2} respectively but got {len(pads)}")
    for i in range(k):
        lo, hi = pads[2 * i], pads[2 * i + 1]
        n = input.shape[nd - 1 - i]
        core = n + min(lo, 0) + min(hi, 0)
        if n + lo + hi < 0 or core < 0:
            raise ShapeError("Negative padding value is resulting in an empty dimension")
        if lo > n or hi > n or max(lo, hi) > core:
            raise ShapeError("Padding value causes wrapping around more than once.")


def pad(input, pad, mode="constant", value=None):
    """pad = (left, right, top, bottom, ...) from the last dim; negative values crop.

    constant: any number of dims, filled with value (0 by default). reflect, replicate: as PyTorch, the
    last 1, 2 or 3 dims of an input with one or two more dims than that (unbatched or batched); reflect
    padding must be smaller than the dimension. circular: the last k dims of an input with k + 1 or
    k + 2 dims, each padding at most the dimension's size (wrapping around once). Bad sizes raise
    oar.ShapeError (a RuntimeError and a ValueError); unsupported ranks oar.NotImplementedError."""
    pads = _pad_ints(pad)
    if len(pads) % 2:
        raise ShapeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.ndim:
        raise ShapeError(f"Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pads)} and input of dimension {input.ndim}")
    if mode == "constant":
        return ops.pad(input, pads=pads, mode=mode, value=0.0 if value is None else float(value))
    if mode not in ("reflect", "replicate", "circular"):
        raise _C.NotImplementedError(f"Unrecognised padding mode {mode}")
    if value not in (None, 0):
        raise _C.ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode == "circular":
        _check_circular(input, pads)
        return _functional_conv.circular_pad(input, pads)
    k = len(pads) // 2
    if not (1 <= k <= 3 and input.ndim in (k + 1, k + 2)):
        raise _C.NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    return ops.pad(input, pads=pads, mode=mode, value=0.0)
