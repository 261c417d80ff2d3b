"""Independent(base, n): the last n batch dimensions of `base` read as event dimensions.

    log p(x) = Σ over those n dimensions of base.log_prob(x)      (entropy likewise)

Independent(Normal(loc, scale), 1) with loc of shape (3,) is one 3-dimensional Gaussian
with a diagonal covariance: batch_shape (), event_shape (3,), log_prob one number per draw.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import sum_rightmost


class Independent(Distribution):
    """base_distribution with reinterpreted_batch_ndims of its batch dimensions as events."""

    arg_constraints: dict = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(base_distribution, Distribution):
            raise TypeError(
                f"Independent expects a Distribution to wrap, such as Normal(loc, scale); got "
                f"{type(base_distribution).__name__}."
            )
        ndims = reinterpreted_batch_ndims
        if isinstance(ndims, bool) or not isinstance(ndims, int) or ndims < 0:
            raise TypeError(
                f"reinterpreted_batch_ndims must be an int >= 0 (how many batch dimensions "
                f"become event dimensions); got {ndims!r}."
            )
        if ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {ndims} vs {len(base_distribution.batch_shape)}"
            )
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = ndims + len(base_distribution.event_shape)
        batch_shape = shape[: len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim :]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tuple(batch_shape)
        reinterpreted = self.event_shape[: self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(batch_shape + reinterpreted)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        super(Independent, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Variable:
        return self.base_dist.mean

    @property
    def mode(self) -> Variable:
        return self.base_dist.mode

    @property
    def variance(self) -> Variable:
        return self.base_dist.variance

    def sample(self, sample_shape: tuple = ()) -> Variable:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Variable) -> Variable:
        log_prob = self.base_dist.log_prob(value)
        return sum_rightmost(log_prob, self.reinterpreted_batch_ndims)

    def entropy(self) -> Variable:
        entropy = self.base_dist.entropy()
        return sum_rightmost(entropy, self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Variable:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


__all__ = ["Independent"]
