"""VonMises(loc, concentration): the circular normal distribution (torch.distributions.VonMises).

Density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) on angles; loc and values may be any real numbers and are
read modulo 2 pi. log I0 and log I1 are torch's: the Abramowitz & Stegun 9.8.1-9.8.4 polynomials (within
5e-7 relative of the exact functions, oar.special.i0e / i1e), so log_prob and variance agree with
PyTorch 1.13 to float rounding rather than to those 5e-7. Sampling is Best & Fisher's (1979) rejection
method, vectorised: every round draws three uniforms per element from oar's generator and keeps the first
accepted proposal, until every element has one."""
import math

from .. import _creation, autograd
from .._ops import ops
from . import constraints
from .distribution import Distribution
from .utils import all_true, broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]

_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """log(I_order(x)) for x > 0 and order 0 or 1: a polynomial in (x / 3.75)^2 below 3.75, and
    x - log(x) / 2 + log(polynomial in 3.75 / x) above (torch's formulas)."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order!r}")
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = ops.abs(x) * small
    small = ops.log(small)
    y = 3.75 / x
    large = x - 0.5 * ops.log(x) + ops.log(_eval_poly(y, _COEF_LARGE[order]))
    return ops.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher's sampler for elements of `shape` (the parameters broadcast to it), folded into
    [-pi, pi) around loc. Each round every element still waiting gets a proposal; accepted ones keep it."""
    dtype, device = loc.dtype, loc.device
    x = _creation.zeros(*shape, dtype=dtype, device=device)
    # a NaN parameter (concentration 0 or inf without validation) would never be accepted: NaN, no loop
    bad = (proposal_r != proposal_r) | (concentration != concentration)
    x = ops.where(bad, x * float("nan"), x)
    done = bad
    while True:
        u = _creation.rand(3, *shape, dtype=dtype, device=device)
        u1, u2, u3 = u.select(0, 0), u.select(0, 1), u.select(0, 2)
        z = ops.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((ops.log(c / u2) + 1 - c) >= 0)
        x = ops.where(accept & ~done, ops.sign(u3 - 0.5) * ops.acos(f), x)
        done = done | accept
        if all_true(done):
            break
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """A circular von Mises distribution over angles (radians); `mean` and `variance` are the circular
    ones: loc, and 1 - I1(kappa) / I0(kappa)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        # the proposal (a wrapped Cauchy) for the rejection sampler
        tau = 1 + ops.sqrt(1 + 4 * self.concentration ** 2)
        rho = (tau - ops.sqrt(2 * tau)) / (2 * self.concentration)
        self._proposal_r = (1 + rho ** 2) / (2 * rho)
        super().__init__(batch_shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ops.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    def sample(self, sample_shape=()):
        """Best, D. J. and Fisher, N. I. (1979), "Efficient simulation of the von Mises distribution",
        Applied Statistics 28, 152-157. Not differentiable (has_rsample is False)."""
        shape = tuple(self._extended_shape(sample_shape))
        with autograd.no_grad():
            loc, conc, r = (t.detach().expand(*shape) for t in (self.loc, self.concentration, self._proposal_r))
            return _rejection_sample(loc, conc, r, shape)

    def expand(self, batch_shape):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(*tuple(batch_shape))
            concentration = self.concentration.expand(*tuple(batch_shape))
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - ops.exp(_log_modified_bessel_fn(self.concentration, order=1)
                           - _log_modified_bessel_fn(self.concentration, order=0))
