"""Bernoulli(probs= or logits=): a coin that shows 1 with probability p, as PyTorch's.

    p = σ(logits),  log p(x) = x·log p + (1 - x)·log(1 - p) = -BCEWithLogits(logits, x)
    entropy = BCEWithLogits(logits, p),  mean = p,  variance = p(1 - p)

Exactly one of probs and logits is given; the other is computed on first use.
"""

from __future__ import annotations

import math
from typing import Any

import minigrad
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import (
    broadcast_all,
    is_number,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from minigrad.nn.functional import binary_cross_entropy_with_logits


class Bernoulli(Distribution):
    """Samples are 0. or 1. (in the parameter's dtype); 1 with probability probs."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = is_number(probs)
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            is_scalar = is_number(logits)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        batch_shape = () if is_scalar else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Variable:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Variable:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    @property
    def mean(self) -> Variable:
        return self.probs

    @property
    def mode(self) -> Variable:
        """1 where p > ½, 0 where p < ½, NaN where p = ½ (no single mode)."""
        ones = (self.probs >= 0.5).to(self.probs.dtype)
        return minigrad.where(self.probs == 0.5, math.nan, ones)

    @property
    def variance(self) -> Variable:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            # u ~ U[0, 1) is below p with probability p.
            uniform = minigrad.rand(shape, dtype=self.probs.dtype)
            return (uniform < self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Variable:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Variable:
        """The values 0 and 1 along dimension 0: shape (2,) + batch_shape (or (2, 1, ...))."""
        values = minigrad.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values


__all__ = ["Bernoulli"]
