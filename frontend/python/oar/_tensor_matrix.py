"""Matrix and vector products of oar (PyTorch's names: mv, dot, addmm, kron, cross, cdist, tensordot, ...),
with block_diag, cartesian_prod, combinations, vander, tril/triu_indices and the trapezoidal rule.

Products go through matmul (batched where it helps), so they run on every device with gradients."""
import builtins
import numbers

from . import _C
from ._C import Tensor
from ._ops import ops
from ._functions import _inplace_method
from ._shape_common import (_D, _dim_list, _index_tensor, _install_methods, _tensor_args,
                            _wrap_dim, _zeros, broadcast_shapes)



def _need_ndim(name, x, ndims):
    if x.ndim not in ndims:
        raise _C.ShapeError(f"{name}: expected a {' or '.join(f'{n}-D' for n in ndims)} tensor, got {x.ndim}-D "
                            f"{list(x.shape)}")


def mv(a, v):
    _need_ndim("mv", a, (2,))
    _need_ndim("mv", v, (1,))
    return ops.mv(a, v)


def outer(a, b):
    return ops.outer(a, b)


ger = outer


def dot(a, b):
    _need_ndim("dot", a, (1,))
    _need_ndim("dot", b, (1,))
    if a.shape[0] != b.shape[0]:
        raise _C.ShapeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                            "respectively")
    if a.dtype != b.dtype:
        raise _C.DTypeError(f"dot : expected both vectors to have same dtype, but found {a.dtype} and {b.dtype}")
    return ops.dot(a, b)


vdot = dot  # oar tensors are real: no conjugate


def inner(a, b):
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise _C.ShapeError(f"inner() the last dimension must match on both input tensors but got shapes "
                            f"{list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def _scaled_sum(name, x, product, beta, alpha):
    """beta * x + alpha * product, x broadcast to product's shape; beta == 0 ignores x (NaN included)."""
    if broadcast_shapes(x.shape, product.shape) != product.shape:
        raise _C.ShapeError(f"{name}: input {list(x.shape)} does not broadcast to the product's shape "
                            f"{list(product.shape)}")
    y = product if alpha == 1 else product * alpha
    if beta == 0:
        return y
    return y + (x if beta == 1 else x * beta)


def addmm(x, mat1, mat2, *, beta=1, alpha=1):
    return ops.addmm(x, mat1, mat2, beta=float(beta), alpha=float(alpha))


def addmv(x, mat, vec, *, beta=1, alpha=1):
    return _scaled_sum("addmv", x, mv(mat, vec), beta, alpha)


def addr(x, vec1, vec2, *, beta=1, alpha=1):
    return _scaled_sum("addr", x, outer(vec1, vec2), beta, alpha)


def baddbmm(x, batch1, batch2, *, beta=1, alpha=1):
    return ops.baddbmm(x, batch1, batch2, beta=float(beta), alpha=float(alpha))


def addbmm(x, batch1, batch2, *, beta=1, alpha=1):
    """beta * x + alpha * sum_b batch1[b] @ batch2[b], as one matmul over the batch folded into k."""
    _need_ndim("addbmm", batch1, (3,))
    _need_ndim("addbmm", batch2, (3,))
    b, n, m = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != m:
        raise _C.ShapeError(f"addbmm: batch1 {list(batch1.shape)} and batch2 {list(batch2.shape)} do not match")
    product = batch1.permute(1, 0, 2).reshape(n, b * m) @ batch2.reshape(b * m, batch2.shape[2])
    return _scaled_sum("addbmm", x, product, beta, alpha)


def _multi_dot(mats):
    """The chained product in the cheapest order (the classic dynamic program over split points)."""
    n = len(mats)
    if n == 1:
        return mats[0]
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k) for k in range(i, j))

    def product(i, j):
        return mats[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)
    return product(0, n - 1)


def chain_matmul(*matrices):
    matrices = _tensor_args(matrices, "chain_matmul")
    if not matrices:
        raise ValueError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.ndim != 2:
            raise _C.ShapeError(f"chain_matmul(): Tensor at position {i} must be 2-D, got {m.ndim}-D")
    for i in range(1, len(matrices)):
        if matrices[i - 1].shape[1] != matrices[i].shape[0]:
            raise _C.ShapeError(f"chain_matmul(): matrices {i - 1} {list(matrices[i - 1].shape)} and {i} "
                                f"{list(matrices[i].shape)} cannot be multiplied")
    return _multi_dot(list(matrices))


def kron(a, b):
    return ops.kron(a, b)


def cross(a, b, dim=None):
    """The cross product along dim (of size 3); dim None takes the first dim of size 3, as torch.cross."""
    shape = broadcast_shapes(a.shape, b.shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise _C.ShapeError(f"no dimension of size 3 in input {list(shape)}")
    return ops.linalg_cross(a, b, dim=_wrap_dim(dim, len(shape)))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 [.., P, M] and x2 [.., R, M]; p = 2 goes through a matmul
    (|a|^2 - 2 a.b + |b|^2) when P or R exceeds 25, as PyTorch does by default."""
    if not x1.is_floating_point() or not x2.is_floating_point():
        raise _C.DTypeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}, X2 got: {x2.dtype}")
    return ops.cdist(x1, x2, p=float(p), compute_mode=compute_mode)


def tensordot(a, b, dims=2):
    """Sums a's dims dims[0] against b's dims[1] (an int n: a's last n against b's first n)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise ValueError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise _C.ShapeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
        da, db = _dim_list(da, a.ndim), _dim_list(db, b.ndim)
    if len(da) != len(db):
        raise ValueError(f"both dimension lists should have same length, got {len(da)} and {len(db)}")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise _C.ShapeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} "
                                f"and second has size {b.shape[j]} in dim {j}")
    ra = [d for d in range(a.ndim) if d not in da]
    rb = [d for d in range(b.ndim) if d not in db]
    return ops.tensordot(a, b, dims_a=da, dims_b=db)


def block_diag(*tensors):
    tensors = _tensor_args(tensors, "block_diag")
    blocks = []
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise _C.ShapeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                                f"{x.ndim} dimensions")
        blocks.append(x.reshape(1, -1) if x.ndim < 2 else x)
    if not blocks:
        return _zeros([1, 0], _D.float32, _C.default_device())
    return ops.block_diag(list(tensors))


def cartesian_prod(*tensors):
    return ops.cartesian_prod(_tensor_args(tensors, "cartesian_prod"))


def combinations(x, r=2, with_replacement=False):
    return ops.combinations(x, r=int(r), with_replacement=bool(with_replacement))


def vander(x, N=None, increasing=False):
    """Columns x^(N-1) .. x^0 (x^0 .. x^(N-1) when increasing), by a running product: exact gradients at 0."""
    if N is not None and int(N) < 0:
        raise ValueError("N must be non-negative.")
    return ops.vander(x, N=-1 if N is None else int(N), increasing=bool(increasing))


def _triangle_indices(row, col, offset, lower, dtype, device):
    pairs = [(i, j) for i in range(row) for j in range(col) if (j - i <= offset if lower else j - i >= offset)]
    device = _C.default_device() if device is None else _C.to_device(device)
    flat = [p[0] for p in pairs] + [p[1] for p in pairs]
    return _index_tensor(flat, device).reshape(2, len(pairs)).to(dtype or _D.int64)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    return _triangle_indices(row, col, offset, False, dtype, device)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim, with sample points x (or a constant spacing dx, default 1)."""
    return ops.trapezoid(y, x, dx=1.0 if dx is None else float(dx), dim=int(dim))


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    return ops.cumulative_trapezoid(y, x, dx=1.0 if dx is None else float(dx), dim=int(dim))


__all__ = [
    "mv", "outer", "ger", "dot", "vdot", "inner", "addmm", "addmv", "addr", "baddbmm", "addbmm", "chain_matmul",
    "kron", "cross", "cdist", "tensordot", "block_diag", "cartesian_prod", "combinations", "vander",
    "tril_indices", "triu_indices", "trapezoid", "trapz", "cumulative_trapezoid",
]

_install_methods(globals(), (
    "mv", "outer", "ger", "dot", "vdot", "inner", "addmm", "addmv", "addr", "baddbmm", "addbmm", "kron", "cross"),
    ("addmm", "addmv", "addr", "baddbmm", "addbmm"), _inplace_method)
