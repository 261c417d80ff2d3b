"""L = cholesky(A): the lower-triangular L with a positive diagonal and A = LLᵀ, for a
symmetric positive-definite A (torch.linalg.cholesky), as a Function.

Shapes: A (..., n, n) -> L (..., n, n). Only A's lower triangle is read, as in PyTorch.
Gradient (A symmetric): with Φ(M) = the lower triangle of M, its diagonal halved,
    S = L⁻ᵀ Φ(Lᵀ dL) L⁻¹,   dA = ½(S + Sᵀ)
(from dA = dL Lᵀ + L dLᵀ solved for dL); the two solves are triangular ones.
"""

from __future__ import annotations

import numpy as np

from minigrad import factories
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.distributions.triangular_solve import solve_triangular
from minigrad.ops.operand import numeric


def _first_failure(matrices: np.ndarray) -> tuple[int, int]:
    """(index of the first matrix with no Cholesky factor, order of its first leading minor
    that is not positive), for the error message."""
    flat = matrices.reshape((-1,) + matrices.shape[-2:])
    for index, matrix in enumerate(flat):
        for order in range(1, matrix.shape[-1] + 1):
            try:
                np.linalg.cholesky(matrix[:order, :order])
            except np.linalg.LinAlgError:
                return index, order
    return 0, matrices.shape[-1]


class Cholesky(Function):
    """L = cholesky(A); see the module's docstring."""

    @staticmethod
    def forward(A: Variable) -> np.ndarray:
        a = numeric(A, "cholesky")
        if is_on_cuda(a):
            raise NotImplementedError(
                "cholesky runs on the CPU only; move the Variable there with .cpu()."
            )
        a = np.asarray(a)
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise RuntimeError(
                f"linalg.cholesky: A must be a square matrix or a batch of them, of shape "
                f"(..., n, n); got shape {a.shape}."
            )
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            index, order = _first_failure(a)
            where = f" (batch element {index})" if a.ndim > 2 else ""
            raise RuntimeError(
                f"linalg.cholesky: The factorization could not be completed because the input "
                f"is not positive-definite (the leading minor of order {order} is not "
                f"positive-definite){where}. A covariance matrix must be symmetric with "
                f"positive eigenvalues; adding a small multiple of the identity often helps."
            ) from None

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (L,) = ctx.saved_tensors
        n = L.shape[-1]
        # Φ keeps the lower triangle and halves the diagonal.
        halve_diagonal = 1 - 0.5 * factories.eye(n, dtype=L.dtype)
        phi = (L.mT @ grad).tril() * halve_diagonal
        # S = L⁻ᵀ Φ L⁻¹: solve Lᵀ Y = Φ, then Lᵀ Sᵀ = Yᵀ.
        left = solve_triangular(L.mT, phi, upper=True)
        S = solve_triangular(L.mT, left.mT, upper=True).mT
        return 0.5 * (S + S.mT)


def cholesky(A: Variable) -> Variable:
    """The lower Cholesky factor of a symmetric positive-definite A (or a batch of them)."""
    return Cholesky.apply(A)


__all__ = ["Cholesky", "cholesky"]
