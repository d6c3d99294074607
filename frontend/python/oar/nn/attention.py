"""Scaled dot-product attention and nn.MultiheadAttention (PyTorch's semantics and parameter names).

scaled_dot_product_attention runs the fused, memory-efficient kernel (catalog op
attention_fused: online softmax, one log-sum-exp per query row, recomputation in
backward; no L x S matrix in forward or backward) whenever no attention weights
are wanted and there is no dropout. Otherwise it is composed of matmul / softmax /
dropout; then, when the query is longer than one block (256 rows), the queries
are processed a block at a time, so inference never holds the full score matrix.

Mask conventions, as PyTorch:
  * scaled_dot_product_attention: a bool attn_mask is True where a query MAY attend
    (False -> -inf score); a float mask is added to the scores; it broadcasts
    against [..., L, S]. is_causal: query i sees keys j <= i (upper-left aligned).
  * MultiheadAttention / multi_head_attention_forward: bool masks are True where
    attention is NOT allowed (key_padding_mask [N, S]: True = padding); float
    masks are added. attn_mask is [L, S] or [N * num_heads, L, S].
A query row whose keys are all masked gets NaN, as PyTorch's math path.

This module imports nothing from functional/layers at import time
(functional.py re-exports its functions, and layers imports functional).
"""
import math
import numbers

from .. import _C, _creation
from .._C import Tensor, ShapeError
from .._ops import ops
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"]

_BLOCK = 256  # query rows per block of the memory-saving path


def _arange(n, start, device):
    return _C.call("arange", [], {"start": float(start), "end": float(start + n), "dtype": _C.dtype.int64}, device)


def _causal(rows, start, S, device):
    """[rows, S] bool: True where query start + i may see key j (j <= start + i)."""
    return _arange(rows, start, device).unsqueeze(1) >= _arange(S, 0, device).unsqueeze(0)


def _scalar(value, like):
    return _C.tensor(value, like.dtype, like.device)


def _split(x, sizes, dim):
    out = ops.split(x, sizes=list(sizes), dim=dim)
    return out if isinstance(out, (tuple, list)) else (out,)


def _attend(q, kT, value, mask, causal_start, dropout_p, neg_inf):
    """softmax(q @ kT (+ mask)) @ value for one block of (pre-scaled) queries; returns (out, weights)."""
    scores = ops.matmul(q, kT)
    if causal_start is not None:
        scores = ops.where(_causal(q.shape[-2], causal_start, kT.shape[-1], q.device), scores, neg_inf)
    if mask is not None:
        scores = ops.where(mask, scores, neg_inf) if mask.dtype == _C.dtype.bool else scores + mask
    attn = ops.softmax(scores, dim=-1)
    if dropout_p >= 1.0:
        attn = attn * 0.0
    elif dropout_p > 0.0:
        attn = ops.dropout(attn, p=float(dropout_p))[0]
    return ops.matmul(attn, value), attn


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, need_weights=False,
          enable_gqa=False, block=_BLOCK):
    """(output [..., L, Ev], attention weights [..., L, S] after dropout, or None unless need_weights)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ShapeError(f"scaled_dot_product_attention(): {name} must have at least 2 dims, got "
                             f"{tuple(t.shape)}")
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(f"scaled_dot_product_attention(): query and key must have the same embedding size, got "
                         f"{tuple(query.shape)} and {tuple(key.shape)}")
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention(): key and value must have the same sequence length, "
                         f"got {tuple(key.shape)} and {tuple(value.shape)}")
    if not isinstance(dropout_p, numbers.Real) or not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk:
            raise ValueError(f"scaled_dot_product_attention(): with enable_gqa the query heads ({hq}) must be "
                             f"a multiple of the key/value heads ({hk})")
        key, value = (_repeat_heads(t, hq // hk) for t in (key, value))
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor):
            raise TypeError("scaled_dot_product_attention(): attn_mask must be a Tensor")
        if attn_mask.dtype != _C.dtype.bool and attn_mask.dtype != query.dtype:
            attn_mask = attn_mask.to(dtype=query.dtype)
    if not need_weights and dropout_p == 0.0 and _fusable(query, key, value, attn_mask):
        return _fused(query, key, value, attn_mask, is_causal, scale), None
    q = query * scale
    kT = key.transpose(-2, -1)
    neg_inf = _scalar(float("-inf"), q)
    if need_weights or L <= block:
        out, weights = _attend(q, kT, value, attn_mask, 0 if is_causal else None, dropout_p, neg_inf)
        return out, (weights if need_weights else None)
    sizes = [block] * (L // block) + ([L % block] if L % block else [])
    q_blocks = _split(q, sizes, -2)
    per_row_mask = attn_mask is not None and attn_mask.ndim >= 2 and attn_mask.shape[-2] == L and L > 1
    m_blocks = _split(attn_mask, sizes, -2) if per_row_mask else [attn_mask] * len(sizes)
    outs, start = [], 0
    for qb, mb, n in zip(q_blocks, m_blocks, sizes):
        outs.append(_attend(qb, kT, value, mb, start if is_causal else None, dropout_p, neg_inf)[0])
        start += n
    return ops.concat(outs, dim=-2), None


def _fusable(query, key, value, mask):
    """Whether the fused kernel (catalog attention_fused) computes this call: one floating dtype (a float
    mask that requires grad gets its gradient from the rule, built from ops)."""
    if query.dtype not in (_C.dtype.float32, _C.dtype.float64) or key.dtype != query.dtype or \
            value.dtype != query.dtype:
        return False  # 16-bit floats are composed (the kernel accumulates gradients in the input's dtype)
    return True


def _fused(query, key, value, mask, is_causal, scale):
    """The memory-efficient path: batch dims broadcast, a bool mask made additive, one kernel call."""
    L, S = query.shape[-2], key.shape[-2]
    batch = _broadcast(tuple(query.shape[:-2]), tuple(key.shape[:-2]), tuple(value.shape[:-2]),
                       tuple(mask.shape[:-2]) if mask is not None and mask.ndim > 2 else ())
    q, k, v = (t.expand(*batch, *t.shape[-2:]) for t in (query, key, value))
    if mask is not None:
        if mask.dtype == _C.dtype.bool:
            mask = ops.where(mask, _scalar(0.0, query), _scalar(float("-inf"), query))
        mask = mask.expand(*batch, L, S)
    return ops.attention_fused(q, k, v, mask, causal=bool(is_causal), scale=float(scale))[0]


def _broadcast(*shapes):
    n = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ShapeError(f"scaled_dot_product_attention(): batch dims {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _repeat_heads(t, n):
    """[..., H, S, E] -> [..., H * n, S, E], each head repeated n times in a row (repeat_interleave on dim -3)."""
    shape = tuple(t.shape)
    x = t.unsqueeze(-3).expand(*shape[:-2], n, *shape[-2:])
    return x.reshape(*shape[:-3], shape[-3] * n, *shape[-2:])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over [..., L, E], [..., S, E], [..., S, Ev] -> [..., L, Ev].

    attn_mask: bool (True = may attend) or float (added), broadcast to [..., L, S]; is_causal: query i
    attends keys 0..i; dropout_p is applied to the weights whenever it is > 0 (pass 0.0 in eval, as PyTorch);
    scale defaults to 1/sqrt(E); enable_gqa repeats key/value heads (dim -3) to the query's head count."""
    return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, False, enable_gqa)[0]


# ---- multi-head attention ----
def _float_mask(mask, dtype, name):
    """A PyTorch MHA mask as an additive float mask (bool True -> -inf), or None."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"multi_head_attention_forward(): {name} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype == _C.dtype.bool:
        return ops.where(mask, _C.tensor(float("-inf"), dtype, mask.device), _C.tensor(0.0, dtype, mask.device))
    if not mask.is_floating_point():
        raise TypeError(f"only bool and floating types of {name} are supported")
    return mask if mask.dtype == dtype else mask.to(dtype=dtype)


def _pad_last(mask, n=1):
    """mask with n zero columns appended on its last dim (for bias_k / add_zero_attn)."""
    z = _C.call("fill", [], {"shape": [*mask.shape[:-1], n], "value": 0.0, "dtype": mask.dtype}, mask.device)
    return ops.concat([mask, z], dim=-1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """PyTorch's F.multi_head_attention_forward: query [L, N, E], key [S, N, kdim], value [S, N, vdim]
    (or unbatched [L, E] ...). Returns (attn_output [L, N, E], weights [N, L, S] averaged over heads, or
    [N, num_heads, L, S] with average_attn_weights=False, or None when need_weights=False)."""
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ShapeError(f"multi_head_attention_forward(): query, key and value must all be 3-D (batched) or "
                         f"2-D (unbatched), got {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if not batched:
        same_kv, same_qk = key is value, query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            if key_padding_mask.ndim != 1:
                raise ShapeError("For unbatched (2-D) query, expected key_padding_mask to be None or 1-D, got "
                                 f"{key_padding_mask.ndim}-D")
            key_padding_mask = key_padding_mask.unsqueeze(0)
        # a 3-D attn_mask [num_heads, L, S] is already [N * num_heads, L, S] with N = 1
    elif key_padding_mask is not None and key_padding_mask.ndim != 2:
        raise ShapeError(f"For batched (3-D) query, expected key_padding_mask to be None or 2-D, got "
                         f"{key_padding_mask.ndim}-D")
    L, N, E = query.shape
    H = int(num_heads)
    if E != embed_dim_to_check:
        raise ShapeError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    if E % H:
        raise ValueError(f"embed_dim {E} not divisible by num_heads {H}")
    hd = E // H
    dtype = query.dtype

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise ValueError("use_separate_proj_weight is False but in_proj_weight is None")
        b = _split(in_proj_bias, (E, E, E), 0) if in_proj_bias is not None else (None, None, None)
        if key is value and query is key:
            q, k, v = _split(_C.linear(query, in_proj_weight, in_proj_bias), (E, E, E), -1)
        elif key is value:
            w_q, w_kv = _split(in_proj_weight, (E, 2 * E), 0)
            b_kv = None if in_proj_bias is None else ops.concat([b[1], b[2]], dim=0)
            q = _C.linear(query, w_q, b[0])
            k, v = _split(_C.linear(key, w_kv, b_kv), (E, E), -1)
        else:
            w_q, w_k, w_v = _split(in_proj_weight, (E, E, E), 0)
            q, k, v = _C.linear(query, w_q, b[0]), _C.linear(key, w_k, b[1]), _C.linear(value, w_v, b[2])
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight "
                             "is None")
        b = _split(in_proj_bias, (E, E, E), 0) if in_proj_bias is not None else (None, None, None)
        q, k, v = (_C.linear(query, q_proj_weight, b[0]), _C.linear(key, k_proj_weight, b[1]),
                   _C.linear(value, v_proj_weight, b[2]))

    # masks -> one additive float mask broadcastable to [N, H, L, S]
    if is_causal and attn_mask is None:
        attn_mask = ops.logical_not(_causal(L, 0, key.shape[0], query.device))
    attn_mask = _float_mask(attn_mask, dtype, "attn_mask")
    key_padding_mask = _float_mask(key_padding_mask, dtype, "key_padding_mask")
    if attn_mask is not None:
        S0 = key.shape[0]
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (L, S0):
                raise ShapeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                 f"{(L, S0)}.")
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (N * H, L, S0):
                raise ShapeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                 f"{(N * H, L, S0)}.")
            attn_mask = attn_mask.reshape(N, H, L, S0)
        else:
            raise ShapeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (N, key.shape[0]):
        raise ShapeError(f"expecting key_padding_mask shape of {(N, key.shape[0])}, but got "
                         f"{tuple(key_padding_mask.shape)}")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise ValueError("bias cannot be added to static key/value")
        k = ops.concat([k, bias_k.reshape(1, 1, E).expand(1, N, E)], dim=0)
        v = ops.concat([v, bias_v.reshape(1, 1, E).expand(1, N, E)], dim=0)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise ValueError("bias_k and bias_v must both be given or both be None")

    # heads: [len, N, E] -> [N, H, len, hd]
    q = q.reshape(L, N, H, hd).permute(1, 2, 0, 3)
    if static_k is None:
        k = k.reshape(k.shape[0], N, H, hd).permute(1, 2, 0, 3)
    else:
        if tuple(static_k.shape[::2]) != (N * H, hd):
            raise ShapeError(f"expecting static_k of shape ({N * H}, S, {hd}), got {tuple(static_k.shape)}")
        k = static_k.reshape(N, H, static_k.shape[1], hd)
    if static_v is None:
        v = v.reshape(v.shape[0], N, H, hd).permute(1, 2, 0, 3)
    else:
        if tuple(static_v.shape[::2]) != (N * H, hd):
            raise ShapeError(f"expecting static_v of shape ({N * H}, S, {hd}), got {tuple(static_v.shape)}")
        v = static_v.reshape(N, H, static_v.shape[1], hd)
    if add_zero_attn:
        z = _C.call("fill", [], {"shape": [N, H, 1, hd], "value": 0.0, "dtype": dtype}, q.device)
        k, v = ops.concat([k, z], dim=2), ops.concat([v, z], dim=2)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    S = k.shape[2]
    mask = attn_mask
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(N, 1, 1, S)
        mask = kpm if mask is None else mask + kpm
    if not training:
        dropout_p = 0.0
    out, weights = _sdpa(q, k, v, mask, dropout_p, False, None, need_weights)
    out = out.permute(2, 0, 1, 3).reshape(L * N, E)
    out = _C.linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if need_weights:
        if average_attn_weights:
            weights = ops.mean(weights, dims=[1])
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    return (out if batched else out.squeeze(1)), None


_NDQ = []


def _out_proj_class():
    """NonDynamicallyQuantizableLinear (a Linear under PyTorch's name), made on first use: layers.py
    imports functional.py, which imports this module, so Linear does not exist yet at import time."""
    if not _NDQ:
        from .layers import Linear

        class NonDynamicallyQuantizableLinear(Linear):
            pass
        NonDynamicallyQuantizableLinear.__module__ = __name__  # pickles as oar.nn.attention.<name>
        NonDynamicallyQuantizableLinear.__qualname__ = "NonDynamicallyQuantizableLinear"
        _NDQ.append(NonDynamicallyQuantizableLinear)
    return _NDQ[0]


def __getattr__(name):
    if name == "NonDynamicallyQuantizableLinear":
        return _out_proj_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new_param(shape, device, dtype):
    from .._creation import empty
    return Parameter(empty(*shape, dtype=dtype or _creation.get_default_dtype(), device=device))


class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's parameters: in_proj_weight [3E, E] / q,k,v_proj_weight when kdim or
    vdim differ from embed_dim, in_proj_bias [3E], out_proj, bias_k / bias_v [1, 1, E]).

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (attn_output, attn_weights or None)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if not isinstance(embed_dim, numbers.Integral) or embed_dim <= 0 or not isinstance(
                num_heads, numbers.Integral) or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        self.embed_dim = int(embed_dim)
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = int(num_heads), float(dropout), bool(batch_first)
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = _new_param((embed_dim, embed_dim), device, dtype)
            self.k_proj_weight = _new_param((embed_dim, self.kdim), device, dtype)
            self.v_proj_weight = _new_param((embed_dim, self.vdim), device, dtype)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = _new_param((3 * embed_dim, embed_dim), device, dtype)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = _new_param((3 * embed_dim,), device, dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = _out_proj_class()(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = _new_param((1, 1, embed_dim), device, dtype)
            self.bias_v = _new_param((1, 1, embed_dim), device, dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        common = dict(training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                      attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not self._qkv_same_embed_dim:
            out, weights = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight, **common)
        else:
            out, weights = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, **common)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
