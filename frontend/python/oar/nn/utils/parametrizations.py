"""nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations (PyTorch's API and
state_dict keys: parametrizations.weight.original0 / original1 for weight_norm's g and v,
parametrizations.weight.original plus parametrizations.weight.0._u / ._v for spectral_norm)."""
import math

import numpy as np

from ... import _C
from ..._C import Tensor
from ..._ops import ops
from ...autograd import no_grad
from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dim but `dim` (kept, size 1 elsewhere); dim=-1: over all, a 0-dim tensor."""
    if dim == -1:
        return ops.sqrt(ops.sum(v * v))
    d = dim % v.ndim
    dims = [i for i in range(v.ndim) if i != d]
    if not dims:
        return ops.abs(v)
    return ops.sqrt(ops.sum(v * v, dims=dims, keepdim=True))


def _weight_norm(v, g, dim):
    """v * (g / ||v||), the norm over all dims but dim (torch._weight_norm)."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as g * v / ||v|| (norm over every dim but dim; dim=None: the whole
    tensor), with g = original0 and v = original1 under module.parametrizations.<name>."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = ops.normal(shape=[h], mean=0.0, std=1.0, dtype=weight.dtype, device=weight.device)
            v = ops.normal(shape=[w], mean=0.0, std=1.0, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.detach().clone(), self._v.detach().clone()
        sigma = ops.sum(u * (weight_mat @ v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _is_conv_transpose(module):
    return parametrize.type_before_parametrizations(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d",
                                                                         "ConvTranspose3d")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrizes module.<name> as W / sigma(W), sigma the largest singular value estimated by power
    iteration (n_power_iterations per forward in training; u and v kept as buffers _u, _v)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ----
def _matrix_exp(a):
    """exp(A) for a square (batch of) matrices: scaling and squaring around a degree-18 Taylor polynomial
    (all matmuls, so autograd differentiates it).
    TODO(matrix_exp): a catalog matrix_exp / linalg op would replace this."""
    n = a.shape[-1]
    norm = float(ops.max(ops.sum(ops.abs(a.detach()), dims=[a.ndim - 2])).item()) if a.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0)
    x = a * (1.0 / 2 ** s)
    eye = _C.tensor(np.eye(n), a.dtype, a.device)
    result, term = eye + x, x
    for k in range(2, 19):
        term = ops.matmul(term, x) * (1.0 / k)
        result = result + term
    for _ in range(s):
        result = ops.matmul(result, result)
    return result


def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eps = 10 * n * np.finfo(q.dtype).eps
    return np.allclose(np.swapaxes(q, -1, -2) @ q, np.eye(k), atol=eps)


def _make_orthogonal(a):
    """The Q of A's QR decomposition with R's diagonal made positive (PyTorch's _make_orthogonal)."""
    q, r = np.linalg.qr(a)
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _eye_mask(n, k, dtype, device, strict):
    rows = _C.tensor(np.arange(n).reshape(n, 1), _C.dtype.int64, device)
    cols = _C.tensor(np.arange(k).reshape(1, k), _C.dtype.int64, device)
    return ((rows > cols) if strict else (rows >= cols)).to(dtype=dtype)


def _householder_product(A, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i column i of A below the diagonal
    with a 1 on it (torch.linalg.householder_product), as k rank-one updates.
    TODO(householder_product): a catalog op would replace this loop."""
    n, k = A.shape[-2], A.shape[-1]
    batch = list(A.shape[:-2])
    V = A * _eye_mask(n, k, A.dtype, A.device, True) + _C.tensor(np.eye(n, k), A.dtype, A.device)
    Q = ops.expand(_C.tensor(np.eye(n, k), A.dtype, A.device), shape=batch + [n, k])
    for i in reversed(range(k)):
        v = V[..., i:i + 1]  # [..., n, 1]
        t = tau[..., i:i + 1].unsqueeze(-1)  # [..., 1, 1]
        Q = Q - ops.matmul(v * t, ops.matmul(v.mT, Q))
    return Q


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.ndim < 2:
            raise ValueError(f"Cannot apply orthogonal to a tensor of dimension {weight.ndim}")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        batch = list(X.shape[:-2])
        if self.orthogonal_map == "matrix_exp":
            A = X * _eye_mask(n, k, X.dtype, X.device, False)  # tril(X)
            if n != k:  # embed into a square matrix
                zeros = _C.call("fill", [], {"shape": batch + [n, n - k], "value": 0.0, "dtype": X.dtype}, X.device)
                A = ops.concat([A, zeros], dim=X.ndim - 1)
            Q = _matrix_exp(A - A.mT)
            if n != k:
                Q = Q[..., :k]
        else:  # householder
            A = X * _eye_mask(n, k, X.dtype, X.device, True)  # tril(X, -1)
            tau = 2.0 / (ops.sum(A * A, dims=[X.ndim - 2]) + 1.0)
            Q = _householder_product(A, tau)
            # X's diagonal holds +-1 (set by right_inverse), not differentiated through
            diag = ops.sum(X.detach() * _C.tensor(np.eye(n, k), X.dtype, X.device), dims=[X.ndim - 2])
            Q = Q * ops.cast(ops.cast(diag, dtype=_C.dtype.int64), dtype=X.dtype).unsqueeze(-2)
        if self.__dict__.get("_buffers", {}).get("base") is not None:
            Q = ops.matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{tuple(Q.shape)}.")
        if "base" not in self._buffers:
            raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                      "parametrizations when use_trivialization=False.")
        with no_grad():
            q = np.asarray(Q.detach().cpu().numpy(), dtype=np.float64)
            n, k = q.shape[-2], q.shape[-1]
            if n < k:
                q = np.swapaxes(q, -1, -2)
                n, k = k, n
            if n == k:
                base = q.copy() if _is_orthogonal(q) else _make_orthogonal(q)
            else:  # complete Q into a full n x n orthogonal matrix
                N = ops.normal(shape=list(q.shape[:-1]) + [n - k], mean=0.0, std=1.0, dtype=_C.dtype.float64)
                base = _make_orthogonal(np.concatenate([q, np.asarray(N.numpy())], axis=-1))
            self.base = _C.tensor(np.ascontiguousarray(base), Q.dtype, Q.device)
            # -Id: householder(zeros with a -1 diagonal) is the identity; matrix_exp ignores the diagonal.
            neg_id = -np.broadcast_to(np.eye(self.shape[-2], self.shape[-1]), self.shape)
            return _C.tensor(np.ascontiguousarray(neg_id), Q.dtype, Q.device)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Reparametrizes module.<name> (a matrix or batch of matrices) as a (semi-)orthogonal matrix, times a
    base matrix that the last assignment sets (dynamic trivialization): orthogonal_map "matrix_exp"
    (exp of a skew-symmetric matrix; default for square weights) or "householder" (a product of
    reflections; default otherwise), as PyTorch. "cayley" (a linear solve) and use_trivialization=False
    (which needs geqrf) are not supported."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    if orthogonal_map == "cayley":
        # TODO(linalg.solve): Cayley needs a linear solve the catalog lacks.
        raise NotImplementedError('orthogonal(): orthogonal_map="cayley" is not supported by oar yet')
    if not use_trivialization:
        raise NotImplementedError("orthogonal(): use_trivialization=False is not supported by oar yet")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
