"""PyTorch's top-level linear-algebra functions and Tensor methods (torch.det, torch.inverse,
torch.svd with V not Vh, torch.qr(some=), ...), written with oar.linalg."""
import collections

from . import _C
from . import linalg as _la

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "pinverse", "matrix_power", "matrix_exp", "triangular_solve", "lu_solve", "lu", "lu_unpack"]

_SVD = collections.namedtuple("svd", ["U", "S", "V"])
_QR = collections.namedtuple("qr", ["Q", "R"])
_Triangular = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
_LUUnpack = collections.namedtuple("lu_unpack", ["P", "L", "U"])


def det(input):
    return _la.det(input)


def logdet(input):
    """log det: NaN for a negative determinant, -inf for zero (as torch.logdet)."""
    sign, logabs = _la.slogdet(input)
    from . import where, full_like
    nan = full_like(logabs, float("nan"))
    return where(sign < 0, nan, where(sign == 0, full_like(logabs, float("-inf")), logabs))


def slogdet(input):
    return _la.slogdet(input)


def inverse(input):
    return _la.inv(input)


def cholesky(input, upper=False):
    return _la.cholesky(input, upper=upper)


def cholesky_solve(input, input2, upper=False):
    """Solves A X = B given A's Cholesky factor (torch.cholesky_solve(B, L))."""
    L = input2.mT if upper else input2
    y = _la.solve_triangular(L, input, upper=False)
    return _la.solve_triangular(L.mT, y, upper=True)


def cholesky_inverse(input, upper=False):
    return _la.cholesky_inverse(input, upper=upper)


def qr(input, some=True):
    Q, R = _la.qr(input, mode="reduced" if some else "complete")
    return _QR(Q, R)


def svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with V, not Vh; some=False gives full U and V."""
    U, S, Vh = _la.svd(input, full_matrices=not some)
    if not compute_uv:
        from . import zeros_like
        return _SVD(zeros_like(U), S, zeros_like(Vh.mT))
    return _SVD(U, S, Vh.mT)


def pinverse(input, rcond=1e-15):
    return _la.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return _la.matrix_power(input, n)


def matrix_exp(input):
    return _la.matrix_exp(input)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    M = A.mT if transpose else A
    X = _la.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return _Triangular(X, A.clone())


def lu_solve(b, LU_data, LU_pivots):
    return _la.lu_solve(LU_data, LU_pivots, b)


def lu(A, pivot=True, get_infos=False):
    """torch.lu: the packed LU factors and pivots (linalg.lu_factor), and with get_infos the info too."""
    LU, pivots, info = _la.lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from torch.lu's packed factors; what is not unpacked is an empty tensor."""
    from . import empty, eye
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    none = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    P = _la._permutation(LU_pivots, m, LU_data) if unpack_pivots else none
    if not unpack_data:
        return _LUUnpack(P, none, none)
    L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
    return _LUUnpack(P, L, LU_data[..., :k, :].triu())


for _name in ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
              "pinverse", "matrix_power", "matrix_exp", "triangular_solve", "lu_solve", "lu"]:
    if not hasattr(_C.Tensor, _name):
        setattr(_C.Tensor, _name, globals()[_name])
del _name
