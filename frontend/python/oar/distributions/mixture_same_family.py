"""MixtureSameFamily(Categorical mixture, components) (torch.distributions.MixtureSameFamily): the
component distribution's rightmost batch dim indexes the K components."""
from .. import _C, autograd
from .._ops import ops
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distribtutions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1] if component_distribution.batch_shape else None
        if kc is None or km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = tuple(component_distribution.event_shape)
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        """x with a component dim of size 1 before its event dims."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """Mixture weights (..., K) shaped to broadcast with the components' (batch..., K, event...)."""
        pad = len(self.batch_shape) - len(self.mixture_distribution.batch_shape)
        shape = tuple(x.shape)
        return x.reshape(*(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims))

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return ops.sum(probs * self.component_distribution.mean, dims=[-1 - self._event_ndims], keepdim=False)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = [-1 - self._event_ndims]
        mean_cond_var = ops.sum(probs * self.component_distribution.variance, dims=dim, keepdim=False)
        var_cond_mean = ops.sum(probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2),
                                dims=dim, keepdim=False)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        return ops.sum(cdf_x * self.mixture_distribution.probs, dims=[-1], keepdim=False)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)  # (S, B, K)
        log_mix_prob = ops.log_softmax(self.mixture_distribution.logits, dim=-1)  # (B, K)
        return ops.logsumexp(log_prob_x + log_mix_prob, dims=[-1], keepdim=False)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        with autograd.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mixture = self.mixture_distribution
            if tuple(mixture.batch_shape) != tuple(self.batch_shape):
                mixture = mixture.expand(self.batch_shape)
            mix_sample = mixture.sample(sample_shape)  # (S, B)
            comp_samples = self.component_distribution.sample(sample_shape)  # (S, B, K, E)
            index = mix_sample.reshape(*(tuple(mix_sample.shape) + (1,) * (len(es) + 1)))
            index = index.expand(*(tuple(comp_samples.shape[:gather_dim]) + (1,) + es))
            samples = ops.gather(comp_samples, index.to(_C.dtype.int64), dim=gather_dim)
            return samples.squeeze(gather_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
