"""The remaining losses and the distance functions of oar.nn.functional (re-exported there), composed from
catalog ops so their gradients come from autograd and they run on every device that has those ops:
kl_div, the margin / embedding / multi-label losses, poisson and gaussian NLL, CTC (a log-space alpha
recursion over time), cosine_similarity, pairwise_distance and pdist."""
import math
import numbers
import warnings

import numpy as np

from .. import _C
from .._C import Tensor, ShapeError
from .._ops import ops
from .. import _functions as _fn
from ._loss_functions import _check_tensor, _legacy_reduction, _reduce, _softplus

__all__ = ["kl_div", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss",
           "cosine_similarity", "pairwise_distance", "pdist"]


def _check_reduction(reduction, fn, extra=()):
    if reduction not in ("none", "mean", "sum") + tuple(extra):
        raise ValueError(f"{fn}(): {reduction!r} is not a valid value for reduction")


def _arange(n, device, dtype=_C.dtype.int64):
    return _C.call("arange", [], {"start": 0.0, "end": float(n), "dtype": dtype}, device)


def _logsigmoid(z):
    return -_softplus(-z)


def _no_grad_clamp_min(t, lo):
    """t clamped below at lo in the forward, with the gradient of t itself (PyTorch clamps such values
    in place under no_grad, so the clamp is invisible to autograd)."""
    return t + (ops.clamp(t, min=float(lo)) - t).detach()


# ---------------------------------------------------------------- distances
def _safe_sqrt(s):
    """sqrt(s) whose gradient is 0 (not nan) where s == 0, as PyTorch's norm backward."""
    pos = s > 0
    return _fn.where(pos, ops.sqrt(_fn.where(pos, s, 1.0)), 0.0)


def _vector_norm(x, p, dim, keepdim=False):
    dims = [dim]
    p = float(p)
    if p == 2.0:
        return _safe_sqrt(ops.sum(x * x, dims=dims, keepdim=keepdim))
    a = ops.abs(x)
    if p == 1.0:
        return ops.sum(a, dims=dims, keepdim=keepdim)
    if p == math.inf:
        return ops.max(a, dims=dims, keepdim=keepdim)
    if p == -math.inf:
        return ops.min(a, dims=dims, keepdim=keepdim)
    if p == 0.0:
        return ops.sum((a != 0).to(dtype=x.dtype), dims=dims, keepdim=keepdim)
    s = ops.sum(a ** p, dims=dims, keepdim=keepdim)
    pos = s > 0
    return _fn.where(pos, _fn.where(pos, s, 1.0) ** (1.0 / p), 0.0)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim (inputs broadcast)."""
    _check_tensor(x1, "x1", "pairwise_distance")
    _check_tensor(x2, "x2", "pairwise_distance")
    if not isinstance(p, numbers.Real):
        raise TypeError(f"pairwise_distance(): p must be a number, got {type(p).__name__}")
    out_dim = max(x1.ndim, x2.ndim)
    d = x1 - x2 + float(eps)
    if out_dim == 0:
        return ops.abs(d) if p != 0 else (d != 0).to(dtype=d.dtype)
    return _vector_norm(d, p, out_dim - 1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim, the inputs broadcast (PyTorch 2's
    formula: each input is divided by its clamped norm, the clamp invisible to autograd)."""
    _check_tensor(x1, "x1", "cosine_similarity")
    _check_tensor(x2, "x2", "cosine_similarity")
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        raise ShapeError("cosine_similarity(): expected inputs with at least 1 dimension")
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    d = dim % nd
    dtype = _fn.result_type(x1, x2)
    if not dtype.is_floating_point:
        dtype = _C.dtype.float32
    x1, x2 = x1.to(dtype=dtype), x2.to(dtype=dtype)
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise ShapeError(f"The size of tensor a ({x1.shape[d - nd + x1.ndim] if d - nd + x1.ndim >= 0 else 1}) "
                         f"must match the size of tensor b "
                         f"({x2.shape[d - nd + x2.ndim] if d - nd + x2.ndim >= 0 else 1}) at non-singleton "
                         f"dimension {d}") from None
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = _no_grad_clamp_min(_vector_norm(x1, 2, d, keepdim=True), eps)
    n2 = _no_grad_clamp_min(_vector_norm(x2, 2, d, keepdim=True), eps)
    return ops.sum((x1 / n1) * (x2 / n2), dims=[d])


def pdist(input, p=2):
    """The p-norm distances between the rows of an [N, M] input, for i < j in row-major order."""
    _check_tensor(input, "input", "pdist")
    if input.ndim != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise ValueError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, k=1)
    if len(i) == 0:
        return ops.sum(input.reshape(-1)[0:0].reshape(0, 1), dims=[1]) if input.numel() else \
            _C.call("fill", [], {"shape": [0], "value": 0.0, "dtype": input.dtype}, input.device)
    ii = _C.tensor(i.astype(np.int64).tolist(), _C.dtype.int64, input.device)
    jj = _C.tensor(j.astype(np.int64).tolist(), _C.dtype.int64, input.device)
    d = ops.index_select(input, ii, dim=0) - ops.index_select(input, jj, dim=0)
    return _vector_norm(d, p, 1)


# ---------------------------------------------------------------- pointwise / embedding losses
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log(target) - input) pointwise (input holds log-probabilities; target too with
    log_target=True); reduction='batchmean' divides the sum by the batch size (input.size(0))."""
    _check_tensor(input, "input", "kl_div")
    _check_tensor(target, "target", "kl_div")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    else:
        _check_reduction(reduction, "kl_div", ("batchmean",))
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        zero = target == 0  # xlogy(t, t): 0 where t == 0 (nan for t < 0, as PyTorch)
        tlogt = _fn.where(zero, 0.0, target * ops.log(_fn.where(zero, 1.0, target)))
        loss = tlogt - target * input
    if reduction == "batchmean":
        total = ops.sum(loss)
        return total / input.shape[0] if input.ndim != 0 else total
    return _reduce(loss, reduction, "kl_div")


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        _check_tensor(t, name, "cosine_embedding_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cosine_embedding_loss")
    if target.ndim not in (0, 1):
        raise ShapeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim == 1:
        if input1.ndim != 2 or input2.ndim != 2:
            raise ShapeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                             f"{list(input1.shape)} and {list(input2.shape)}.")
    elif input1.ndim != 1 or input2.ndim != 1:
        raise ShapeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                         f"{list(input1.shape)} and {list(input2.shape)}.")
    d = input1.ndim - 1
    eps = 1e-12
    prod = ops.sum(input1 * input2, dims=[d])
    mag1 = ops.sum(input1 * input1, dims=[d]) + eps
    mag2 = ops.sum(input2 * input2, dims=[d]) + eps
    cos = prod / ops.sqrt(mag1 * mag2)
    pos = _fn.where(target == 1, 1 - cos, 0.0)
    neg = _fn.where(target == -1, ops.clamp(cos - float(margin), min=0.0), 0.0)
    return _reduce(pos + neg, reduction, "cosine_embedding_loss")


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        _check_tensor(t, name, "margin_ranking_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "margin_ranking_loss")
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise ShapeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                         f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, target: "
                         f"{list(target.shape)} ")
    loss = ops.clamp(-target * (input1 - input2) + float(margin), min=0.0)
    return _reduce(loss, reduction, "margin_ranking_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1 (both terms for other targets)."""
    _check_tensor(input, "input", "hinge_embedding_loss")
    _check_tensor(target, "target", "hinge_embedding_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "hinge_embedding_loss")
    margin_clamp = ops.clamp(float(margin) - input, min=0.0)
    loss = _fn.where(target != 1, margin_clamp, 0.0) + _fn.where(target != -1, input, 0.0)
    return _reduce(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    _check_tensor(input, "input", "soft_margin_loss")
    _check_tensor(target, "target", "soft_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "soft_margin_loss")
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=2)
    return _reduce(_softplus(-target * input), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)) (times weight), averaged over the class (last) dim."""
    _check_tensor(input, "input", "multilabel_soft_margin_loss")
    _check_tensor(target, "target", "multilabel_soft_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multilabel_soft_margin_loss")
    if input.ndim == 0:
        raise ShapeError("multilabel_soft_margin_loss(): expected an input with a class dim, got a 0-dim tensor")
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = ops.sum(loss, dims=[class_dim]) / input.shape[class_dim]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i]) ** p (times weight[y]), divided by C."""
    _check_tensor(input, "input", "multi_margin_loss")
    _check_tensor(target, "target", "multi_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multi_margin_loss")
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if target.is_floating_point():
        raise TypeError(f"multi_margin_loss(): expected an integer target, got {target.dtype}")
    unbatched = input.ndim <= 1
    if input.ndim not in (1, 2) or input.numel() == 0 and input.ndim == 1:
        raise ShapeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                         f"{list(input.shape)}")
    x = input.unsqueeze(0) if unbatched else input
    N, C = x.shape
    if target.numel() != N or (not unbatched and target.ndim != 1):
        raise ShapeError(f"inconsistent target size, expected {N} but got {list(target.shape)}")
    if weight is not None and weight.numel() != C:
        raise ShapeError(f"inconsistent weight size, expected {C} but got {list(weight.shape)}")
    y = target.reshape(N, 1).to(dtype=_C.dtype.int64)
    xy = ops.gather(x, y, dim=1)
    z = ops.clamp(x - xy + float(margin), min=0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * ops.index_select(weight, y.reshape(-1), dim=0).reshape(N, 1)
    other = (y != _arange(C, x.device).reshape(1, C)).to(dtype=x.dtype)
    loss = ops.sum(z * other, dims=[1]) / C
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])), divided by C;
    target holds class indices, the list ending at the first negative entry."""
    _check_tensor(input, "input", "multilabel_margin_loss")
    _check_tensor(target, "target", "multilabel_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multilabel_margin_loss")
    if target.is_floating_point():
        raise TypeError(f"multilabel_margin_loss(): expected an integer target, got {target.dtype}")
    if input.ndim not in (0, 1, 2) or tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    unbatched = input.ndim <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(1, -1).to(dtype=_C.dtype.int64) if unbatched else target.to(dtype=_C.dtype.int64)
    N, C = x.shape
    fdt = x.dtype
    k = _arange(C, x.device)
    # valid[n, k]: no negative entry at or before position k (a prefix count through an upper-triangular matmul).
    # TODO(cumsum): ops.cumsum over dim 1 once the catalog has it.
    upper = (k.reshape(C, 1) <= k.reshape(1, C)).to(dtype=fdt)
    negatives = ops.matmul((t < 0).to(dtype=fdt), upper)
    valid = (negatives == 0).to(dtype=fdt)
    # count[n, c]: how often class c is listed among the valid targets (duplicates count, as in PyTorch).
    hits = (t.reshape(N, C, 1) == k.reshape(1, 1, C)).to(dtype=fdt) * valid.reshape(N, C, 1)
    count = ops.sum(hits, dims=[1])
    non_target = (count == 0).to(dtype=fdt)
    z = ops.clamp(1 - x.reshape(N, C, 1) + x.reshape(N, 1, C), min=0.0)  # z[n, j, i]
    loss = ops.sum(z * count.reshape(N, C, 1) * non_target.reshape(N, 1, C), dims=[1, 2]) / C
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multilabel_margin_loss")


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target * input (log_input) or input - target * log(input + eps), plus Stirling's
    approximation of log(target!) where target > 1 when full."""
    _check_tensor(input, "input", "poisson_nll_loss")
    _check_tensor(target, "target", "poisson_nll_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + float(eps))
    if full:
        big = target > 1
        ts = _fn.where(big, target, 2.0)  # keeps log finite (and its gradient) where the term is masked out
        stirling = ts * ops.log(ts) - ts + ops.log(ts * (2 * math.pi)) * 0.5
        loss = loss + _fn.where(big, stirling, 0.0)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(var) + (input - target)**2 / var) (+ 0.5 * log(2 pi) when full); var is clamped below at
    eps (invisibly to autograd) and may have one dim fewer than input or a last dim of 1."""
    _check_tensor(input, "input", "gaussian_nll_loss")
    _check_tensor(target, "target", "gaussian_nll_loss")
    if isinstance(var, numbers.Real) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _C.call("fill", [], {"shape": list(input.shape), "value": float(var), "dtype": input.dtype},
                      input.device)
    _check_tensor(var, "var", "gaussian_nll_loss")
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif ishape[:-1] == vshape[:-1] and len(vshape) and vshape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool(ops.sum((var < 0).to(dtype=_C.dtype.int64)).item()):
        raise ValueError("var has negative entry/entries")
    var = _no_grad_clamp_min(var, eps)
    d = input - target
    loss = (ops.log(var) + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise ShapeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                         f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance (with swap, d(a, n) is replaced by
    d(p, n) where smaller)."""
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _check_tensor(t, name, "triplet_margin_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "triplet_margin_loss")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.clamp(d_pos - d_neg + float(margin), min=0.0), reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with any distance_function(x1, x2) (pairwise_distance by default)."""
    _check_reduction(reduction, "triplet_margin_with_distance_loss")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    _check_triplet_dims(anchor, positive, negative)
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, dist(positive, negative))
    return _reduce(ops.clamp(d_pos - d_neg + float(margin), min=0.0), reduction,
                   "triplet_margin_with_distance_loss")


# ---------------------------------------------------------------- CTC
_CTC_NEG = -1e30  # log(0) for the recursion: finite, so exp/log and their gradients stay free of inf and nan


def _lengths(v, name):
    if isinstance(v, Tensor):
        if v.is_floating_point():
            raise TypeError(f"ctc_loss(): {name} must be integers, got {v.dtype}")
        return [int(e) for e in np.asarray(v.detach().cpu().numpy()).reshape(-1).tolist()]
    if isinstance(v, numbers.Integral):
        return [int(v)]
    return [int(e) for e in v]


def _lse(*xs):
    """log(sum(exp(x))) elementwise over the given tensors, shifted by their (detached) maximum."""
    m = xs[0]
    for x in xs[1:]:
        m = ops.maximum(m, x)
    m = m.detach()
    s = ops.exp(xs[0] - m)
    for x in xs[1:]:
        s = s + ops.exp(x - m)
    return m + ops.log(s)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist Temporal Classification loss: -log of the total probability of the alignments of
    each target. log_probs is [T, N, C] (or [T, C] unbatched) log-softmax output; targets are padded
    [N, S] or the targets of the batch concatenated (1-D); input_lengths and target_lengths are
    tensors or sequences of N ints. Computed by the forward (alpha) recursion in log space, one step
    per time frame, so the gradient is autograd's: the exact derivative with respect to log_probs
    (PyTorch's own backward returns a gradient that differs from it by exp(log_probs), the same
    through a log_softmax)."""
    _check_tensor(log_probs, "log_probs", "ctc_loss")
    _check_tensor(targets, "targets", "ctc_loss")
    _check_reduction(reduction, "ctc_loss")
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"ctc_loss(): expected log_probs of shape [T, N, C] or [T, C], got "
                         f"{list(log_probs.shape)}")
    if targets.is_floating_point():
        raise TypeError(f"ctc_loss(): targets must be integers, got {targets.dtype}")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if not batched:
        targets = targets.reshape(1, -1) if targets.ndim <= 1 else targets
    T, N, C = lp.shape
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    if len(il) != N:
        raise ShapeError(f"input_lengths must be of size batch_size ({N}), got {len(il)}")
    if len(tl) != N:
        raise ShapeError(f"target_lengths must be of size batch_size ({N}), got {len(tl)}")
    if not 0 <= blank < C:
        raise ValueError(f"blank must be in label range (got blank={blank} for {C} classes)")
    for b in range(N):
        if not 0 <= il[b] <= T:
            raise ValueError(f"Expected input_lengths to have value at most {T}, but got value {il[b]}")
        if tl[b] < 0:
            raise ValueError(f"Expected target_lengths to be non-negative, but got value {tl[b]}")
    S = max(tl) if tl else 0
    dev, idt = lp.device, _C.dtype.int64
    targets = targets.to(dtype=idt)
    if targets.device != dev:
        targets = targets.to(dev)
    if targets.ndim == 1:  # concatenated: gather each target into a padded row
        if sum(tl) > targets.shape[0]:
            raise ShapeError(f"Expected tensor to have size at least {sum(tl)} at dimension 1, but got size "
                             f"{targets.shape[0]} for argument #2 'targets'")
        offsets = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        idx = [[int(offsets[b]) + min(s, max(tl[b] - 1, 0)) for s in range(S)] for b in range(N)]
        padded = (ops.index_select(targets, _C.tensor(sum(idx, []), idt, dev), dim=0).reshape(N, S)
                  if S and targets.shape[0] else None)
    else:
        if targets.ndim != 2 or targets.shape[0] != N:
            raise ShapeError(f"ctc_loss(): expected padded targets of shape [{N}, S], got {list(targets.shape)}")
        if targets.shape[1] < S:
            raise ShapeError(f"Expected tensor to have size at least {S} at dimension 1, but got size "
                             f"{targets.shape[1]} for argument #2 'targets'")
        padded = targets[:, :S] if S else None
    work = lp
    if lp.dtype in (_C.dtype.float16, _C.dtype.bfloat16):
        work = lp.to(dtype=_C.dtype.float32)
    fdt = work.dtype
    L = 2 * S + 1
    blank_col = _C.call("fill", [], {"shape": [N, 1], "value": float(blank), "dtype": idt}, dev)
    if S:
        blanks = blank_col.expand(N, S)
        ext = ops.concat([ops.stack([blanks, padded], dim=2).reshape(N, 2 * S), blank_col], dim=1)  # l'
    else:
        ext = blank_col
    lp_ext = ops.gather(work, ops.expand(ext.unsqueeze(0), shape=[T, N, L]), dim=2)  # [T, N, L]

    def neg(cols):
        return _C.call("fill", [], {"shape": [N, cols], "value": _CTC_NEG, "dtype": fdt}, dev)

    s_idx = _arange(L, dev).reshape(1, L)
    if L > 2:  # the skip s-2 -> s: into a non-blank label that differs from the one two states back
        prev2 = ops.concat([_C.call("fill", [], {"shape": [N, 2], "value": -1.0, "dtype": idt}, dev),
                            ext[:, :L - 2]], dim=1)
        allow2 = ops.logical_and(ext != blank, ext != prev2)
    alpha = _fn.where(s_idx < 2, lp_ext[0], _CTC_NEG).to(dtype=fdt)
    max_il = max(il) if il else 0
    for t in range(1, max_il):
        a1 = ops.concat([neg(1), alpha[:, :L - 1]], dim=1)
        if L > 2:
            a2 = ops.where(allow2, ops.concat([neg(2), alpha[:, :L - 2]], dim=1), neg(L))
            new = _lse(alpha, a1, a2) + lp_ext[t]
        else:
            new = _lse(alpha, a1) + lp_ext[t]
        if any(length <= t for length in il):  # sequences already ended keep their last alpha
            active = _C.tensor([length > t for length in il], _C.dtype.bool, dev).reshape(N, 1)
            new = ops.where(active, new, alpha)
        alpha = new
    last = _C.tensor([2 * x for x in tl], idt, dev).reshape(N, 1)
    before = _C.tensor([max(2 * x - 1, 0) for x in tl], idt, dev).reshape(N, 1)
    a_last = ops.gather(alpha, last, dim=1).reshape(N)
    a_before = ops.gather(alpha, before, dim=1).reshape(N)
    has_label = _C.tensor([x > 0 for x in tl], _C.dtype.bool, dev)
    a_before = ops.where(has_label, a_before, neg(1).reshape(N))
    nll = -_lse(a_last, a_before)
    empty_input = [x == 0 for x in il]
    if any(empty_input):  # no frames: probability 1 for an empty target, 0 otherwise
        zero_in = _C.tensor(empty_input, _C.dtype.bool, dev)
        nll = _fn.where(zero_in, _C.tensor([0.0 if x == 0 else math.inf for x in tl], fdt, dev), nll)
    impossible = nll > -_CTC_NEG / 10
    nll = _fn.where(impossible, 0.0 if zero_infinity else math.inf, nll).to(dtype=fdt)
    if work is not lp:
        nll = nll.to(dtype=lp.dtype)
    if reduction == "none":
        return nll if batched else nll.reshape(())
    if reduction == "sum":
        return ops.sum(nll)
    lengths = _C.tensor([float(max(x, 1)) for x in tl], nll.dtype, dev)
    return ops.mean(nll / lengths)
