"""Distribution: the base class of every probability distribution, as PyTorch's.

Shapes: a sample has shape sample_shape + batch_shape + event_shape. batch_shape indexes
independent distributions with different parameters (Normal(loc of shape (3,), ...) is 3
normals); event_shape is the shape of one draw (MultivariateNormal of dimension n: (n,)).
log_prob(x) and entropy() have shape sample_shape + batch_shape: one number per event.

Validation (validate_args, on by default as in PyTorch, off under `python -O`): parameters
are checked against `arg_constraints` when the distribution is made, and values given to
log_prob against `support`; a failure is a ValueError naming the parameter (or value) and
the constraint. `Distribution.set_default_validate_args(False)` turns it off everywhere.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.utils import lazy_property


def as_shape(shape: Any, name: str = "sample_shape") -> tuple[int, ...]:
    """A shape given as a tuple, list or torch.Size-like of ints, as a tuple."""
    if isinstance(shape, Variable) or not isinstance(shape, (tuple, list)):
        raise TypeError(
            f"{name} must be a tuple of ints, such as (100,) or (); got "
            f"{type(shape).__name__} {shape!r}. For n samples write sample((n,))."
        )
    for size in shape:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise TypeError(f"{name} must hold non-negative ints; got {tuple(shape)!r}.")
    return tuple(int(size) for size in shape)


def _shown(value: Any) -> str:
    """A parameter as PyTorch's repr of a distribution shows it: one value, or its shape."""
    if isinstance(value, Variable) and value.numel() != 1:
        return str(value.shape)
    return str(value)


class Distribution:
    """Abstract base: subclasses set arg_constraints, support, and the methods they have.

    Args: batch_shape, event_shape (tuples), validate_args (None: the class default).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on (True) or off (False) for every distribution made after."""
        if not isinstance(value, (bool, int, np.bool_, np.integer)) or value not in (0, 1):
            raise ValueError(
                f"set_default_validate_args expects True or False; got {value!r}."
            )
        Distribution._validate_args = bool(value)

    def __init__(
        self,
        batch_shape: tuple = (),
        event_shape: tuple = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self) -> None:
        """Each parameter in arg_constraints checked; the first invalid one raises."""
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{type(self)} does not define `arg_constraints`. Please set "
                f"`arg_constraints = {{}}` or initialize the distribution with "
                f"`validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # it cannot be checked on its own
            lazy = isinstance(getattr(type(self), param, None), lazy_property)
            if param not in self.__dict__ and lazy:
                continue  # not given: computed from a parameter that is checked
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}\n"
                    f"Pass values that satisfy it, or validate_args=False to skip the check."
                )

    def expand(self, batch_shape: tuple, _instance: Any = None) -> Distribution:
        """A distribution whose parameters are expanded to batch_shape (no copy)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    @property
    def batch_shape(self) -> tuple:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the Constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        """The Constraint every sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Variable:
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self) -> Variable:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Variable:
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self) -> Variable:
        """sqrt(variance)."""
        return self.variance.sqrt()

    def sample(self, sample_shape: tuple = ()) -> Variable:
        """Draws of shape sample_shape + batch_shape + event_shape, with no graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        """Reparameterised draws: a differentiable function of the parameters and noise."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sample (has_rsample is False); "
            f"use sample() and a score-function estimator (log_prob) instead."
        )

    def sample_n(self, n: int) -> Variable:
        """n draws; deprecated in PyTorch for sample((n,))."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample((n,))

    def log_prob(self, value: Variable) -> Variable:
        """log p(value), one number per event."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Variable) -> Variable:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Variable) -> Variable:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Variable:
        raise NotImplementedError(
            f"{type(self).__name__} does not implement enumerate_support"
        )

    def entropy(self) -> Variable:
        """-E[log p(x)], of shape batch_shape."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Variable:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        """sample_shape + batch_shape + event_shape."""
        return as_shape(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value: Any) -> None:
        """Raise ValueError unless value's shape fits the event and batch shapes and every
        event lies in the support."""
        if not isinstance(value, Variable):
            raise ValueError(
                f"The value argument to log_prob must be a Tensor (a minigrad Variable); got "
                f"{type(value).__name__}. Wrap it with minigrad.tensor(...)."
            )
        shape = tuple(value.shape)
        event_start = len(shape) - len(self._event_shape)
        if shape[event_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {shape} vs "
                f"{self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for actual_size, expected_size in zip(reversed(shape), reversed(expected)):
            if actual_size != 1 and expected_size != 1 and actual_size != expected_size:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {shape} vs "
                    f"{expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self)} does not define `support` to enable sample validation. "
                f"Please initialize the distribution with `validate_args=False` to turn off "
                f"validation.",
                stacklevel=3,
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}\n"
                f"Pass values in the support, or validate_args=False to skip the check."
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        """The new, empty instance that expand fills (a subclass with its own __init__ must
        write its own expand)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [name for name in self.arg_constraints if name in self.__dict__]
        shown = ", ".join(f"{name}: {_shown(self.__dict__[name])}" for name in names)
        return f"{type(self).__name__}({shown})"


__all__ = ["Distribution"]
