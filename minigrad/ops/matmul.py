"""Matrix product with NumPy's matmul rules (1-D vectors, batches that broadcast).

For C = A @ B:  dA = dC @ B^T  and  dB = A^T @ dC. A 1-D operand is treated as a matrix
with a dimension of size 1 added, which is removed again from its gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import array_of
from minigrad.ops.shape import unsqueeze
from minigrad.ops.table import register


class MatMul(Function):
    """C = A @ B;  dA = dC @ B^T, dB = A^T @ dC (batch dimensions summed back by apply)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        left, right = array_of(a, "matmul"), array_of(b, "matmul")
        ctx.save_for_backward(a, b)
        if type(left) is np.ndarray and type(right) is np.ndarray and left.ndim == right.ndim == 2:
            if left.shape[1] == right.shape[0]:
                return np.matmul(left, right)  # the usual case: two NumPy matrices that fit
        if left.ndim == 0 or right.ndim == 0:
            raise OpError(
                f"matmul needs at least 1-D operands; got shapes {left.shape} and {right.shape}. "
                f"Use * to multiply by a scalar."
            )
        if left.shape[-1] != right.shape[-2 if right.ndim > 1 else 0]:
            raise OpError(
                f"matmul: shapes {left.shape} and {right.shape} do not fit: the last dimension "
                f"of the first ({left.shape[-1]}) must equal the "
                f"{'second-to-last' if right.ndim > 1 else 'only'} dimension of the second "
                f"({right.shape[-2 if right.ndim > 1 else 0]})."
            )
        try:
            return np.matmul(left, right)
        except ValueError:
            raise OpError(
                f"matmul: the batch dimensions of shapes {left.shape} and {right.shape} cannot "
                f"be broadcast together."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = ctx.saved_tensors
        # Variables and arrays alike (a list passed in becomes an array): .ndim, .mT, @.
        a = a if isinstance(a, (Variable, np.ndarray)) else np.asarray(a)
        b = b if isinstance(b, (Variable, np.ndarray)) else np.asarray(b)
        # Give 1-D operands (and the gradient) their missing matrix dimension back.
        a_matrix = unsqueeze(a, 0) if a.ndim == 1 else a
        b_matrix = unsqueeze(b, -1) if b.ndim == 1 else b
        if b.ndim == 1:
            grad = unsqueeze(grad, -1)
        if a.ndim == 1:
            grad = unsqueeze(grad, -2)
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = grad @ b_matrix.mT
            grad_a = grad_a.squeeze(-2) if a.ndim == 1 else grad_a
        if ctx.needs_input_grad[1]:
            grad_b = a_matrix.mT @ grad
            grad_b = grad_b.squeeze(-1) if b.ndim == 1 else grad_b
        return grad_a, grad_b


# --------------------------------------------------------------------------- the op table


@register("matmul")
def matmul(x: Any, other: Any) -> Variable:
    return MatMul.apply(x, other)
