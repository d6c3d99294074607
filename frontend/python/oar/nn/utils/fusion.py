"""nn.utils.fusion: folding an eval-mode batch norm into the preceding convolution or linear layer."""
import copy

from ..._creation import zeros_like, ones_like
from ..._ops import ops
from ...autograd import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of conv computing conv followed by bn (both in eval mode)."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) Parameters of the convolution equal to conv_w/conv_b followed by the batch norm."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    b_grad = conv_b.requires_grad if conv_b is not None else False
    with no_grad():
        if conv_b is None:
            conv_b = zeros_like(bn_rm)
        if bn_w is None:
            bn_w = ones_like(bn_rm)
        if bn_b is None:
            bn_b = zeros_like(bn_rm)
        rsqrt = ops.rsqrt(bn_rv + bn_eps)
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
        w = (conv_w * (bn_w * rsqrt).reshape(*shape)).to(dtype=w_dtype)
        b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(w.detach(), conv_w.requires_grad), Parameter(b.detach(), b_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear computing linear followed by bn (both in eval mode)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, \
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) Parameters of the linear layer equal to linear_w/linear_b followed by the batch norm."""
    b_grad = linear_b.requires_grad if linear_b is not None else False
    with no_grad():
        if linear_b is None:
            linear_b = zeros_like(bn_rm)
        scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
        w = linear_w * scale.unsqueeze(-1)
        b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w.detach(), linear_w.requires_grad), Parameter(b.detach(), b_grad)
