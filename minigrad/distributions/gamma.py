"""Gamma(concentration, rate): sums of `concentration` exponential waits of rate `rate`
(α and β in textbooks), as torch.distributions.Gamma.

    log p(x) = α log β + (α - 1) log x - βx - lgamma(α)   (x >= 0)
    entropy = α - log β + lgamma(α) + (1 - α) ψ(α)    (ψ = digamma)
    mean = α/β,  variance = α/β²,  mode = max((α - 1)/β, 0)

sample() draws with NumPy's gamma sampler (the generator minigrad.manual_seed resets).
There is no rsample: PyTorch differentiates Gamma draws by implicit reparameterisation
(the derivative of the inverse CDF, a numerical approximation of its own), which minigrad
does not implement; it raises rather than give a sample whose gradient would be wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all, is_number
from minigrad.factories import numpy_generator


def implicit_rsample_missing(name: str) -> NotImplementedError:
    """The error rsample raises for Gamma, Beta and Dirichlet: what to do instead."""
    return NotImplementedError(
        f"{name}.rsample() is not implemented in minigrad (has_rsample is False): PyTorch "
        f"differentiates {name} draws by implicit reparameterisation, which minigrad does "
        f"not have. Use sample() (no gradient) and a score-function (REINFORCE) estimator: "
        f"(f(x).detach() * d.log_prob(x)).mean() with x = d.sample((n,)) has the gradient "
        f"of E[f(x)]."
    )


def standard_gamma(concentration: Variable) -> Variable:
    """Draws of Gamma(α, 1), one per element of concentration (no graph), at least the
    smallest positive number of the dtype (tiny α can round a draw to 0, where
    log_prob is -inf), as PyTorch clamps them."""
    alpha = np.asarray(concentration.detach().cpu().numpy(), dtype=np.float64)
    draws = numpy_generator(None).standard_gamma(alpha)
    draws = draws.astype(concentration.dtype)
    draws = np.maximum(draws, np.finfo(draws.dtype).tiny)
    return minigrad.tensor(draws, dtype=concentration.dtype)


class Gamma(Distribution):
    """Gamma(concentration, rate): both positive numbers or Variables (they broadcast)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = is_number(concentration) and is_number(rate)
        batch_shape = () if scalar else self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Variable:
        return self.concentration / self.rate

    @property
    def mode(self) -> Variable:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Variable:
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        raise implicit_rsample_missing("Gamma")

    def log_prob(self, value: Any) -> Variable:
        if not isinstance(value, Variable):  # PyTorch takes a number here too
            value = minigrad.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (
            minigrad.xlogy(self.concentration, self.rate)
            + minigrad.xlogy(self.concentration - 1, value)
            - self.rate * value
            - self.concentration.lgamma()
        )

    def entropy(self) -> Variable:
        alpha = self.concentration
        return alpha - self.rate.log() + alpha.lgamma() + (1.0 - alpha) * alpha.digamma()


__all__ = ["Gamma"]
