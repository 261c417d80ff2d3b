"""Normal(loc, scale): the Gaussian N(μ, σ²), as torch.distributions.Normal.

    log p(x) = -(x - μ)² / (2σ²) - log σ - ½ log 2π        entropy = ½ + ½ log 2π + log σ
    cdf(x) = ½(1 + erf((x - μ)/(σ√2)))                     icdf(p) = μ + σ√2 · erfinv(2p - 1)
    rsample: x = μ + σ·ε with ε ~ N(0, 1), so gradients reach μ and σ.

loc and scale broadcast together; their shape is the batch shape (() for two numbers).
"""

from __future__ import annotations

import math
from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all, is_number


class Normal(Distribution):
    """N(loc, scale²); loc and scale are numbers or Variables (they broadcast)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if is_number(loc) and is_number(scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Normal:
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = tuple(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Variable:
        return self.loc

    @property
    def mode(self) -> Variable:
        return self.loc

    @property
    def stddev(self) -> Variable:
        return self.scale

    @property
    def variance(self) -> Variable:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        eps = minigrad.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        variance = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * variance)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value: Variable) -> Variable:
        """Φ((x - μ)/σ) = ½(1 + erf((x - μ) / (σ√2)))."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / self.scale / math.sqrt(2)).erf())

    def icdf(self, value: Variable) -> Variable:
        """Φ⁻¹: the x with cdf(x) = value, μ + σ√2 · erfinv(2·value - 1) (±inf at 0 and 1)."""
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Variable:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


__all__ = ["Normal"]
