"""oar.distributions: probability distributions with PyTorch's torch.distributions API.

Parameters and samples are oar tensors on the parameters' device; sampling draws from oar's random
stream (oar.manual_seed repeats it); rsample is differentiable w.r.t. the parameters (reparameterization;
implicit gradients for Gamma and Beta)."""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .distribution import Distribution
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Distribution", "Gamma", "Independent", "MultivariateNormal",
           "Normal", "Uniform", "constraints", "kl_divergence", "register_kl"]
