"""LKJCholesky(dim, concentration): Cholesky factors of correlation matrices (torch.distributions.LKJCholesky).
L L^T has density proportional to det(L L^T)^(concentration - 1); concentration 1 is uniform over
correlation matrices. Sampling is the onion method (Lewandowski, Kurowicka and Joe 2009, section 3)."""
import math

from .. import _C, autograd
from .._ops import ops
from ..special import multigammaln
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo, randn_like_shape, zeros_like

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        c = self.concentration
        marginal_conc = c + 0.5 * (dim - 2)
        # row i's squared norm of the off-diagonal part is Beta(i/2, marginal - (i-1)/2), row 0 a dummy
        offset = _C.call("arange", [], {"start": 0.0, "end": float(dim - 1), "step": 1.0, "dtype": c.dtype},
                         c.device)
        offset = ops.concat([offset.new_zeros((1,)), offset], dim=0)
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(c.shape), (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with autograd.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = ops.tril(randn_like_shape(self._extended_shape(sample_shape), y), diagonal=-1)
            # each row a random direction on the sphere of its first i coordinates; row 0 is e_0
            u = u / ops.sqrt(ops.sum(u * u, dims=[-1], keepdim=True))
            u = ops.concat([zeros_like(u.narrow(-2, 0, 1)), u.narrow(-2, 1, self.dim - 1)], dim=-2)
            w = ops.sqrt(y) * u
            diag = ops.sqrt(ops.clamp(1 - ops.sum(w * w, dims=[-1], keepdim=False), min=float(finfo(w.dtype).tiny)))
            return w + ops.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = ops.diagonal(value, dim1=-1, dim2=-2).narrow(-1, 1, self.dim - 1)
        c = self.concentration
        order = _C.call("arange", [], {"start": 2.0, "end": float(self.dim + 1), "step": 1.0, "dtype": c.dtype},
                        c.device)
        order = 2 * (c - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = ops.sum(order * ops.log(diag_elems), dims=[-1], keepdim=False)
        dm1 = self.dim - 1
        alpha = c + 0.5 * dm1
        normalize_term = 0.5 * dm1 * math.log(math.pi) + multigammaln(alpha - 0.5, dm1) - ops.lgamma(alpha) * dm1
        return unnormalized_log_pdf - normalize_term
