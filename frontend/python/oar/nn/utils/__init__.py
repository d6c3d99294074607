"""oar.nn.utils: gradient clipping, flat parameter vectors, parametrizations (parametrize, weight_norm,
spectral_norm, orthogonal), the older hook-based weight_norm / spectral_norm, batch-norm fusion,
functional_call (stateless) and skip_init, with PyTorch's names and module paths (clip_grad,
convert_parameters, fusion, stateless, init, ...). nn.utils.rnn (packed sequences) comes from rnn.py,
written separately."""
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import parametrize, parametrizations
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from . import clip_grad, convert_parameters, fusion, stateless  # noqa: F401
from . import rnn  # rnn.py (packed sequences) comes from another engineer

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "parametrize", "parametrizations", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init", "stateless", "rnn"]
