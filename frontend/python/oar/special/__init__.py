"""oar.special: torch.special (PyTorch 1.13's full list).

Every function is a composite of elementwise oar ops (or an oar catalog op where one exists), so it runs on
every device in the input's floating dtype; integer inputs are computed in the default float dtype. Families:

- _elementwise: exp2, expm1, expit, log1p, logit, sinc, round, entr, xlogy, xlog1py, softmax, log_softmax,
  logsumexp
- _error_functions: erf, erfc, erfinv, erfcx, ndtr, log_ndtr, ndtri
- _gamma: gammaln, digamma, psi, polygamma, multigammaln, gammainc, gammaincc, zeta
- _bessel: i0, i0e, i1, i1e, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, bessel_j0/j1/y0/y1,
  spherical_bessel_j0, airy_ai
- _polynomials: chebyshev_polynomial_t/u/v/w, shifted_chebyshev_polynomial_t/u/v/w, hermite_polynomial_h/he,
  laguerre_polynomial_l, legendre_polynomial_p

Gradients follow torch 1.13: the functions it differentiates have their exact derivatives (custom autograd
Functions for i0, i0e, i1, i1e, erfcx, log_ndtr, ndtri, gammainc/gammaincc in x and zeta in q; the others
through the ops they are built from); those it does not differentiate (the Bessel functions added in 1.13,
Airy, the polynomials) return results that do not require grad, as torch's do.
"""
from ._elementwise import (exp2, expm1, expit, log1p, logit, sinc, round, entr, xlogy, xlog1py, softmax,
                           log_softmax, logsumexp)
from ._error_functions import erf, erfc, erfinv, erfcx, ndtr, log_ndtr, ndtri
from ._gamma import gammaln, digamma, psi, polygamma, multigammaln, gammainc, gammaincc, zeta
from ._bessel import (i0, i0e, i1, i1e, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0,
                      modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1, bessel_j0,
                      bessel_j1, bessel_y0, bessel_y1, spherical_bessel_j0, airy_ai)
from ._polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
                           chebyshev_polynomial_w, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                           shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, hermite_polynomial_h,
                           hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p)

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def _install(oar):
    """torch's top-level and Tensor counterparts oar lacks: torch.i0 / igamma / igammac / mvlgamma and the
    Tensor methods i0, igamma, igammac, mvlgamma (with their in-place forms)."""
    from .._functions import _inplace_method
    Tensor = oar.Tensor

    def mvlgamma(input, p):
        return multigammaln(input, p)

    def _i0(input):  # oar.i0/igamma/igammac take out= from oar/_out.py, as every exported function
        return i0(input)

    def igamma(input, other):
        return gammainc(input, other)

    def igammac(input, other):
        return gammaincc(input, other)
    for name, fn in (("i0", _i0), ("igamma", igamma), ("igammac", igammac), ("mvlgamma", mvlgamma)):
        fn.__name__ = fn.__qualname__ = name
        if not hasattr(oar, name):
            setattr(oar, name, fn)
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
        if not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _inplace_method(fn))
        if not hasattr(oar, name + "_") and name == "i0":
            setattr(oar, "i0_", _inplace_method(fn))
