"""Dirichlet(concentration): random probability vectors (points of the simplex), as
torch.distributions.Dirichlet. With α = concentration (..., K) and α₀ = Σ_k α_k:

    log p(x) = Σ_k (α_k - 1) log x_k + lgamma(α₀) - Σ_k lgamma(α_k)
    entropy = Σ_k lgamma(α_k) - lgamma(α₀) - (K - α₀) ψ(α₀) - Σ_k (α_k - 1) ψ(α_k)
    mean = α/α₀,  variance = α(α₀ - α)/(α₀²(α₀ + 1)),  mode = (α - 1)/(α₀ - K)

The event is the last dimension (event_shape (K,)). sample() normalises K independent
Gamma(α_k, 1) draws. No rsample: see Gamma (PyTorch's implicit reparameterisation).
"""

from __future__ import annotations

from typing import Any

import minigrad
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.gamma import implicit_rsample_missing, standard_gamma
from minigrad.nn.functional import one_hot


class Dirichlet(Distribution):
    """Dir(concentration): a Variable of positive numbers, at least one-dimensional."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration: Variable, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Variable) or concentration.ndim < 1:
            got = (
                f"a Variable of shape {tuple(concentration.shape)}"
                if isinstance(concentration, Variable)
                else f"{type(concentration).__name__} {concentration!r}"
            )
            raise ValueError(
                f"`concentration` parameter must be at least one-dimensional; got {got}. "
                f"Pass a Variable whose last dimension holds the K concentrations, such as "
                f"minigrad.tensor([1.0, 2.0, 3.0])."
            )
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Variable:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Variable:
        """(α - 1)⁺ normalised; where every α_k < 1 the density peaks at the corners, and
        (as PyTorch) the first corner, a one-hot vector, is returned."""
        above_one = (self.concentration - 1).clamp(min=0.0)
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        total = above_one.sum(-1, True)
        # where the total is 0 that row is replaced below; 1 avoids a 0/0 warning.
        safe_total = minigrad.where(all_below_one, 1.0, total)
        corner = one_hot(above_one.argmax(-1), self.concentration.shape[-1])
        return minigrad.where(all_below_one, corner.to(above_one.dtype), above_one / safe_total)

    @property
    def variance(self) -> Variable:
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def sample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            gammas = standard_gamma(self.concentration.expand(shape))
            return gammas / gammas.sum(-1, True)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        raise implicit_rsample_missing("Dirichlet")

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        return (
            minigrad.xlogy(self.concentration - 1.0, value).sum(-1)
            + self.concentration.sum(-1).lgamma()
            - self.concentration.lgamma().sum(-1)
        )

    def entropy(self) -> Variable:
        k = self.concentration.shape[-1]
        total = self.concentration.sum(-1)
        return (
            self.concentration.lgamma().sum(-1)
            - total.lgamma()
            - (k - total) * total.digamma()
            - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1)
        )


__all__ = ["Dirichlet"]
