"""Categorical(probs= or logits=): one of K classes, as torch.distributions.Categorical.

    p = probs / sum(probs)   or   p = softmax(logits);  log p(k) = log p_k
    entropy = -Σ_k p_k log p_k

The last dimension of probs (or logits) holds the K classes; the dimensions before it are
the batch shape. Samples are int64 class indices of shape sample_shape + batch_shape.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, as_shape
from minigrad.distributions.utils import (
    broadcast_shapes,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)


def _event_parameter(value: Any, name: str) -> Variable:
    """probs or logits: a Variable with at least one dimension (the classes)."""
    if not isinstance(value, Variable):
        raise TypeError(
            f"`{name}` must be a Variable (torch.Tensor) whose last dimension holds the "
            f"classes; got {type(value).__name__}. Wrap it with minigrad.tensor(...)."
        )
    if value.ndim < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
    return value


class Categorical(Distribution):
    """Class indices 0 .. K-1, drawn with probabilities probs (normalised along the last
    dimension) or softmax(logits)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _event_parameter(probs, "probs")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            logits = _event_parameter(logits, "logits")
            # Normalised: log-probabilities, whose exponentials sum to 1.
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._param = self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1]
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Variable:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Variable:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple:
        return self._param.shape

    @property
    def mean(self) -> Variable:
        """NaN: class indices have no meaningful mean (PyTorch's answer too)."""
        return minigrad.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Variable:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Variable:
        return minigrad.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape: tuple = ()) -> Variable:
        sample_shape = as_shape(sample_shape)
        rows = self.probs.reshape(-1, self._num_events)
        count = int(np.prod(sample_shape, dtype=np.int64))
        # multinomial draws `count` indices per row: (rows, count); samples come first.
        draws = minigrad.multinomial(rows, count, True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        shape = broadcast_shapes(index.shape, self.logits.shape, caller="Categorical.log_prob")
        log_pmf = self.logits.expand(shape)
        index = index.expand(shape[:-1] + (1,))
        return log_pmf.gather(-1, index).squeeze(-1)

    def entropy(self) -> Variable:
        # A class of probability 0 has logit -inf, and 0·(-inf) would be NaN: clamping the
        # logit to the most negative finite number makes its term 0.
        lowest = float(np.finfo(self.logits.dtype).min)
        p_log_p = self.logits.clamp(min=lowest) * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Variable:
        """The classes 0 .. K-1 along dimension 0: shape (K,) + batch_shape."""
        values = minigrad.arange(self._num_events, dtype=minigrad.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values


__all__ = ["Categorical"]
