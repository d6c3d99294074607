"""oar.sparse: sparse COO matrices and tensors (torch.sparse_coo_tensor), for graph and recommendation code.

A SparseCooTensor holds `indices` (int64, [sparse_dim, nnz]) and `values` ([nnz]) of a tensor of `shape`,
on one device; duplicates are allowed until coalesce() sums them. What it computes is written with dense
oar ops on the values (index_select, index_add, scatter_reduce), so it runs on every device and gradients
reach the values and the dense operands: sparse @ dense (torch.sparse.mm, torch.spmm, torch.mm, `@`,
torch.sparse.addmm), dense @ sparse, sparse @ sparse (a sparse result), to_dense(), sparse.sum() (over some
dims: a sparse result, as torch's), sparse.softmax / log_softmax (over the stored entries of each slice),
products with a number or a dense tensor of its shape (a sparse result), sums and differences of sparse
tensors, torch.cat of sparse tensors, transpose of a matrix, and Tensor.to_sparse().

Only scalar values (no dense trailing dims) and the COO layout are supported; CSR/CSC, sparse-sparse
products and sparse gradients of nn.Embedding are not (they raise, naming the missing piece).
"""
import numbers

from .. import _C
from .._C import Tensor
from .._tensor_conversion import sparse_coo as _SPARSE_COO

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
    layout = _SPARSE_COO  # torch.sparse_coo (prints so; str(layout) == "torch.sparse_coo")

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
        """As torch prints a sparse tensor: indices and values aligned under their prefixes, then size, nnz,
        dtype (when not the default), layout and autograd state, the first of them on a new line."""
        import oar
        from .._tensor_str import PRINT_OPTS, _body, dtype_name
        indent = len("tensor(")

        def part(prefix, t):
            t = t.detach()
            body = _body(t, indent + len(prefix), PRINT_OPTS) if t.numel() else f"[], size={tuple(t.shape)}"
            return prefix + body + ")"
        text = "tensor(" + part("indices=tensor(", self._idx) + ",\n" + " " * indent + part("values=tensor(", self._val)
        suffixes = [f"device='{self.device}'"] if self.device.type != "cpu" else []
        suffixes += [f"size={tuple(self.shape)}", f"nnz={self._nnz()}"]
        if self.dtype not in (oar.get_default_dtype(), oar.int64, oar.bool):
            suffixes.append(f"dtype={dtype_name(self.dtype)}")
        suffixes.append(f"layout={self.layout!r}")
        if self._val.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self._val.grad_fn.name()}>")
        elif self._val.requires_grad:
            suffixes.append("requires_grad=True")
        last, newline = len(text) - text.rfind("\n") + 1, True
        out = [text]
        for suffix in suffixes:
            if newline or last + len(suffix) + 2 > PRINT_OPTS.linewidth:
                out.append(",\n" + " " * indent + suffix)
                last, newline = indent + len(suffix), False
            else:
                out.append(", " + suffix)
                last += len(suffix) + 2
        return "".join(out) + ")"

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
        if isinstance(other, Tensor):
            # sparse * dense: the dense entries at the stored positions (torch's result is sparse too)
            try:
                dense = other.expand(*self.shape)
            except Exception:  # noqa: BLE001 - reported with both shapes below
                dense = None
            if dense is None or other.ndim > self.ndim:
                raise _C.ShapeError(f"sparse * dense: the dense shape {list(other.shape)} does not broadcast to the "
                                    f"sparse shape {list(self.shape)}")
            picked = dense[tuple(self._idx[d] for d in range(self.sparse_dim()))] if self._nnz() else self._val
            return SparseCooTensor(self._idx, self._val * picked, self.shape, self._coalesced)
        if isinstance(other, SparseCooTensor):
            if tuple(other.shape) != tuple(self.shape):
                raise _C.ShapeError(f"sparse * sparse: shapes {list(self.shape)} and {list(other.shape)} differ")
            return (self.to_dense() * other.to_dense()).to_sparse()
        return NotImplemented

    __rmul__ = __mul__

    def mul(self, other):
        return self * other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

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

    def sum(self, dim=None, keepdim=False, dtype=None):
        if keepdim:
            raise NotImplementedError("sum of a sparse tensor: keepdim=True is not supported (torch has none)")
        return sum(self, dim, dtype)

    def softmax(self, dim, dtype=None):
        return softmax(self, dim, dtype)

    def log_softmax(self, dim, dtype=None):
        return log_softmax(self, dim, dtype)


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


def _rows(dense, index):
    """dense.index_select(0, index) of a matrix: through the embedding op (a row copy per lane) where it
    applies, which runs ~40x faster than index_select's element-per-lane kernel on CPU at GCN sizes
    (kernel_primitives indexing.kp); the same values and gradients."""
    if dense.ndim == 2 and dense.is_floating_point():
        from .. import ops
        return ops.embedding(dense, index, padding_idx=-1)
    return dense.index_select(0, index)


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
            picked = _rows(dense, cols) * mat1._val.to(dtype).unsqueeze(1)
            out = out.index_add(0, rows, picked)
        return out.squeeze(1) if vector else out
    if isinstance(mat1, Tensor) and isinstance(mat2, SparseCooTensor):
        if mat1.ndim == 1:
            return mm(mat2.t(), mat1)
        return mm(mat2.t(), mat1.transpose(0, 1)).transpose(0, 1)
    if isinstance(mat1, SparseCooTensor) and isinstance(mat2, SparseCooTensor):
        return mm(mat1, mat2.to_dense()).to_sparse()  # torch: sparse @ sparse is sparse
    from .. import matmul
    return matmul(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse and mat2 dense (a dense result)."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return (mat if beta == 1 else mat * beta) + product


def _dims(dim, ndim):
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        out.append(int(d) % ndim)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def sum(input, dim=None, dtype=None):
    """The sum of all entries (a dense 0-d tensor), or over `dim` (an int or a list): the sparse tensor of the
    remaining dims, coalesced, as torch.sparse.sum; summing over every dim gives the dense 0-d sum."""
    if not isinstance(input, SparseCooTensor):
        out = input.sum() if dim is None else input.sum(dim)
        return out if dtype is None else out.to(dtype)
    values = input._val if dtype is None else input._val.to(dtype)
    if dim is None:
        return values.sum()
    dims = _dims(dim, input.ndim)
    keep = [d for d in range(input.ndim) if d not in dims]
    if not keep:
        return values.sum()
    from .._functions import stack
    idx = stack([input._idx[d] for d in keep], 0)
    return SparseCooTensor(idx, values, [input.shape[d] for d in keep]).coalesce()


def _segments(input, dim):
    """For each stored entry of coalesced `input`, the number of its slice along `dim` (entries that differ
    only in their index along dim share one), and the number of slices."""
    key, n = None, 1
    for d in range(input.sparse_dim()):
        if d == dim:
            continue
        row = input._idx[d]
        key = row if key is None else key * input.shape[d] + row
        n *= input.shape[d]
    if key is None:  # a 1-D tensor: one slice
        from .._creation import zeros
        key = zeros(input._nnz(), dtype=_D.int64, device=input.device)
    return key, n


def _log_softmax_values(input, dim, dtype):
    """(coalesced input, log-softmax of its values over the stored entries of each slice along dim)."""
    if not isinstance(input, SparseCooTensor):
        raise TypeError(f"torch.sparse.softmax expects a sparse tensor, got {type(input).__name__}")
    (dim,) = _dims(dim, input.ndim)
    c = input.coalesce()
    values = c._val if dtype is None else c._val.to(dtype)
    if not c._nnz():
        return c, values
    key, n = _segments(c, dim)
    from .._creation import full, zeros
    # the slice maxima (a constant shift: no gradient needed through it)
    top = full((n,), float("-inf"), dtype=values.dtype, device=values.device).scatter_reduce(
        0, key, values.detach(), reduce="amax", include_self=False)
    shifted = values - top.index_select(0, key)
    total = zeros(n, dtype=values.dtype, device=values.device).index_add(0, key, shifted.exp())
    return c, shifted - total.log().index_select(0, key)


def softmax(input, dim, dtype=None):
    """torch.sparse.softmax: a softmax over the stored entries of each slice along dim (the entries not
    stored count as -inf, so they stay absent); a sparse result with input's (coalesced) indices."""
    c, logp = _log_softmax_values(input, dim, dtype)
    return SparseCooTensor(c._idx, logp.exp(), c.shape, True)


def log_softmax(input, dim, dtype=None):
    """torch.sparse.log_softmax: as softmax, in log space."""
    c, logp = _log_softmax_values(input, dim, dtype)
    return SparseCooTensor(c._idx, logp, c.shape, True)


def _cat(tensors, dim):
    """torch.cat of sparse COO tensors: the entries of each, shifted along dim by the sizes before it."""
    if not all(isinstance(t, SparseCooTensor) for t in tensors):
        raise TypeError("torch.cat: the tensors must be all sparse or all dense (oar has no mixed concatenation)")
    first = tensors[0]
    (d,) = _dims(dim, first.ndim)
    for t in tensors[1:]:
        if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != d):
            raise _C.ShapeError(f"torch.cat: sparse tensors of shapes {list(first.shape)} and {list(t.shape)} "
                                f"differ outside dim {d}")
    from .._functions import cat, stack
    indices, offset = [], 0
    for t in tensors:
        rows = [t._idx[r] + offset if r == d else t._idx[r] for r in range(t.ndim)]
        indices.append(stack(rows, 0) if t._nnz() else t._idx)
        offset += t.shape[d]
    shape = list(first.shape)
    shape[d] = offset
    return SparseCooTensor(cat(indices, 1), cat([t._val for t in tensors], 0), shape)


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
    dense_cat = oar.cat

    def cat(tensors, dim=0):
        try:
            return dense_cat(tensors, dim)
        except (RuntimeError, TypeError):  # the dense op refuses sparse operands: they are rare, so checked here
            tensors = list(tensors)
            if not any(isinstance(t, SparseCooTensor) for t in tensors):
                raise
            return _cat(tensors, dim)
    cat.__doc__ = dense_cat.__doc__
    oar.cat = oar.concat = oar.concatenate = cat
    oar.sparse_coo_tensor = sparse_coo_tensor
    oar.spmm = mm
    Tensor.to_sparse = to_sparse
    Tensor.to_sparse_coo = to_sparse
    dense_operator = Tensor.__matmul__

    def tensor_matmul(self, other):  # dense @ sparse
        return mm(self, other) if isinstance(other, SparseCooTensor) else dense_operator(self, other)
    Tensor.__matmul__ = tensor_matmul


__all__ = ["SparseCooTensor", "sparse_coo_tensor", "mm", "addmm", "sum", "spmm", "softmax", "log_softmax"]
