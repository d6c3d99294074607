"""oar.linalg: torch.linalg on the catalog's linalg ops (runtime/src/catalog/linalg.cpp), which run
on every device (the kernel primitives' linalg family) and have gradient rules. Batch dims
broadcast as in PyTorch; a failed factorization raises LinAlgError naming the function."""
import collections
import math

from . import _C
from ._ops import ops

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "solve_triangular", "lu_factor", "lu_factor_ex", "lu",
           "lu_solve", "solve", "solve_ex", "inv", "inv_ex", "det", "slogdet", "qr", "eigh", "eigvalsh", "svd",
           "svdvals", "lstsq", "matrix_power", "vector_norm", "matrix_norm", "norm", "cond", "matrix_rank", "pinv",
           "cross", "multi_dot", "vecdot", "diagonal", "matmul", "vander", "matrix_exp", "cholesky_inverse",
           "tensorinv", "tensorsolve"]


class LinAlgError(RuntimeError):
    """A factorization or solve failed (singular or not positive-definite input): torch.linalg.LinAlgError."""


QR = collections.namedtuple("QR", ["Q", "R"])
Eigh = collections.namedtuple("Eigh", ["eigenvalues", "eigenvectors"])
SVD = collections.namedtuple("SVD", ["U", "S", "Vh"])
SlogDet = collections.namedtuple("SlogDet", ["sign", "logabsdet"])
LUFactor = collections.namedtuple("LUFactor", ["LU", "pivots"])
LUFactorEx = collections.namedtuple("LUFactorEx", ["LU", "pivots", "info"])
PLU = collections.namedtuple("PLU", ["P", "L", "U"])
CholeskyEx = collections.namedtuple("CholeskyEx", ["L", "info"])
InvEx = collections.namedtuple("InvEx", ["inverse", "info"])
SolveEx = collections.namedtuple("SolveEx", ["result", "info"])
Lstsq = collections.namedtuple("Lstsq", ["solution", "residuals", "rank", "singular_values"])


def _check_tensor(fn, A, name="A"):
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg.{fn}: expected a Tensor for '{name}', got {type(A).__name__}")


def _float(fn, A):
    """Integer inputs are refused as PyTorch does (linalg works in float32/float64)."""
    _check_tensor(fn, A)
    if A.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise _C.DTypeError(f"linalg.{fn}: Expected a floating point tensor (float32 or float64) as input. "
                            f"Got {A.dtype}")
    return A


def _square(fn, A):
    _float(fn, A)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise _C.ShapeError(f"linalg.{fn}: A must be batches of square matrices, but they are "
                            f"{'x'.join(map(str, A.shape[-2:])) if A.dim() >= 2 else tuple(A.shape)} matrices")
    return A


def _broadcast_batch(A, B):
    """A [..., n, n] and B [..., n, k] with their batch dims broadcast."""
    a, b = tuple(A.shape[:-2]), tuple(B.shape[:-2])
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise _C.ShapeError(f"linalg: the batch dimensions {a} and {b} of the operands do not broadcast")
    batch = tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def _raise_info(fn, info, message):
    """info (i32, per matrix) > 0 -> LinAlgError with PyTorch's wording; reads info back (one sync)."""
    values = info.reshape(-1).tolist()
    for k, v in enumerate(values):
        if v > 0:
            where = f"(Batch element {k}): " if len(values) > 1 or info.dim() > 0 else ""
            raise LinAlgError(f"linalg.{fn}: {where}{message(v)}")


def _vector_rhs(A, B):
    """torch.linalg.solve treats B as a vector when B.ndim == 1 or B.shape == A.shape[:-1]."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


# ---- factorizations ----

def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    _square("cholesky", A)
    L, info = ops.linalg_cholesky(A, upper=upper)
    if check_errors:
        _raise_info("cholesky", info, _not_pd)
    return CholeskyEx(L, info)


def _not_pd(v):
    return (f"The factorization could not be completed because the input is not positive-definite (the leading "
            f"minor of order {v} is not positive-definite).")


def cholesky(A, *, upper=False, out=None):
    L, info = cholesky_ex(A, upper=upper)
    _raise_info("cholesky", info, _not_pd)
    return L


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    _square("solve_triangular", A)
    _float("solve_triangular", B)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve_triangular(A.mT, B.mT, upper=not upper, left=True, unitriangular=unitriangular).mT
    A, B = _broadcast_batch(A, B)
    return ops.linalg_solve_triangular(A, B, upper=upper, unitriangular=unitriangular)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    _float("lu_factor", A)
    if A.dim() < 2:
        raise _C.ShapeError(f"linalg.lu_factor: A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented (pivot=False)")
    if A.requires_grad and _C.is_grad_enabled() and A.shape[-2] != A.shape[-1]:
        raise NotImplementedError("linalg.lu_factor: the derivative of the LU factorization of a non-square "
                                  f"matrix is not implemented (got shape {tuple(A.shape)})")
    LU, pivots, info = ops.linalg_lu_factor(A)
    if check_errors:
        _raise_info("lu_factor", info, lambda v: f"U[{v},{v}] is zero, singular U.")
    return LUFactorEx(LU, pivots, info)


def lu_factor(A, *, pivot=True, out=None):
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return LUFactor(LU, pivots)


def lu(A, *, pivot=True, out=None):
    """A = P L U: L unit lower [m, k], U upper [k, n], P from the pivots."""
    from . import eye
    LU, pivots = lu_factor(A, pivot=pivot)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)
    U = LU[..., :k, :].triu()
    return PLU(_permutation(pivots, m, A), L, U)


def _permutation(pivots, m, like):
    """P with A = P L U from LAPACK-style pivots (row swaps in order, 1-based), composed on the host:
    the pivots are k small integers per matrix."""
    from . import tensor
    k = pivots.shape[-1]
    batch = tuple(pivots.shape[:-1])
    rows = pivots.reshape(-1, k).tolist() if k else [[] for _ in range(_numel(batch))]
    mats = []
    for row in rows:
        p = list(range(m))
        for i, r in enumerate(row):
            p[i], p[r - 1] = p[r - 1], p[i]
        mats.append([[1.0 if p[j] == i else 0.0 for j in range(m)] for i in range(m)])
    return tensor(mats, dtype=like.dtype, device=like.device).reshape(batch + (m, m))


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    _square("lu_solve", LU)
    _float("lu_solve", B)
    if not left or adjoint:
        # Rebuild A = P L U and solve in the asked form (rare; exact).
        P, L, U = _plu_from(LU, pivots)
        A = P @ L @ U
        if adjoint:
            A = A.mT
        return solve(A, B, left=left)
    LU, B = _broadcast_batch(LU, B)
    pivots = pivots.expand(tuple(LU.shape[:-1]))
    return ops.linalg_lu_solve(LU, pivots.contiguous(), B)


def _plu_from(LU, pivots):
    from . import eye
    n = LU.shape[-1]
    return _permutation(pivots, n, LU), LU.tril(-1) + eye(n, dtype=LU.dtype, device=LU.device), LU.triu()


def qr(A, mode="reduced", *, out=None):
    _float("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                         f"or 'complete'")
    Q, R = ops.linalg_qr(A, mode=mode)
    return QR(Q, R)


def eigh(A, UPLO="L", *, out=None):
    _square("eigh", A)
    if UPLO not in ("L", "U"):
        raise ValueError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V = ops.linalg_eigh(A, UPLO=UPLO)
    return Eigh(w, V)


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO).eigenvalues


def svd(A, full_matrices=True, *, driver=None, out=None):
    _float("svd", A)
    if A.dim() < 2:
        raise _C.ShapeError(f"linalg.svd: A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    U, S, Vh = ops.linalg_svd(A, full_matrices=full_matrices)
    return SVD(U, S, Vh)


def svdvals(A, *, driver=None, out=None):
    return svd(A, full_matrices=False).S


# ---- solves, inverses, determinants ----

def solve(A, B, *, left=True, out=None):
    _square("solve", A)
    _float("solve", B)
    if not left:  # X A = B  <=>  A^T X^T = B^T (a vector B is its own transpose)
        return solve(A.mT, B) if B.dim() == 1 else solve(A.mT, B.mT).mT
    vector = _vector_rhs(A, B)
    if vector:
        B = B.unsqueeze(-1)
    A, B = _broadcast_batch(A, B)
    try:
        X = ops.linalg_solve(A, B)
    except _C.ValueError as e:
        raise LinAlgError(str(e)) from None
    return X.squeeze(-1) if vector else X


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    from . import zeros
    try:
        X = solve(A, B, left=left)
        info = zeros(tuple(A.shape[:-2]), dtype=_C.dtype.int32, device=A.device)
    except LinAlgError:
        if check_errors:
            raise
        info = ops.linalg_lu_factor(A)[2]
        X = zeros(tuple(B.shape), dtype=B.dtype, device=B.device)
    return SolveEx(X, info)


def inv(A, *, out=None):
    _square("inv", A)
    try:
        return ops.linalg_inv(A)
    except _C.ValueError as e:
        raise LinAlgError(str(e)) from None


def inv_ex(A, *, check_errors=False, out=None):
    from . import zeros_like, zeros
    try:
        return InvEx(inv(A), zeros(tuple(A.shape[:-2]), dtype=_C.dtype.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
        _, _, info = ops.linalg_lu_factor(A)
        return InvEx(zeros_like(A), info)


def det(A, *, out=None):
    _square("det", A)
    return ops.linalg_det(A)


def slogdet(A, *, out=None):
    _square("slogdet", A)
    sign, logabsdet = ops.linalg_slogdet(A)
    return SlogDet(sign, logabsdet)


def cholesky_inverse(L, upper=False, *, out=None):
    """(L L^T)^{-1} from a Cholesky factor (torch.cholesky_inverse)."""
    from . import eye
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L.device).expand(tuple(L.shape))
    if upper:
        L = L.mT
    Linv = solve_triangular(L, identity, upper=False)
    return Linv.mT @ Linv


def lstsq(A, B, rcond=None, *, driver=None):
    """Least squares min ||A X - B|| (full-rank A: QR; the minimum-norm solution when A is wide)."""
    _float("lstsq", A)
    _float("lstsq", B)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                         f"got {driver}")
    from . import empty
    vector = B.dim() == A.dim() - 1
    if vector:
        B = B.unsqueeze(-1)
    if A.shape[-2] != B.shape[-2]:
        raise _C.ShapeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {A.shape[-2]} "
                            f"and {B.shape[-2]}")
    m, n = A.shape[-2], A.shape[-1]
    driver = driver or "gelsy"
    if driver in ("gelsd", "gelss"):  # SVD-based: rank-deficient A gets the minimum-norm solution
        X = pinv(A, rtol=rcond) @ B if rcond is not None else pinv(A) @ B
    elif m >= n:
        Q, R = qr(A)
        X = solve_triangular(R, Q.mT @ B, upper=True)
    else:
        Q, R = qr(A.mT)  # A^T = Q R, A = R^T Q^T: X = Q R^{-T} B
        X = Q @ solve_triangular(R.mT, B, upper=False)
    X = X.squeeze(-1) if vector else X
    residuals = empty((0,), dtype=A.dtype, device=A.device)
    if m > n and driver != "gelsy":
        r = A @ (X.unsqueeze(-1) if vector else X) - B
        residuals = (r * r).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    rank = matrix_rank(A) if driver != "gels" else empty((0,), dtype=_C.dtype.int64, device=A.device)
    sv = svdvals(A) if driver in ("gelsd", "gelss") else empty((0,), dtype=A.dtype, device=A.device)
    return Lstsq(X, residuals, rank, sv)


def _zero_grad_from(x, reduce=None):
    """0 (x's shape, or reduce()d) with a zero gradient to x, when x requires grad under grad mode (else None):
    added to a result computed without x's values (A ** 0, an ord-0 norm), it gives that result the zero
    gradient torch gives it, rather than none (a later backward() would fail on it)."""
    if not (x.requires_grad and _C.is_grad_enabled()):
        return None
    from ._tensor_math_base import _false_like, _scalar
    zero = ops.where(_false_like(x), x, _scalar(0.0, x))  # x's gradient through it: where(False, ...) = 0
    return zero if reduce is None else reduce(zero)


def matrix_power(A, n):
    _check_tensor("matrix_power", A)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise _C.ShapeError(f"linalg.matrix_power: expected a tensor of square matrices, got shape {tuple(A.shape)}")
    if not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    from . import eye
    if n == 0:
        identity = eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()
        zero = _zero_grad_from(A)
        return identity if zero is None else identity + zero
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:  # binary powering, as PyTorch
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


# ---- norms ----

def _dims(dim, ndim):
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_tensor("vector_norm", x, "x")
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    dims = _dims(dim, x.dim())
    kw = {"keepdim": keepdim} if dims is None else {"dim": dims, "keepdim": keepdim}
    a = x.abs()
    if dims is None and not keepdim:
        kw = {}
    if ord == math.inf:
        return a.amax(**kw) if kw else a.amax()
    if ord == -math.inf:
        return a.amin(**kw) if kw else a.amin()
    if ord == 0:
        count = (a != 0).to(x.dtype).sum(**kw) if kw else (a != 0).to(x.dtype).sum()
        zero = _zero_grad_from(x, lambda z: z.sum(**kw) if kw else z.sum())
        return count if zero is None else count + zero
    if ord == 1:
        return a.sum(**kw) if kw else a.sum()
    if ord == 2:
        s = (a * a).sum(**kw) if kw else (a * a).sum()
        return s.sqrt()
    s = (a ** ord).sum(**kw) if kw else (a ** ord).sum()
    return s ** (1.0 / ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    _check_tensor("matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise _C.ShapeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        B = A.movedim((d0, d1), (-2, -1))
        S = svdvals(B)
        r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum (sum over rows), inf: max row sum.
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(dim=sum_dim, keepdim=True)
        r = s.amax(dim=red_dim, keepdim=True) if ord > 0 else s.amin(dim=red_dim, keepdim=True)
        return r if keepdim else r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise ValueError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_tensor("norm", A)
    if dim is not None and not isinstance(dim, int) and len(tuple(dim)) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)
    if ord is not None and dim is None and A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        if dim is None and A.dim() != 2:
            raise ValueError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                             f"Got {A.dim()}D.")
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    if p in (None, 2, -2):
        S = svdvals(A)
        return S.amax(-1) / S.amin(-1) if p in (None, 2) else S.amin(-1) / S.amax(-1)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    _float("matrix_rank", A)
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:
        eps = 2.220446049250313e-16 if A.dtype == _C.dtype.float64 else 1.1920928955078125e-07
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(A.shape[-2], A.shape[-1])
    threshold = max(atol or 0.0, 0.0) + rtol * smax if not isinstance(atol, _C.Tensor) else atol + rtol * smax
    return (S > threshold).to(_C.dtype.int64).sum(-1)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None, out=None):
    _float("pinv", A)
    U, S, Vh = svd(A, full_matrices=False)
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        eps = 2.220446049250313e-16 if A.dtype == _C.dtype.float64 else 1.1920928955078125e-07
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(A.shape[-2], A.shape[-1])
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    threshold = (atol or 0.0) + rtol * smax
    from . import where, zeros_like
    keep = S > threshold
    Sinv = where(keep, 1.0 / where(keep, S, S + 1), zeros_like(S))
    return (Vh.mT * Sinv.unsqueeze(-2)) @ U.mT


# ---- products ----

def cross(input, other, *, dim=-1, out=None):
    from . import stack
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise _C.ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                            f"{other.shape[dim]}")
    a0, a1, a2 = input.unbind(dim)
    b0, b1, b2 = other.unbind(dim)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim=dim)


def multi_dot(tensors, *, out=None):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ValueError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    if first_vec:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vec:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for k, t in enumerate(tensors):
        if t.dim() != 2:
            raise _C.ShapeError(f"multi_dot(): tensor {k} must be 2D but got {t.dim()}D")
    for k in range(1, len(tensors)):
        if tensors[k - 1].shape[1] != tensors[k].shape[0]:
            raise _C.ShapeError(f"multi_dot(): tensors {k - 1} and {k} with shapes {list(tensors[k - 1].shape)} and "
                                f"{list(tensors[k].shape)} cannot be multiplied")
    from ._tensor_matrix import _multi_dot
    result = _multi_dot(tensors)  # the cheapest order
    if first_vec:
        result = result.squeeze(0)
    if last_vec:
        result = result.squeeze(-1)
    return result


def vecdot(x, y, *, dim=-1, out=None):
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


def matmul(input, other, *, out=None):
    return input @ other


def vander(x, *, N=None):
    from . import stack
    N = x.shape[-1] if N is None else N
    cols = [x ** 0 if k == 0 else x ** k for k in range(N)]
    return stack(cols, dim=-1)


def matrix_exp(A):
    """exp(A) by scaling and squaring with a degree-12 Taylor series (float64-accurate for moderate norms)."""
    from . import eye
    _square("matrix_exp", A)
    n = A.shape[-1]
    norm1 = matrix_norm(A.detach(), 1).amax().item() if A.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm1))) + 1) if norm1 > 0.5 else 0
    X = A / (2 ** s)
    identity = eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    result, term = identity, identity
    for k in range(1, 13):
        term = term @ X / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


def tensorinv(A, ind=2):
    """The X with tensordot(A, X, ind) the identity: A's first `ind` dims as rows, the rest as columns."""
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if ind <= 0 or _numel(rows) != _numel(cols):
        raise ValueError(f"linalg.tensorinv: expected ind > 0 and prod(A.shape[:ind]) == prod(A.shape[ind:]), "
                         f"got shape {tuple(A.shape)} and ind={ind}")
    return inv(A.reshape(_numel(rows), _numel(cols))).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """The X with tensordot(A, X, X.ndim) == B; `dims` are A's dims moved to the end first."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    shape = tuple(A.shape[B.dim():])
    if _numel(shape) != B.numel():
        raise ValueError(f"linalg.tensorsolve: expected prod(A.shape[B.ndim:]) == B.numel(), got A of shape "
                         f"{tuple(A.shape)} and B of shape {tuple(B.shape)}")
    return solve(A.reshape(B.numel(), B.numel()), B.reshape(B.numel())).reshape(shape)
