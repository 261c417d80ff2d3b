"""Constraints: the set a parameter or a sample must lie in, as torch.distributions.constraints.

A constraint's `check(value)` returns a bool Variable, True where the value is valid. Its
shape is value's shape less the `event_dim` rightmost dimensions: a simplex is checked one
whole vector at a time (event_dim 1), a positive scale one element at a time (event_dim 0).
Distributions list theirs in `arg_constraints` (parameters) and `support` (samples), and
check them when `validate_args` is on.

    real, positive, nonnegative, unit_interval        elementwise sets of reals
    greater_than(b), greater_than_eq(b), less_than(b), interval(a, b), half_open_interval(a, b)
    boolean, integer_interval(a, b), nonnegative_integer, positive_integer
    real_vector, simplex, one_hot                     vectors (event_dim 1)
    lower_triangular, lower_cholesky, square, symmetric,
    positive_semidefinite, positive_definite          matrices (event_dim 2)
    independent(c, n)                                 c checked over n more dimensions at once
    dependent, dependent_property                     a set that depends on other parameters
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad
from minigrad.core.variable import Variable


class Constraint:
    """A region a value must lie in. `is_discrete`: a countable set; `event_dim`: how many
    rightmost dimensions make up one checked event."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Variable) -> Variable:
        """A bool Variable of shape value.shape[:ndim - event_dim]: True where valid."""
        raise NotImplementedError(f"{type(self).__name__} does not implement check(value).")

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


# --------------------------------------------------------------------------- dependent


class _Dependent(Constraint):
    """A set that depends on other parameters (Uniform's support [low, high]): it cannot be
    checked on its own, so validation skips it."""

    def __init__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> _Dependent:
        """dependent(is_discrete=True, event_dim=1): the same, with what is known given."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Variable) -> Variable:
        raise ValueError(
            "Cannot determine validity of dependent constraint: it depends on other "
            "parameters. Check the distribution's support instead (dist.support.check(x))."
        )


def is_dependent(constraint: Any) -> bool:
    """Whether `constraint` is a dependent one (skipped by validation)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on an instance (Uniform(0, 2).support is interval(0, 2)) that reads as a
    dependent constraint on the class (Uniform.support)."""

    def __init__(
        self,
        fn: Callable[[Any], Any] | None = None,
        *,
        is_discrete: Any = NotImplemented,
        event_dim: Any = NotImplemented,
    ) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Callable[[Any], Any]) -> _DependentProperty:  # type: ignore[override]
        """@dependent_property(is_discrete=True, event_dim=0) above a method."""
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


# --------------------------------------------------------------------------- wrappers


class _IndependentConstraint(Constraint):
    """base_constraint checked over `reinterpreted_batch_ndims` more dimensions: an event is
    valid only where every one of its entries is."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(
                f"independent(): base_constraint must be a Constraint, such as "
                f"constraints.real; got {type(base_constraint).__name__}."
            )
        ndims = reinterpreted_batch_ndims
        if isinstance(ndims, bool) or not isinstance(ndims, int) or ndims < 0:
            raise ValueError(
                f"independent(): reinterpreted_batch_ndims must be an int >= 0; got {ndims!r}."
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Variable) -> Variable:
        result = self.base_constraint.check(value)
        ndims = self.reinterpreted_batch_ndims
        if result.ndim < ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        if ndims == 0:
            return result
        return result.reshape(result.shape[: result.ndim - ndims] + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


# --------------------------------------------------------------------------- discrete


class _Boolean(Constraint):
    """The two values {0, 1}."""

    is_discrete = True

    def check(self, value: Variable) -> Variable:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of 0s and 1s with exactly one 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value: Variable) -> Variable:
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        return is_boolean & value.sum(-1).eq(1)


def _is_integer(value: Variable) -> Variable:
    return value == value.floor()


class _IntegerInterval(Constraint):
    """The integers lower_bound, ..., upper_bound."""

    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Variable) -> Variable:
        inside = (value >= self.lower_bound) & (value <= self.upper_bound)
        return _is_integer(value) & inside

    def __repr__(self) -> str:
        return (
            f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"
        )


class _IntegerGreaterThan(Constraint):
    """The integers lower_bound, lower_bound + 1, ..."""

    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Variable) -> Variable:
        return _is_integer(value) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


# --------------------------------------------------------------------------- real sets


class _Real(Constraint):
    """The extended real line [-inf, inf]: anything but NaN."""

    def check(self, value: Variable) -> Variable:
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    """(lower_bound, inf]."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Variable) -> Variable:
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    """[lower_bound, inf)."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Variable) -> Variable:
        return value >= self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    """[-inf, upper_bound)."""

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Variable) -> Variable:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """[lower_bound, upper_bound], both ends included."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Variable) -> Variable:
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(Constraint):
    """[lower_bound, upper_bound)."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Variable) -> Variable:
        return (value >= self.lower_bound) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return (
            f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"
        )


class _Simplex(Constraint):
    """Vectors of probabilities: x >= 0 and sum(x) = 1 (to within 1e-6, as PyTorch)."""

    event_dim = 1

    def check(self, value: Variable) -> Variable:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


# --------------------------------------------------------------------------- matrices


def _flat_matrices(value: Variable) -> Variable:
    """A bool (..., n, m) as (..., n·m), to ask `all` over each matrix."""
    return value.reshape(value.shape[:-2] + (-1,))


class _LowerTriangular(Constraint):
    """Square matrices with zeros above the diagonal."""

    event_dim = 2

    def check(self, value: Variable) -> Variable:
        return _flat_matrices(value.tril() == value).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal: the Cholesky factors."""

    event_dim = 2

    def check(self, value: Variable) -> Variable:
        lower = _flat_matrices(value.tril() == value).all(-1)
        diagonal = minigrad.einsum("...ii->...i", value)
        return lower & (diagonal > 0).all(-1)


class _Square(Constraint):
    """Matrices with as many rows as columns."""

    event_dim = 2

    def check(self, value: Variable) -> Variable:
        is_square = value.shape[-2] == value.shape[-1]
        return minigrad.full(value.shape[:-2], is_square, dtype=minigrad.bool)


class _Symmetric(_Square):
    """Square matrices equal to their transpose (to within atol 1e-6, as PyTorch)."""

    def check(self, value: Variable) -> Variable:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return minigrad.isclose(value, value.mT, atol=1e-6).all(-1).all(-1)


def _each_matrix(value: Variable, test: Callable[[np.ndarray], bool]) -> Variable:
    """test(matrix) for each matrix of a (..., n, n) Variable, as a bool Variable (...)."""
    matrices = np.asarray(value.detach().cpu().numpy())
    flat = matrices.reshape((-1,) + matrices.shape[-2:])
    answers = np.array([test(matrix) for matrix in flat], dtype=bool)
    return minigrad.tensor(answers.reshape(matrices.shape[:-2]))


def _has_cholesky(matrix: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are all >= 0."""

    def check(self, value: Variable) -> Variable:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return _each_matrix(value, lambda matrix: bool(np.all(np.linalg.eigvalsh(matrix) >= 0)))


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are all > 0: those with a Cholesky factor."""

    def check(self, value: Variable) -> Variable:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return _each_matrix(value, _has_cholesky)


# PyTorch's public names: instances for the fixed sets, classes for those with bounds.
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()

__all__ = [
    "Constraint",
    "boolean",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "symmetric",
    "unit_interval",
]
