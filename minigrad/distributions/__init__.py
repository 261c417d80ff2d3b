"""minigrad.distributions: probability distributions to sample from, score (log_prob) and
compare (kl_divergence), under torch.distributions' names."""

from typing import Any

from minigrad.core.errors import missing_name
from minigrad.distributions import constraints, kl, utils
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.beta import Beta
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.exponential import Exponential
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.independent import Independent
from minigrad.distributions.kl import kl_divergence, register_kl
from minigrad.distributions.laplace import Laplace
from minigrad.distributions.multivariate_normal import MultivariateNormal
from minigrad.distributions.normal import Normal
from minigrad.distributions.one_hot_categorical import OneHotCategorical
from minigrad.distributions.uniform import Uniform

__all__ = [
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "Gamma",
    "Independent",
    "Laplace",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Uniform",
    "constraints",
    "kl",
    "kl_divergence",
    "register_kl",
    "utils",
]


def __getattr__(name: str) -> Any:
    # A PyTorch name minigrad lacks: say so, with the nearest spelling it has.
    if name.startswith("_"):
        raise AttributeError(f"module 'minigrad.distributions' has no attribute {name!r}")
    raise missing_name("torch.distributions", name, __all__)
