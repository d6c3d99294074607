"""oar.sparse: sparse COO matrices and tensors (torch.sparse_coo_tensor), for graph and recommendation code.

A SparseCooTensor holds `indices` (int64, [sparse_dim, nnz]) and `values` ([nnz]) of a tensor of `shape`,
on one device; duplicates are allowed until coalesce() sums them. What it computes is written with dense
oar ops on the values (index_select, index_add), so it runs on every device and gradients reach the values
and the dense operands: sparse @ dense (torch.sparse.mm, torch.spmm, torch.mm, `@`), dense @ sparse,
to_dense(), sparse.sum(), scalar multiplication, transpose of a matrix, and Tensor.to_sparse().

Only scalar values (no dense trailing dims) and the COO layout are supported; CSR/CSC, sparse-sparse
products and sparse gradients of nn.Embedding are not (they raise, naming the missing piece).
"""
import numbers

from .. import _C
from .._C import Tensor

_D = _C.dtype


def _as_index_tensor(indices, device):
    from .._creation import tensor
    t = indices if isinstance(indices, Tensor) else tensor(indices, dtype=_D.int64, device=device)
    if t.is_floating_point() or t.dtype == _D.bool:
        raise _C.DTypeError(f"sparse_coo_tensor: indices must be an int64 tensor, got {t.dtype}")
    return t.to(_D.int64)


class SparseCooTensor:
    """A sparse COO tensor (torch's layout=torch.sparse_coo)."""

    is_sparse = True
    is_sparse_csr = False
    layout = "sparse_coo"

    def __init__(self, indices, values, shape, coalesced=False):
        self._idx = indices
        self._val = values
        self.shape = _size(shape)
        self._coalesced = coalesced

    # ---- what it is ----
    @property
    def dtype(self):
        return self._val.dtype

    @property
    def device(self):
        return self._val.device

    @property
    def requires_grad(self):
        return self._val.requires_grad

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return 0

    def _nnz(self):
        return self._idx.shape[1]

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._idx

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._val

    def _indices(self):
        return self._idx

    def _values(self):
        return self._val

    def is_coalesced(self):
        return self._coalesced

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self):
        return (f"tensor(indices={self._idx!r},\n       values={self._val!r},\n       size={tuple(self.shape)}, "
                f"nnz={self._nnz()}, layout=torch.sparse_coo)")

    # ---- conversions ----
    def _flat_index(self):
        """Each entry's row-major position in the dense tensor."""
        flat = None
        for d in range(self.sparse_dim()):
            row = self._idx[d]
            flat = row if flat is None else flat * self.shape[d] + row
        return flat

    def coalesce(self):
        """Duplicates summed, entries in row-major order."""
        if self._coalesced:
            return self
        from .. import unique
        if self._nnz() == 0:
            return SparseCooTensor(self._idx, self._val, self.shape, True)
        flat = self._flat_index()
        keys, inverse = unique(flat, sorted=True, return_inverse=True)
        from .._creation import zeros
        vals = zeros(keys.shape[0], dtype=self.dtype, device=self.device).index_add(0, inverse, self._val)
        rows, rest = [], keys
        for d in reversed(range(self.sparse_dim())):
            rows.append(rest % self.shape[d])
            rest = rest // self.shape[d]
        from .._functions import stack
        return SparseCooTensor(stack(rows[::-1], 0), vals, self.shape, True)

    def to_dense(self, dtype=None):
        from .._creation import zeros
        n = self.numel()
        dense = zeros(n, dtype=self.dtype, device=self.device)
        if self._nnz():
            dense = dense.index_add(0, self._flat_index(), self._val)
        out = dense.reshape(*self.shape)
        return out if dtype is None else out.to(dtype)

    def to(self, *args, **kwargs):
        values = self._val.to(*args, **kwargs)
        return SparseCooTensor(self._idx.to(values.device), values, self.shape, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(_D.float64)

    def float(self):
        return self.to(_D.float32)

    def detach(self):
        return SparseCooTensor(self._idx, self._val.detach(), self.shape, self._coalesced)

    def requires_grad_(self, flag=True):
        self._val.requires_grad_(flag)
        return self

    @property
    def grad(self):
        return self._val.grad

    def t(self):
        if self.ndim != 2:
            raise _C.ShapeError(f"t() expects a 2-D sparse tensor, got {self.ndim}-D")
        from .._functions import stack
        return SparseCooTensor(stack([self._idx[1], self._idx[0]], 0), self._val, (self.shape[1], self.shape[0]))

    def transpose(self, dim0, dim1):
        if sorted((dim0 % self.ndim, dim1 % self.ndim)) != [0, 1] or self.ndim != 2:
            raise NotImplementedError("transpose of a sparse tensor: only the two dims of a matrix")
        return self.t()

    # ---- arithmetic ----
    def __mul__(self, other):
        if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and other.ndim == 0):
            return SparseCooTensor(self._idx, self._val * other, self.shape, self._coalesced)
        raise NotImplementedError("sparse * tensor: only a number or a 0-d tensor")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * (1.0 / other)

    def __neg__(self):
        return self * -1

    def __add__(self, other):
        if isinstance(other, SparseCooTensor):
            if tuple(other.shape) != tuple(self.shape):
                raise _C.ShapeError(f"sparse add: shapes {list(self.shape)} and {list(other.shape)} differ")
            from .._functions import cat
            return SparseCooTensor(cat([self._idx, other._idx], 1), cat([self._val, other._val], 0), self.shape)
        if isinstance(other, Tensor):
            return self.to_dense() + other
        raise NotImplementedError(f"sparse + {type(other).__name__}")

    __radd__ = __add__

    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        return mm(other, self)

    def mm(self, other):
        return mm(self, other)

    matmul = mm

    def sum(self, dim=None):
        return sum(self, dim)


def _size(shape):
    from .._shape_common import Size
    return Size(int(s) for s in shape)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: entries values[k] at indices[:, k] of a tensor of `size` (inferred from the
    largest index when not given); indices out of range are a ShapeError."""
    from .._creation import tensor
    vals = values if isinstance(values, Tensor) else tensor(values, dtype=dtype, device=device)
    if dtype is not None or device is not None:
        vals = vals.to(device=device, dtype=dtype)
    idx = _as_index_tensor(indices, vals.device).to(vals.device)
    if idx.ndim != 2:
        raise _C.ShapeError(f"sparse_coo_tensor: indices must be 2-D [sparse_dim, nnz], got {list(idx.shape)}")
    if vals.ndim != 1:
        raise NotImplementedError("sparse_coo_tensor: values with dense dimensions are not supported (values must "
                                  "be 1-D)")
    if idx.shape[1] != vals.shape[0]:
        raise _C.ShapeError(f"sparse_coo_tensor: indices have {idx.shape[1]} entries but values have "
                            f"{vals.shape[0]}")
    nnz = idx.shape[1]
    if size is None:
        size = [int(v) + 1 for v in idx.max(1)[0].tolist()] if nnz else [0] * idx.shape[0]
    size = list(size)
    if len(size) != idx.shape[0]:
        raise _C.ShapeError(f"sparse_coo_tensor: {idx.shape[0]} index rows for a {len(size)}-D size (dense "
                            f"dimensions are not supported)")
    if nnz:
        low, high = idx.min(1)[0].tolist(), idx.max(1)[0].tolist()
        for d, (lo, hi) in enumerate(zip(low, high)):
            if lo < 0 or hi >= size[d]:
                raise _C.ShapeError(f"sparse_coo_tensor: index {hi if hi >= size[d] else lo} is out of bounds for "
                                    f"dimension {d} with size {size[d]}")
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return SparseCooTensor(idx, vals, size, bool(is_coalesced) if is_coalesced is not None else nnz <= 1)


def mm(mat1, mat2):
    """sparse @ dense (a dense result) or dense @ sparse; gradients reach the values and the dense matrix."""
    if isinstance(mat1, SparseCooTensor) and isinstance(mat2, Tensor):
        if mat1.ndim != 2 or mat2.ndim not in (1, 2):
            raise _C.ShapeError(f"sparse.mm: expects a sparse matrix and a dense matrix or vector, got "
                                f"{list(mat1.shape)} and {list(mat2.shape)}")
        if mat2.shape[0] != mat1.shape[1]:
            raise _C.ShapeError(f"sparse.mm: mat1 {list(mat1.shape)} and mat2 {list(mat2.shape)} cannot be "
                                f"multiplied")
        from .._creation import zeros
        rows, cols = mat1._idx[0], mat1._idx[1]
        vector = mat2.ndim == 1
        dense = mat2.unsqueeze(1) if vector else mat2
        dtype = mat1.dtype if mat1.dtype == dense.dtype else dense.dtype
        out = zeros(mat1.shape[0], dense.shape[1], dtype=dtype, device=dense.device)
        if mat1._nnz():
            picked = dense.index_select(0, cols) * mat1._val.to(dtype).unsqueeze(1)
            out = out.index_add(0, rows, picked)
        return out.squeeze(1) if vector else out
    if isinstance(mat1, Tensor) and isinstance(mat2, SparseCooTensor):
        if mat1.ndim == 1:
            return mm(mat2.t(), mat1)
        return mm(mat2.t(), mat1.transpose(0, 1)).transpose(0, 1)
    if isinstance(mat1, SparseCooTensor) and isinstance(mat2, SparseCooTensor):
        return mm(mat1, mat2.to_dense())
    from .. import matmul
    return matmul(mat1, mat2)


def sum(input, dim=None):
    """The sum of all entries (a dense 0-d tensor), or over `dim` (a dense result)."""
    if not isinstance(input, SparseCooTensor):
        return input.sum() if dim is None else input.sum(dim)
    if dim is None:
        return input._val.sum()
    return input.to_dense().sum(dim)


def to_sparse(self, sparse_dim=None, *, layout=None):
    """Tensor.to_sparse(): the nonzero entries of a dense tensor, coalesced."""
    if layout not in (None, "sparse_coo") and str(layout) != "torch.sparse_coo":
        raise NotImplementedError(f"to_sparse(layout={layout}): only the COO layout is supported")
    if sparse_dim is not None and sparse_dim != self.ndim:
        raise NotImplementedError("to_sparse(sparse_dim): dense trailing dimensions are not supported")
    from .. import ops
    idx = ops.nonzero(self).transpose(0, 1).contiguous() if self.ndim else ops.nonzero(self.reshape(1)).t()
    flat = None
    for d in range(self.ndim):
        flat = idx[d] if flat is None else flat * self.shape[d] + idx[d]
    values = self.reshape(-1).index_select(0, flat) if flat is not None else self.reshape(-1)
    return SparseCooTensor(idx, values, self.shape, True)


def FloatTensor(indices, values, size):
    """The legacy torch.sparse.FloatTensor(indices, values, size)."""
    return sparse_coo_tensor(indices, values, size, dtype=_D.float32)


def DoubleTensor(indices, values, size):
    return sparse_coo_tensor(indices, values, size, dtype=_D.float64)


def LongTensor(indices, values, size):
    return sparse_coo_tensor(indices, values, size, dtype=_D.int64)


spmm = mm


def _install(oar):
    """oar.sparse_coo_tensor, oar.spmm, Tensor.to_sparse, and oar.mm / oar.matmul taking a sparse operand."""
    dense_matmul = oar.matmul

    def matmul(input, other):
        if isinstance(input, SparseCooTensor) or isinstance(other, SparseCooTensor):
            return mm(input, other)
        return dense_matmul(input, other)
    matmul.__doc__ = dense_matmul.__doc__
    oar.matmul = oar.mm = matmul
    oar.sparse_coo_tensor = sparse_coo_tensor
    oar.spmm = mm
    Tensor.to_sparse = to_sparse
    Tensor.to_sparse_coo = to_sparse
    dense_operator = Tensor.__matmul__

    def tensor_matmul(self, other):  # dense @ sparse
        return mm(self, other) if isinstance(other, SparseCooTensor) else dense_operator(self, other)
    Tensor.__matmul__ = tensor_matmul


__all__ = ["SparseCooTensor", "sparse_coo_tensor", "mm", "sum", "spmm"]
