"""Beta(concentration1, concentration0): a random probability, as torch.distributions.Beta.
With a = concentration1, b = concentration0:

    log p(x) = (a - 1) log x + (b - 1) log(1 - x) - (lgamma(a) + lgamma(b) - lgamma(a + b))
    mean = a/(a + b),  variance = ab/((a + b)²(a + b + 1)),  mode = (a - 1)/(a + b - 2)

It is the Dirichlet of (a, b), seen through its first coordinate, and is built on one,
as in PyTorch: validation, sampling and entropy are the Dirichlet's. No rsample: see Gamma.
"""

from __future__ import annotations

from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.gamma import implicit_rsample_missing
from minigrad.distributions.utils import broadcast_all, is_number


class Beta(Distribution):
    """Beta(concentration1, concentration0): positive numbers or Variables (they broadcast)."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = False

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        if is_number(concentration1) and is_number(concentration0):
            both = minigrad.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = minigrad.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = tuple(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Variable:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Variable:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Variable:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Variable:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Variable:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape: tuple = ()) -> Variable:
        return self._dirichlet.sample(sample_shape)[..., 0]

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        raise implicit_rsample_missing("Beta")

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = minigrad.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Variable:
        return self._dirichlet.entropy()


__all__ = ["Beta"]
