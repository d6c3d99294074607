"""PyTorch tensor functions of oar beyond the catalog's ops, one module per job; `from ._tensor_shape import *`
gives all of them (and installs their Tensor methods):

- _shape_common: oar.Size (Tensor.shape, size()), broadcast_shapes, shared helpers
- _tensor_layout: views, flips, repeats, triangles, diagonals, stacks and splits
- _tensor_scatter: take, scatter, scatter_reduce, index_* and masked_scatter, put
- _tensor_matrix: mv, dot, addmm, kron, cross, cdist, tensordot, block_diag, vander, trapezoid, ...
- _tensor_einsum: einsum
- _printoptions: set_printoptions, get_printoptions"""
from ._shape_common import Size, broadcast_shapes
from ._tensor_layout import *  # noqa: F401,F403
from ._tensor_scatter import *  # noqa: F401,F403
from ._tensor_matrix import *  # noqa: F401,F403
from ._tensor_einsum import *  # noqa: F401,F403
from ._printoptions import *  # noqa: F401,F403
from . import _tensor_layout, _tensor_scatter, _tensor_matrix, _tensor_einsum, _printoptions

__all__ = ["Size", "broadcast_shapes", *_tensor_layout.__all__, *_tensor_scatter.__all__, *_tensor_matrix.__all__,
           *_tensor_einsum.__all__, *_printoptions.__all__]
