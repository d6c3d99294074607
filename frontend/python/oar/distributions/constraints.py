"""Constraints on parameters and values (torch.distributions.constraints): `check(value)` gives a bool
tensor of the value's batch shape, true where the constraint holds."""
from .. import _C
from .._C import OarError
from .._ops import ops
from . import utils

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_definite", "positive_semidefinite", "positive_integer", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """A region of values; `event_dim` is how many rightmost dims one event has."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters (Uniform's support): it is not checked by itself."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self._is_discrete, self._event_dim = is_discrete, event_dim
        super().__init__()

    @property
    def is_discrete(self):
        return self._is_discrete

    @property
    def event_dim(self):
        return self._event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """@constraints.dependent_property: a property on the class, a dependent constraint to validation."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A base constraint whose `reinterpreted_batch_ndims` rightmost batch dims become event dims."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent() expects a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"reinterpreted_batch_ndims must be a non-negative int, got {reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        for _ in range(n):
            result = utils.all_along(result, -1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (ops.floor(value.to(_float(value))) == value) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (ops.floor(value.to(_float(value))) == value) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # false only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value >= self.lower_bound

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        nonneg = utils.all_along(value >= 0, -1)
        return nonneg & (ops.abs(ops.sum(value, dims=[-1]) - 1) < 1e-6)


class _OneHot(Constraint):
    """One-hot vectors: 0/1 entries, exactly one 1."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_bool = utils.all_along((value == 0) | (value == 1), -1)
        return is_bool & (ops.sum(value.to(_float(value)), dims=[-1]) == 1)


class _Multinomial(Constraint):
    """Nonnegative integer count vectors summing to at most upper_bound (Multinomial's support)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        x = x.to(_float(x))
        integral = utils.all_along((x >= 0) & (ops.floor(x) == x), -1)
        return integral & (ops.sum(x, dims=[-1]) <= self.upper_bound)

    def __repr__(self):
        return f"Multinomial(upper_bound={self.upper_bound})"


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        ok = value.shape[-2] == value.shape[-1]
        shape = list(value.shape[:-2])
        return _C.call("fill", [], {"shape": shape, "value": 1.0 if ok else 0.0, "dtype": _C.dtype.float32},
                       value.device) == 1


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        n = value.shape[-1]
        upper_zero = ops.logical_or(utils.tril_mask(value, n), value == 0)
        return utils.all_along(utils.all_along(upper_zero, -1), -1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        return _LowerTriangular().check(value) & utils.all_along(utils.diagonal(value) > 0, -1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower triangular, positive diagonal, unit rows."""
    event_dim = 2

    def check(self, value):
        tol = float(utils.finfo(value.dtype).eps) * value.shape[-1] * 10  # torch's fudge factor
        row_norm = ops.sqrt(ops.sum(value.detach() * value.detach(), dims=[-1], keepdim=False))
        unit_rows = utils.all_along(ops.abs(row_norm - 1.0) <= tol, -1)
        return _LowerCholesky().check(value) & unit_rows


class _Symmetric(Constraint):
    event_dim = 2

    def check(self, value):
        close = ops.abs(value - value.transpose(-2, -1)) <= 1e-6 * (1 + ops.abs(value))
        return utils.all_along(utils.all_along(close, -1), -1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        from .. import linalg  # the matrix kernels; only needed once a matrix is checked
        sym = super().check(value)
        try:
            # matrix by matrix (as torch's cholesky_ex(value).info == 0): one failed factorisation does
            # not mark the rest of the batch
            L, info = linalg.cholesky_ex(value.detach())
        except (OarError, ValueError, ArithmeticError, RuntimeError):
            return sym & (sym != sym)
        d = utils.diagonal(L)
        finite_pos = (d > 0) & (d == d) & (d < float("inf"))
        return sym & (info == 0) & utils.all_along(finite_pos, -1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        from .. import linalg
        sym = super().check(value)
        eig = linalg.eigvalsh(value) if hasattr(linalg, "eigvalsh") else linalg.eigh(value)[0]
        return sym & utils.all_along(eig >= 0, -1)


class _Cat(Constraint):
    """cseq[i] applied to the i-th block of `lengths[i]` slices along `dim` (blocks as torch.cat joins them)."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("cat expects a sequence of Constraints")
        self.cseq = list(cseq)
        if lengths is None:
            lengths = [1] * len(self.cseq)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"cat got {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(value, self.dim)
        checks = []
        start = 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start = start + length
        return ops.concat(checks, dim=self.dim)

    def __repr__(self):
        return f"Cat({self.cseq!r}, dim={self.dim}, lengths={self.lengths})"


class _Stack(Constraint):
    """cseq[i] applied to the i-th slice along `dim` (slices as torch.stack joins them)."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("stack expects a sequence of Constraints")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        _check_dim(value, self.dim)
        vs = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return ops.stack([constr.check(v) for v, constr in zip(vs, self.cseq)], dim=self.dim)

    def __repr__(self):
        return f"Stack({self.cseq!r}, dim={self.dim})"


def _check_dim(value, dim):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} is out of range for a value with {value.dim()} dims")


def _float(value):
    from .._C import dtype
    return value.dtype if value.dtype.is_floating_point else dtype.float64


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
positive_semidefinite = _PositiveSemidefinite()
square = _Square()
one_hot = _OneHot()
multinomial = _Multinomial
cat = _Cat
stack = _Stack
