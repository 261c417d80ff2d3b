"""Uniform(low, high): every value of [low, high) equally likely, as PyTorch's.

    log p(x) = -log(high - low) inside [low, high), -inf outside
    entropy = log(high - low),  mean = (low + high)/2,  variance = (high - low)²/12
    rsample: x = low + u·(high - low) with u ~ U[0, 1), so gradients reach low and high.
"""

from __future__ import annotations

import math
from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all, is_number


class Uniform(Distribution):
    """U[low, high); low and high are numbers or Variables (they broadcast), low < high."""

    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        batch_shape = () if is_number(low) and is_number(high) else self.low.shape
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Uniform:
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = tuple(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Variable:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Variable:
        """NaN: every point of the interval is as likely as any other."""
        return math.nan * self.high

    @property
    def stddev(self) -> Variable:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Variable:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        uniform = minigrad.rand(shape, dtype=self.low.dtype)
        return self.low + uniform * (self.high - self.low)

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        # 0 inside, -inf outside, written with where rather than log(0): the same value
        # and gradient, without NumPy's divide-by-zero warning.
        outside_penalty = minigrad.where(inside, 0.0, -math.inf).to(self.low.dtype)
        return outside_penalty - (self.high - self.low).log()

    def cdf(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: Variable) -> Variable:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Variable:
        return (self.high - self.low).log()


__all__ = ["Uniform"]
