"""OneHotCategorical(probs= or logits=): a Categorical whose samples are one-hot vectors.

A draw of class k is the vector e_k of length K (event_shape (K,)), so
log p(e_k) = log p_k, mean = p, variance = p(1 - p), entropy as the Categorical's.
"""

from __future__ import annotations

from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution
from minigrad.nn.functional import one_hot


class OneHotCategorical(Distribution):
    """One-hot vectors of length K (in the parameter's dtype), class k with probability p_k."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = tuple(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Variable:
        return self._categorical._param

    @property
    def probs(self) -> Variable:
        return self._categorical.probs

    @property
    def logits(self) -> Variable:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple:
        return self._categorical.param_shape

    @property
    def mean(self) -> Variable:
        return self._categorical.probs

    @property
    def mode(self) -> Variable:
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Variable:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape: tuple = ()) -> Variable:
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]  # the position of the 1
        return self._categorical.log_prob(indices)

    def entropy(self) -> Variable:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Variable:
        """The K one-hot vectors along dimension 0: shape (K,) + batch_shape + (K,)."""
        n = self.event_shape[0]
        values = minigrad.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + self.batch_shape + (n,))
        return values


__all__ = ["OneHotCategorical"]
