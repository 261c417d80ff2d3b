"""Laplace(loc, scale): the double exponential, a peak at loc with exponential tails, as
torch.distributions.Laplace.

    log p(x) = -log 2b - |x - μ|/b        cdf = ½ - ½ sign(x - μ)(e^(-|x - μ|/b) - 1)
    icdf(p) = μ - b sign(p - ½) log(1 - 2|p - ½|)
    entropy = 1 + log 2b,  mean = mode = μ,  variance = 2b²
    rsample: x = μ - b sign(u) log(1 - |u|), u ~ U(-1, 1), so gradients reach μ and b.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all, is_number


class Laplace(Distribution):
    """Laplace(loc, scale); loc and scale are numbers or Variables (they broadcast)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = () if is_number(loc) and is_number(scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Laplace:
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = tuple(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Variable:
        return self.loc

    @property
    def mode(self) -> Variable:
        return self.loc

    @property
    def variance(self) -> Variable:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Variable:
        return 2**0.5 * self.scale

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        eps = float(np.finfo(self.loc.dtype).eps)
        # u in [eps - 1, 1), as PyTorch draws it: |u| < 1 keeps log(1 - |u|) finite.
        uniform = minigrad.rand(shape, dtype=self.loc.dtype) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * uniform.sign() * (-uniform.abs()).log1p()

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        shift = value - self.loc
        return 0.5 - 0.5 * shift.sign() * (-shift.abs() / self.scale).expm1()

    def icdf(self, value: Variable) -> Variable:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Variable:
        return 1 + (2 * self.scale).log()


__all__ = ["Laplace"]
