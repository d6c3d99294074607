"""oar: a deep-learning platform with plugin devices, with a PyTorch-like API.

Tensors live on a device chosen by OAR_DEVICE (default "cpu"); every op is
dispatched to that device's plugin. Names and semantics follow PyTorch.
"""
from . import _C
from ._C import (Tensor, device, dtype, from_dlpack, initial_seed, info,
                 OarError, ShapeError, DTypeError, DeviceError, IndexError, ValueError,
                 NotImplementedError, PluginError, IOError, GraphError)
from ._dtypes import *  # noqa: F401,F403  float32, int64, ...
from ._ops import ops
from ._creation import (tensor, as_tensor, zeros, ones, full, empty, zeros_like, ones_like, full_like,
                        arange, rand, randn, randint, from_numpy, eye, rand_like, randn_like, randint_like,
                        linspace, randperm, Generator, default_generator, get_rng_state, set_rng_state,
                        get_default_dtype, set_default_dtype, manual_seed)
from ._functions import *  # noqa: F401,F403  add, matmul, sum, cat, stack, where, ...
from ._torch_signatures import *  # noqa: F401,F403  ops whose torch signature is not the catalog's
from ._tensor_math import *  # noqa: F401,F403  math, comparison, reduction, scan, sort/select functions
from ._tensor_shape import *  # noqa: F401,F403  shape, indexing and matrix functions
from .autograd import no_grad, enable_grad, inference_mode, set_grad_enabled, is_grad_enabled, is_inference_mode_enabled
from . import autograd, nn, optim, utils
from . import jit
from . import onnx
from . import inference, adapter
from .serialization import save, load
from . import cuda, amp, testing
from .amp import autocast
from . import linalg, distributions
from ._linalg_functions import *  # noqa: F401,F403  det, inverse, svd, qr, ... (torch's top-level linalg)
from ._lowrank import svd_lowrank, pca_lowrank
from ._tensor_random import *  # noqa: F401,F403  random fills, multinomial, finfo, iinfo
from ._tensor_conversion import *  # noqa: F401,F403  to(..., non_blocking), memory formats, FloatTensor, ...
from ._determinism import *  # noqa: F401,F403  use_deterministic_algorithms and its queries
from . import random  # torch.random: get_rng_state, fork_rng, ...

__all__ = ["Tensor", "device", "dtype", "tensor", "zeros", "ones", "manual_seed", "no_grad", "nn", "optim",
           "autograd", "utils", "save", "load", "info", "ops", "jit", "onnx"]
__version__ = "0.1.0"

# Every public catalog op without a hand-written wrapper above: oar.<op>, Tensor.<op>, <op>_.
from . import _catalog, _functions
_catalog.install(globals(), Tensor, _functions._inplace_method)
del _catalog, _functions
from . import _torch_aliases  # noqa: E402  (after the catalog: aliases of its ops)
_torch_aliases._install()
from ._torch_aliases import *  # noqa: F401,F403,E402  arccos, multiply, pi, clone, conv1d, ...
from ._tensor_stats import *  # noqa: F401,F403,E402  quantile, cov, isin, dist, logspace, gcd, ...
from . import sparse  # noqa: E402  COO sparse tensors
sparse._install(__import__(__name__))
from . import special  # noqa: E402  torch.special; also torch.i0/igamma/igammac/mvlgamma
special._install(__import__(__name__))
from . import _shared_storage; _shared_storage._install()  # noqa: E402,E702  Tensor.share_memory_, is_shared




def set_flag(name, value):
    """Sets an OAR_* flag at run time (validated like the environment variable)."""
    _C.set_flag(name, str(value))


def get_flag(name):
    return _C.get_flag(name)


def get_default_device():
    return _C.default_device()


def is_tensor(obj):
    return isinstance(obj, Tensor)


from . import _complex; _complex._install(__import__(__name__))  # noqa: E402,E702  complex64/128, torch.fft, stft
from ._out import can_cast  # noqa: E402
from . import _out; _out.install()  # noqa: E402,E702  out= on every function torch gives it (last: copies the exports)
