"""biject_to(constraint) and transform_to(constraint): transforms from unconstrained reals onto a constraint's
region (torch.distributions.constraint_registry), for optimizing constrained parameters:
    raw = oar.zeros(3, requires_grad=True); scale = transform_to(constraints.positive)(raw)
biject_to gives bijections (with log-det-Jacobians, for HMC-style reparameterization); transform_to may give
cheaper maps that are not bijective (softmax onto the simplex)."""
import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint types (or instances) -> factories constraint -> Transform."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        if factory is None:  # used as a decorator
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        for cls in type(constraint).__mro__:
            factory = self._registry.get(cls)
            if factory is not None:
                return factory(constraint)
        raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return transforms.identity_transform


def _independent_biject(constraint):
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _independent_transform(constraint):
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


def _greater_than(constraint):
    if isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0:
        return transforms.ExpTransform()
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, numbers.Number) and isinstance(upper, numbers.Number) and lower == 0 and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lower, upper - lower)])


for registry, independent in ((biject_to, _independent_biject), (transform_to, _independent_transform)):
    registry.register(constraints.real, _real)
    registry.register(constraints._IndependentConstraint, independent)
    registry.register(constraints.greater_than, _greater_than)
    registry.register(constraints.greater_than_eq, _greater_than)
    registry.register(constraints.less_than, _less_than)
    registry.register(constraints.unit_interval, _interval)
    registry.register(constraints.interval, _interval)
    registry.register(constraints.half_open_interval, _interval)

biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
# LowerCholeskyTransform drops the upper triangle, so it is no bijection: transform_to only, as torch
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
biject_to.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
transform_to.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())


def _cat(registry):
    return lambda c: transforms.CatTransform([registry(part) for part in c.cseq], c.dim, c.lengths)


def _stack(registry):
    return lambda c: transforms.StackTransform([registry(part) for part in c.cseq], c.dim)


for registry in (biject_to, transform_to):
    registry.register(constraints.cat, _cat(registry))
    registry.register(constraints.stack, _stack(registry))
