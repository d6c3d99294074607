"""ExponentialFamily (torch.distributions.ExponentialFamily): densities
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)). Subclasses give `_natural_params` (theta),
`_log_normalizer(*theta)` (F) and `_mean_carrier_measure` (E[k(x)]); from these the entropy and the KL
divergence between two members of one family follow as Bregman divergences of F, through autograd."""
from .. import autograd
from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)], differentiable in the parameters."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_(True) for p in self._natural_params]
        with autograd.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for theta, g in zip(nparams, gradients):
            result = result - sum_rightmost(theta * g, len(self.event_shape))
        return result
