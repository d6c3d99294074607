"""oar.distributions: probability distributions with PyTorch's torch.distributions API.

Parameters and samples are oar tensors on the parameters' device; sampling draws from oar's random
stream (oar.manual_seed repeats it); rsample is differentiable w.r.t. the parameters (reparameterization;
implicit gradients for Gamma, Beta, Dirichlet, Chi2 and StudentT). Transforms (oar.distributions.transforms)
and TransformedDistribution build new distributions from old ones; kl_divergence has the closed forms
torch registers for these families, and NotImplementedError for the pairs it lacks."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403  torch.distributions re-exports the transforms too
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "Geometric", "Gumbel",
           "HalfCauchy", "HalfNormal", "Independent", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal",
           "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
           "Wishart", "biject_to",
           "constraints", "kl_divergence", "register_kl", "transform_to", "transforms"]
__all__.extend(transforms.__all__)
