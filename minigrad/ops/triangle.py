"""Parts of matrices: tril and triu (a triangle kept, the rest zero), and diag.

Keeping some elements and zeroing the others is multiplying by a mask of 0s and 1s, so
the gradient is masked the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric
from minigrad.ops.table import register


class Triangle(Function):
    """y = x on and below (tril) or above (triu) diagonal `k`, 0 elsewhere;  dx = dy masked."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, upper: bool, diagonal: int) -> np.ndarray:
        data = numeric(x, "triu" if upper else "tril")
        if data.ndim < 2:
            raise RuntimeError(
                f"{'triu' if upper else 'tril'}: input must have at least 2 dimensions; got "
                f"shape {data.shape}."
            )
        ctx.upper, ctx.diagonal = upper, diagonal
        return np.triu(data, diagonal) if upper else np.tril(data, diagonal)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Triangle.apply(grad, ctx.upper, ctx.diagonal), None, None


class Diag(Function):
    """1-D x -> matrix with x on diagonal `k`; 2-D x -> its diagonal `k`.  dx: the other way."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, diagonal: int) -> np.ndarray:
        data = numeric(x, "diag")
        if data.ndim not in (1, 2):
            raise RuntimeError(f"diag expects a 1-D or 2-D input; got shape {data.shape}.")
        ctx.diagonal, ctx.input_shape = diagonal, data.shape
        return np.diag(data, diagonal).copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        if len(ctx.input_shape) == 1:
            return Diag.apply(grad, ctx.diagonal), None
        return PlaceDiagonal.apply(grad, ctx.diagonal, ctx.input_shape), None


class PlaceDiagonal(Function):
    """y = zeros(shape) with v on diagonal `k` (the backward of taking a diagonal);
    dv = the diagonal k of dy."""

    @staticmethod
    def forward(ctx: FunctionCtx, v: Variable, diagonal: int, shape: tuple) -> np.ndarray:
        values = numeric(v, "diag")
        ctx.diagonal = diagonal
        result = np.zeros(shape, dtype=values.dtype)
        rows = np.arange(values.shape[0]) + max(-diagonal, 0)
        result[rows, rows + diagonal] = values
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Diag.apply(grad, ctx.diagonal), None, None


def _diagonal(diagonal: Any, op: str) -> int:
    """The diagonal as an int: an int, or a one-element integer Variable (as PyTorch reads
    it); anything else is PyTorch's TypeError."""
    if isinstance(diagonal, Variable) and diagonal.numel() == 1 and diagonal.dtype.kind in "iu":
        return int(diagonal.item())
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, np.integer)):
        kind = "Variable" if isinstance(diagonal, Variable) else type(diagonal).__name__
        raise TypeError(
            f"{op}(): argument 'diagonal' (position 1) must be an int, not {kind}; 0 is the "
            f"main diagonal, 1 the one above it, -1 the one below."
        )
    return int(diagonal)


@register("tril", inplace=True)
def tril(x: Variable, diagonal: int = 0) -> Variable:
    return Triangle.apply(x, False, _diagonal(diagonal, "tril"))


@register("triu", inplace=True)
def triu(x: Variable, diagonal: int = 0) -> Variable:
    return Triangle.apply(x, True, _diagonal(diagonal, "triu"))


@register("diag")
def diag(x: Variable, diagonal: int = 0) -> Variable:
    return Diag.apply(x, _diagonal(diagonal, "diag"))
