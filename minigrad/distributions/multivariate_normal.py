"""MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=): the
Gaussian N(μ, Σ) in n dimensions, as torch.distributions.MultivariateNormal.

Everything is computed from the lower Cholesky factor L of Σ = LLᵀ:
    log p(x) = -½ (n log 2π + |L⁻¹(x - μ)|²) - Σ_i log L_ii
    entropy  = ½ n (1 + log 2π) + Σ_i log L_ii,   variance = Σ_ii = Σ_j L_ij²
    rsample: x = μ + Lε with ε ~ N(0, I), so gradients reach μ and L (and Σ through L).
Shapes: loc (..., n); the matrices (..., n, n); batch_shape is their broadcast batch.
"""

from __future__ import annotations

import math
from typing import Any

import minigrad
from minigrad.core.variable import Variable
from minigrad.distributions import constraints
from minigrad.distributions.cholesky import cholesky
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.triangular_solve import solve_triangular
from minigrad.distributions.utils import broadcast_shapes, lazy_property


def batch_mv(matrices: Variable, vectors: Variable) -> Variable:
    """M v for each matrix and vector: (..., n, n) and (..., n) -> (..., n), batches broadcast."""
    return (matrices @ vectors.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(L: Variable, x: Variable) -> Variable:
    """xᵀ(LLᵀ)⁻¹x = |L⁻¹x|² for each vector of x (..., n), L (..., n, n) lower; -> (...)."""
    solved = solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


def diagonal(matrices: Variable) -> Variable:
    """The diagonals of (..., n, n) matrices, (..., n)."""
    return minigrad.einsum("...ii->...i", matrices)


def precision_to_scale_tril(P: Variable) -> Variable:
    """The lower L with LLᵀ = P⁻¹, without inverting P.

    Reversing rows and columns (the permutation J) turns the Cholesky factor of JPJ into
    an upper U with P = UUᵀ once reversed back; then P⁻¹ = U⁻ᵀU⁻¹, and L = U⁻ᵀ is lower.
    """
    flipped_factor = cholesky(P.flip((-2, -1)))
    inverse_of_L = flipped_factor.flip((-2, -1)).mT  # Uᵀ: lower, and L = (Uᵀ)⁻¹
    identity = minigrad.eye(P.shape[-1], dtype=P.dtype)
    return solve_triangular(inverse_of_L, identity, upper=False)


def _matrix_parameter(value: Any, name: str) -> Variable:
    if not isinstance(value, Variable):
        raise TypeError(
            f"{name} must be a Variable (torch.Tensor) of shape (..., n, n); got "
            f"{type(value).__name__}. Wrap it with minigrad.tensor(...)."
        )
    if value.ndim < 2:
        raise ValueError(
            f"{name} must be at least two-dimensional, with optional leading batch dimensions"
        )
    return value


class MultivariateNormal(Distribution):
    """N(loc, Σ), Σ given as exactly one of covariance_matrix, precision_matrix (Σ⁻¹) or
    scale_tril (L, lower-triangular with a positive diagonal, Σ = LLᵀ)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Variable,
        covariance_matrix: Variable | None = None,
        precision_matrix: Variable | None = None,
        scale_tril: Variable | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(loc, Variable):
            raise TypeError(
                f"loc must be a Variable (torch.Tensor) of shape (..., n); got "
                f"{type(loc).__name__}. Wrap it with minigrad.tensor(...)."
            )
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {
            "covariance_matrix": covariance_matrix,
            "precision_matrix": precision_matrix,
            "scale_tril": scale_tril,
        }
        given = {name: value for name, value in given.items() if value is not None}
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                f"specified; got {len(given)}" + (f" ({', '.join(given)})." if given else ".")
            )
        ((name, matrix),) = given.items()
        matrix = _matrix_parameter(matrix, name)
        batch_shape = broadcast_shapes(
            matrix.shape[:-2], loc.shape[:-1], caller="MultivariateNormal"
        )
        # The given matrix, seen with the full batch shape (an expand, not a copy).
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        # After validation, so that an invalid matrix gets the ValueError, not cholesky's.
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def expand(self, batch_shape: tuple, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        matrix_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Variable:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Variable:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Variable:
        # Σ⁻¹ = L⁻ᵀL⁻¹, with L⁻¹ from one triangular solve.
        L = self._unbroadcasted_scale_tril
        identity = minigrad.eye(L.shape[-1], dtype=L.dtype)
        inverse = solve_triangular(L, identity, upper=False)
        return (inverse.mT @ inverse).expand(self._matrix_shape())

    @property
    def mean(self) -> Variable:
        return self.loc

    @property
    def mode(self) -> Variable:
        return self.loc

    @property
    def variance(self) -> Variable:
        variance = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return variance.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: tuple = ()) -> Variable:
        shape = self._extended_shape(sample_shape)
        eps = minigrad.randn(shape, dtype=self.loc.dtype)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Variable:
        """½ log det Σ = Σ_i log L_ii."""
        return diagonal(self._unbroadcasted_scale_tril).log().sum(-1)

    def log_prob(self, value: Variable) -> Variable:
        if self._validate_args:
            self._validate_sample(value)
        difference = value - self.loc
        squared = batch_mahalanobis(self._unbroadcasted_scale_tril, difference)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + squared) - self._half_log_det()

    def entropy(self) -> Variable:
        n = self._event_shape[0]
        entropy = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(self._batch_shape)


__all__ = ["MultivariateNormal"]
