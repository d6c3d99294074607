"""Invertible (or at least computable) maps between constrained spaces (torch.distributions.transforms).

A Transform maps x in `domain` to y = t(x) in `codomain`; `t.inv` is the inverse map, and
`log_abs_det_jacobian(x, y)` is log |dy/dx| summed over nothing (event_dim 0) or over the transform's own
event dims. With cache_size=1 the last (x, y) pair is kept, so `t.inv(t(x))` gives back the very x (no
round-off, no atanh(+-1) = inf for a saturated tanh): that is what makes the SAC-style squashed Gaussian
    TransformedDistribution(Normal(mu, std), [TanhTransform(cache_size=1)])
score its own rsample()s exactly."""
import functools
import math
import numbers
import operator
import weakref

from .. import _C
from .._C import Tensor
from .._ops import ops
from . import constraints
from .utils import (all_true, broadcast_shape, clamp_probs, eye_like, finfo, full_like, softplus, sum_rightmost,
                    tril_matrix_to_vec, vec_to_tril_matrix, zeros_like)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PowerTransform", "ReshapeTransform",
           "SigmoidTransform", "SoftplusTransform", "StackTransform", "TanhTransform", "SoftmaxTransform",
           "StickBreakingTransform",
           "Transform", "identity_transform"]


class Transform:
    """Base class: subclasses give _call (forward), and where they can _inverse, log_abs_det_jacobian,
    domain, codomain, bijective and sign."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None  # a weak reference does not pickle
        return state

    @property
    def cache_size(self):
        return self._cache_size

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (one object, kept weakly, so t.inv.inv is t)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """+1 or -1 for a monotone increasing or decreasing bijection of the reals."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return self._with_cache(cache_size)

    def _with_cache(self, cache_size):
        """A copy with another cache_size: subclasses with constructor arguments override this."""
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        """The output shape for an input of this shape."""
        return tuple(shape)

    def inverse_shape(self, shape):
        """The input shape for an output of this shape."""
        return tuple(shape)

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: every method defers to the forward one."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied left to right: ComposeTransform([f, g])(x) = g(f(x)). An empty list is the identity."""

    def __init__(self, parts, cache_size=0):
        parts = list(parts)
        for p in parts:
            if not isinstance(p, Transform):
                raise TypeError(f"ComposeTransform expects Transforms, got {type(p).__name__}")
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # event dims needed at the input so that every part sees at least its own
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def _with_cache(self, cache_size):
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))  # cached parts hand back their last output here
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its `reinterpreted_batch_ndims` rightmost batch dims treated as event dims
    (the log-det-Jacobian is summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def _with_cache(self, cache_size):
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshapes the rightmost event dims from in_shape to out_shape (same number of elements)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(int(s) for s in in_shape), tuple(int(s) for s in out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _with_cache(self, cache_size):
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(*(batch + self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(*(batch + self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return _C.call("fill", [], {"shape": list(batch), "value": 0.0, "dtype": x.dtype}, x.device)

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape, old, new):
        shape = tuple(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new


class _ParameterFreeTransform(Transform):
    """A transform without parameters: equal to any instance of its class (torch's
    `isinstance(other, ExpTransform)`), compared by that class even in a user's subclass of it."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if _ParameterFreeTransform in cls.__bases__:
            cls._eq_class = cls

    def __eq__(self, other):
        return isinstance(other, self._eq_class)

    __hash__ = object.__hash__


class ExpTransform(_ParameterFreeTransform):
    """y = exp(x)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return ops.exp(x)

    def _inverse(self, y):
        return ops.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        if not isinstance(exponent, (Tensor, numbers.Real)):
            raise TypeError(f"PowerTransform expects a number or Tensor exponent, got {type(exponent).__name__}")
        self.exponent = exponent

    def _with_cache(self, cache_size):
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return _sign(self.exponent)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1.0 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return ops.log(ops.abs(self.exponent * y / x))

    def forward_shape(self, shape):
        return broadcast_shape(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape  # the same shape both ways


class SigmoidTransform(_ParameterFreeTransform):
    """y = sigmoid(x), kept inside (0, 1) in floating point."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return clamp_probs(ops.sigmoid(x))

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = ops.clamp(y, min=float(info.tiny), max=float(1 - info.eps))
        return ops.log(y) - ops.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_ParameterFreeTransform):
    """y = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return ops.log(-ops.expm1(-y)) + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(_ParameterFreeTransform):
    """y = tanh(x). The inverse is atanh, infinite at y = +-1: with cache_size=1 a sample's own
    log_prob does not need it."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return ops.tanh(x)

    def _inverse(self, y):
        return ops.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_ParameterFreeTransform):
    """y = |x| (not injective: the inverse gives the positive root)."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return ops.abs(x)

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x; `event_dim` rightmost dims form one event (the log-det-Jacobian is summed
    over them)."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = int(event_dim)

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    def _with_cache(self, cache_size):
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale) and self._event_dim == other._event_dim)

    __hash__ = object.__hash__

    @property
    def sign(self):
        return _sign(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            result = full_like(x, math.log(abs(float(self.scale))))
        else:
            result = ops.log(ops.abs(self.scale))
            full = broadcast_shape(shape, result.shape)
            result = result if tuple(result.shape) == full else result.expand(*full)
            shape = full
        if self._event_dim:
            result = sum_rightmost(result, self._event_dim)
            shape = shape[:len(shape) - self._event_dim]
        return result if tuple(result.shape) == shape else result.expand(*shape)

    def forward_shape(self, shape):
        return broadcast_shape(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape  # the same shape both ways


class SoftmaxTransform(_ParameterFreeTransform):
    """Real vectors to the simplex by softmax over the last dim (not injective: no log-det-Jacobian);
    the inverse gives log(y), one of the preimages."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        return ops.softmax(x, dim=-1)

    def _inverse(self, y):
        return ops.log(y)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape)

    inverse_shape = forward_shape  # the same shape both ways


class StickBreakingTransform(_ParameterFreeTransform):
    """R^(K-1) to the K-simplex by stick breaking: bijective, with a log-det-Jacobian (biject_to(simplex))."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _log_offset(x, n):
        # log(K - k) for k = 1..K-1 (K = n + 1): centres the k-th break at the uniform point
        k = _C.call("arange", [], {"start": 0.0, "end": float(n), "step": 1.0, "dtype": x.dtype}, x.device)
        return ops.log(float(n) - k)

    def _call(self, x):
        n = x.shape[-1]
        z = ops.sigmoid(x - self._log_offset(x, n))
        z_cumprod = ops.cumprod(1 - z, dim=-1)
        one = full_like(x.narrow(-1, 0, 1), 1.0)
        return ops.concat([z, one], dim=-1) * ops.concat([one, z_cumprod], dim=-1)

    def _inverse(self, y):
        n = y.shape[-1] - 1
        y_crop = y.narrow(-1, 0, n)
        sf = ops.clamp(1 - ops.cumsum(y_crop, dim=-1), min=float(finfo(y.dtype).tiny))
        return ops.log(y_crop) - ops.log(sf) + self._log_offset(y, n)

    def log_abs_det_jacobian(self, x, y):
        n = x.shape[-1]
        x = x - self._log_offset(x, n)
        # log sigmoid(x) = -softplus(-x)
        return ops.sum(-x - softplus(-x) + ops.log(y.narrow(-1, 0, n)), dims=[-1], keepdim=False)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(_ParameterFreeTransform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strict lower part is kept,
    the diagonal exponentiated (the upper part dropped, so not injective)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return ops.tril(x, diagonal=-1) + ops.diag_embed(ops.exp(ops.diagonal(x, dim1=-2, dim2=-1)))

    def _inverse(self, y):
        return ops.tril(y, diagonal=-1) + ops.diag_embed(ops.log(ops.diagonal(y, dim1=-2, dim2=-1)))


class CorrCholeskyTransform(_ParameterFreeTransform):
    """R^(D(D-1)/2) to Cholesky factors of D x D correlation matrices (LKJ priors): tanh maps each entry
    to (-1, 1), then stick breaking on the squares makes every row a unit vector (Stan's construction)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(ops.clamp(ops.tanh(x), min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z * cumprod(1 - z)) with z = r^2, i.e. r * sqrt(cumprod(1 - z)) shifted right
        z1m_cumprod_sqrt = ops.cumprod(ops.sqrt(1 - r * r), dim=-1)
        n = r.shape[-1]
        one = full_like(r.narrow(-1, 0, 1), 1.0)
        shifted = ops.concat([one, z1m_cumprod_sqrt.narrow(-1, 0, n - 1)], dim=-1)
        return (r + eye_like(r, n)) * shifted

    def _inverse(self, y):
        n = y.shape[-1]
        y_cumsum = 1 - ops.cumsum(y * y, dim=-1)
        one = full_like(y.narrow(-1, 0, 1), 1.0)
        y_cumsum_shifted = ops.concat([one, y_cumsum.narrow(-1, 0, n - 1)], dim=-1)
        t = tril_matrix_to_vec(y, diag=-1) / ops.sqrt(tril_matrix_to_vec(y_cumsum_shifted, diag=-1))
        return ops.log((1 + t) / (1 - t)) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # x and the strict lower part of y have the same size; this is the log-det between those two
        y1m_cumsum = 1 - ops.cumsum(y * y, dim=-1)
        # diagonal -2 reads the cumulative sums already shifted one column right
        stick_breaking_logdet = 0.5 * ops.sum(ops.log(tril_matrix_to_vec(y1m_cumsum, diag=-2)), dims=[-1],
                                              keepdim=False)
        tanh_logdet = -2 * ops.sum(x + softplus(-2 * x) - math.log(2.0), dims=[-1], keepdim=False)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tuple(shape[:-1]) + (D, D)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return tuple(shape[:-2]) + (D * (D - 1) // 2,)


def _check_dim(x, dim):
    if not -x.dim() <= dim < x.dim():
        raise AssertionError(f"dim {dim} is out of range for a tensor with {x.dim()} dims")


def _check_transforms(tseq):
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("expected a sequence of Transforms")


class CatTransform(Transform):
    """tseq[i] applied to the i-th block of lengths[i] slices along `dim` (blocks joined as torch.cat
    does), e.g. CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[10, 10])."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        tseq = list(tseq)
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"CatTransform got {len(self.transforms)} transforms but {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, t):
        _check_dim(t, self.dim)
        if t.shape[self.dim] != self.length:
            raise AssertionError(f"CatTransform expects size {self.length} along dim {self.dim}, "
                                 f"got {t.shape[self.dim]}")

    def _blocks(self, t):
        start = 0
        for length in self.lengths:
            yield t.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        self._check(x)
        return ops.concat([trans(xs) for trans, xs in zip(self.transforms, self._blocks(x))], dim=self.dim)

    def _inverse(self, y):
        self._check(y)
        return ops.concat([trans.inv(ys) for trans, ys in zip(self.transforms, self._blocks(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        logdetjacs = []
        for trans, xs, ys in zip(self.transforms, self._blocks(x), self._blocks(y)):
            logdetjac = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                logdetjac = sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
        # concatenated where `dim` is a batch dim of the result, summed where it is an event dim
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return ops.concat(logdetjacs, dim=dim)
        return functools.reduce(operator.add, logdetjacs)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """tseq[i] applied to the i-th slice along `dim` (slices joined as torch.stack does), e.g.
    StackTransform([ExpTransform(), identity_transform], dim=1)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        tseq = list(tseq)
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _check(self, t):
        _check_dim(t, self.dim)
        if t.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"StackTransform expects size {len(self.transforms)} along dim {self.dim}, "
                                 f"got {t.shape[self.dim]}")

    def _call(self, x):
        self._check(x)
        return ops.stack([trans(xs) for xs, trans in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y)
        return ops.stack([trans.inv(ys) for ys, trans in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        return ops.stack([trans.log_abs_det_jacobian(xs, ys)
                          for xs, ys, trans in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): the support to the unit interval; log |dy/dx| = log_prob(x)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _with_cache(self, cache_size):
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


def _sign(v):
    if isinstance(v, numbers.Real):
        return 1 if v > 0 else -1 if v < 0 else 0
    return ops.sign(v)


def _same(a, b):
    """Equal parameters: numbers by value, tensors element by element (same shape)."""
    if a is b:
        return True
    a_num, b_num = isinstance(a, numbers.Number), isinstance(b, numbers.Number)
    if a_num and b_num:
        return a == b
    if a_num or b_num:
        t, n = (b, a) if a_num else (a, b)
        return all_true(t == n)
    if tuple(a.shape) != tuple(b.shape):
        return False
    return all_true(a == b)
