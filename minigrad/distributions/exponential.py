"""Exponential(rate): the waiting time of a process with `rate` events per unit of time,
as torch.distributions.Exponential.

    log p(x) = log λ - λx  (x >= 0)       cdf = 1 - e^(-λx)       icdf(p) = -log(1 - p)/λ
    entropy = 1 - log λ,  mean = 1/λ,  variance = 1/λ²,  mode = 0
    rsample: x = E/λ with E = -log(1 - u), u ~ U[0, 1), so gradients reach λ.
"""

from __future__ import annotations

from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all, is_number


class Exponential(Distribution):
    """Exp(rate); rate is a positive number or Variable (its shape is the batch shape)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if is_number(rate) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Exponential:
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = tuple(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Variable:
        return 1 / self.rate

    @property
    def mode(self) -> Variable:
        return minigrad.zeros_like(self.rate)

    @property
    def stddev(self) -> Variable:
        return 1 / self.rate

    @property
    def variance(self) -> Variable:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        uniform = minigrad.rand(shape, dtype=self.rate.dtype)
        standard = -(-uniform).log1p()  # u < 1, so 1 - u > 0 and E is finite
        return standard / self.rate

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Variable) -> Variable:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Variable:
        return 1.0 - self.rate.log()


__all__ = ["Exponential"]
