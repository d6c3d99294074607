"""The loss functions of oar.nn.functional (re-exported there): catalog ops for the common cases,
compositions of simpler ops for class weights, probability targets and the BCE/Huber family."""
import warnings

from .._C import Tensor, ShapeError, DTypeError, is_tracing, ValueError as OarValueError
from .._ops import ops
from .. import _functions as _fn

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


def _check_tensor(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be an oar.Tensor, not {type(x).__name__}")


def _reduce(loss, reduction, fn):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    raise ValueError(f"{fn}(): reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def _class_loss_prep(input, target, fn):
    _check_tensor(input, "input", fn)
    _check_tensor(target, "target", fn)
    if input.ndim == 1:  # [C] with a scalar target
        return input.unsqueeze(0), target.reshape(1), True
    return input, target, False


def _weighted_nll(logp, target, weight, ignore_index, reduction, fn):
    """-weight[t] * logp[n, t] with PyTorch's weighted mean (divides by the sum of the used weights)."""
    logp, target, unbatched = _class_loss_prep(logp, target, fn)
    C = logp.shape[1]
    if weight is not None and tuple(weight.shape) != (C,):
        raise ShapeError(f"{fn}(): weight has shape {tuple(weight.shape)}, expected ({C},)")
    valid = target != ignore_index
    safe = _fn.where(valid, target, 0)
    picked = ops.gather(logp, safe.unsqueeze(1), dim=1).squeeze(1)
    w = valid.to(dtype=logp.dtype)
    if weight is not None:
        w = ops.index_select(weight, safe.reshape(-1), dim=0).reshape(*target.shape) * w
    loss = -picked * w
    if reduction == "none":
        return loss.reshape(()) if unbatched else loss
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "mean":
        return ops.sum(loss) / ops.sum(w)
    raise ValueError(f"{fn}(): reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_nll(input, target, weight, ignore_index, reduction, "nll_loss")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"nll_loss(): reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    return ops.nll_loss(input, target, reduction=reduction, ignore_index=int(ignore_index))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Class-index targets (int) or class probabilities (float, same shape as input); class dim is 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"cross_entropy(): reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy(): label_smoothing must be in [0, 1], got {label_smoothing}")
    _check_tensor(input, "input", "cross_entropy")
    _check_tensor(target, "target", "cross_entropy")
    if target.is_floating_point():  # soft labels
        if target.ndim == input.ndim - 1 and tuple(target.shape) != tuple(input.shape):
            # class indices kept as floats (labels from a float NumPy array): say so, as torch's "expected Long"
            raise DTypeError(f"cross_entropy(): expected class-index targets of an integer dtype (int64), got "
                             f"{target.dtype} of shape {tuple(target.shape)}; a floating target is read as class "
                             f"probabilities and must have the input's shape {tuple(input.shape)} (use target.long())")
        if tuple(target.shape) != tuple(input.shape):
            raise ShapeError(f"cross_entropy(): probability targets must have the input's shape "
                             f"{tuple(input.shape)}, got {tuple(target.shape)}")
        cdim = 0 if input.ndim == 1 else 1
        C = input.shape[cdim]
        logp = ops.log_softmax(input, dim=cdim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = target * logp
        if weight is not None:
            prod = prod * weight.reshape(*([C] + [1] * (input.ndim - cdim - 1)))
        return _reduce(-ops.sum(prod, dims=[cdim]), reduction, "cross_entropy")
    if weight is None:
        return ops.cross_entropy(input, target, reduction=reduction, ignore_index=int(ignore_index),
                                 label_smoothing=float(label_smoothing))
    cdim = 0 if input.ndim == 1 else 1
    logp = ops.log_softmax(input, dim=cdim)
    nll = _weighted_nll(logp, target, weight, ignore_index, reduction, "cross_entropy")
    if label_smoothing == 0:
        return nll
    # PyTorch: (1 - e) * nll + e / C * smooth, smooth = -sum_c w_c logp_c (over non-ignored targets)
    lp, t, unbatched = _class_loss_prep(logp, target, "cross_entropy")
    C = lp.shape[1]
    valid = (t != ignore_index).to(dtype=lp.dtype)
    wv = weight.reshape(*([C] + [1] * (lp.ndim - 2)))
    smooth = -ops.sum(lp * wv, dims=[1]) * valid
    if reduction == "none":
        smooth = smooth.reshape(()) if unbatched else smooth
    elif reduction == "sum":
        smooth = ops.sum(smooth)
    else:
        safe = _fn.where(t != ignore_index, t, 0)
        used = ops.sum(ops.index_select(weight, safe.reshape(-1), dim=0) * valid.reshape(-1))
        smooth = ops.sum(smooth) / used
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / C)


def _pointwise_loss(input, target, fn):
    _check_tensor(input, "input", fn)
    _check_tensor(target, "target", fn)
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{fn}: using a target size {tuple(target.shape)} that is different to the input size "
                      f"{tuple(input.shape)}; this will likely lead to incorrect results due to broadcasting.",
                      stacklevel=3)
    return input - target


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    d = _pointwise_loss(input, target, "mse_loss")
    return _reduce(d * d, _legacy_reduction(size_average, reduce, reduction), "mse_loss")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    d = _pointwise_loss(input, target, "l1_loss")
    return _reduce(ops.abs(d), _legacy_reduction(size_average, reduce, reduction), "l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0):
    d = ops.abs(_pointwise_loss(input, target, "huber_loss"))
    loss = _fn.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(loss, reduction, "huber_loss")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    d = ops.abs(_pointwise_loss(input, target, "smooth_l1_loss"))
    loss = d if beta == 0 else _fn.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), "smooth_l1_loss")


def _same_size(input, target, message):
    """torch's BCE losses refuse a target whose size differs from the input's (a (B, 1) output against a (B,)
    label would broadcast to (B, B) and give a wrong loss without an error)."""
    _check_tensor(input, "input", "binary_cross_entropy")
    _check_tensor(target, "target", "binary_cross_entropy")
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(message.format(target=target.shape, input=input.shape))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _same_size(input, target, "Using a target size ({target}) that is different to the input size ({input}) is "
                              "deprecated. Please ensure they have the same size.")
    # torch's kernel checks every input (nan included): a forgotten sigmoid is an error, not a quiet -100 clamp.
    # One host read; skipped while a graph is traced, which cannot read values.
    if input.numel() and not is_tracing() and not bool(((input >= 0) & (input <= 1)).all()):
        raise OarValueError("all elements of input should be between 0 and 1")
    loss = -(target * ops.clamp(ops.log(input), min=-100.0) + (1 - target) * ops.clamp(ops.log(1 - input), min=-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), "binary_cross_entropy")


def _softplus(z):
    """log(1 + exp(z)), stable for large |z|: z + log1p(exp(-z)) above 0, log1p(exp(z)) at or below. Each
    branch reads z clamped to its side, so the branch where() drops stays finite and its zero gradient
    cannot turn into NaN; the gradient is sigmoid(z) everywhere (0.5 at 0)."""
    pos = ops.clamp(z, min=0.0)
    neg = ops.clamp(z, max=0.0)
    return _fn.where(z > 0, pos + ops.log1p(ops.exp(-pos)), ops.log1p(ops.exp(neg)))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    _same_size(input, target, "Target size ({target}) must be the same as input size ({input})")
    log1p_exp = _softplus(-input)  # log(1 + e^-x), stable
    if pos_weight is None:
        loss = (1 - target) * input + log1p_exp
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * log1p_exp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), "binary_cross_entropy_with_logits")
