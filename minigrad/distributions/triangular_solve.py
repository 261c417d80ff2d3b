"""X = A⁻¹B for a triangular A, by substitution: what torch.linalg.solve_triangular does
(left=True), as a Function, for MultivariateNormal's Mahalanobis distance.

Shapes: A (..., n, n), B (..., n, k), X (..., n, k); the batch dimensions broadcast.
Gradients (A lower):  dB = A⁻ᵀ dX  (a solve with the upper Aᵀ),  dA = tril(-dB Xᵀ);
for an upper A the same with triu. Only A's triangle is read, so only it gets a gradient.
"""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.operand import numeric


def _substitute(A: np.ndarray, B: np.ndarray, upper: bool) -> np.ndarray:
    """Row by row: x_i = (b_i - Σ_j a_ij x_j) / a_ii over the rows j already solved
    (those above i for a lower A, below for an upper one)."""
    n = A.shape[-1]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:]
    X = np.zeros(shape, dtype=np.result_type(A, B))
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:
        solved = slice(i + 1, n) if upper else slice(0, i)
        known = A[..., i : i + 1, solved] @ X[..., solved, :]  # (..., 1, k)
        X[..., i, :] = (B[..., i, :] - known[..., 0, :]) / A[..., i, i, None]
    return X


class SolveTriangular(Function):
    """X = A⁻¹B, A triangular (upper or lower); see the module's docstring."""

    @staticmethod
    def forward(A: Variable, B: Variable, upper: bool) -> np.ndarray:
        a, b = numeric(A, "solve_triangular"), numeric(B, "solve_triangular")
        if is_on_cuda(a) or is_on_cuda(b):
            raise NotImplementedError(
                "solve_triangular runs on the CPU only; move the Variables there with .cpu()."
            )
        a, b = np.asarray(a), np.asarray(b)
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise RuntimeError(
                f"linalg.solve_triangular: A must be a square matrix or a batch of them, of "
                f"shape (..., n, n); got shape {a.shape}."
            )
        if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
            raise RuntimeError(
                f"linalg.solve_triangular: B must have shape (..., {a.shape[-1]}, k) to fit A "
                f"of shape {a.shape}; got shape {b.shape}."
            )
        return _substitute(a, b, upper)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        A, _, ctx.upper = inputs
        ctx.save_for_backward(A, output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        A, X = ctx.saved_tensors
        grad_b = SolveTriangular.apply(A.mT, grad, not ctx.upper)
        grad_a = None
        if ctx.needs_input_grad[0]:
            outer = -(grad_b @ X.mT)
            grad_a = outer.triu() if ctx.upper else outer.tril()
        return grad_a, grad_b, None


def solve_triangular(A: Variable, B: Variable, *, upper: bool) -> Variable:
    """A⁻¹B for a triangular A (torch.linalg.solve_triangular(A, B, upper=upper))."""
    return SolveTriangular.apply(A, B, bool(upper))


__all__ = ["SolveTriangular", "solve_triangular"]
