"""Matrix product with NumPy's matmul rules (1-D vectors, batches that broadcast).

For C = A @ B:  dA = dC @ B^T  and  dB = A^T @ dC. A 1-D operand is treated as a matrix
with a dimension of size 1 added, which is removed again from its gradient.

A batch of matrices times one matrix, (..., M, K) @ (K, N) (a Linear on a sequence), is
one (…·M, K) @ (K, N) product: NumPy would otherwise run one small product per matrix of
the batch. For the same reason dB is then A's rows, all batches together, times dC's:
one product, no batch of products to sum.
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


def _folded(a: Any, b: Any) -> Any:
    """a @ b for a (..., M, K) batch and a (K, N) matrix, as one product of a's rows (a
    copy when a is not contiguous, as NumPy's own batched loop would read it)."""
    rows = a.reshape(-1, a.shape[-1]) @ b
    return rows.reshape(*a.shape[:-1], b.shape[-1])


def _product(a: Any, b: Any) -> Any:
    """a @ b, folded when a is a batch and b one matrix; on arrays or on Variables."""
    if a.ndim > 2 and b.ndim == 2:
        return _folded(a, b)
    return a @ b


_BOOL = np.dtype(np.bool_)


def _require_dtypes(left: Any, right: Any) -> None:
    """Raise as PyTorch's products do: one dtype for both operands, and no bools. Two float
    widths may meet (a float32 input into float64 weights computes in float64:
    site/pytorch.md, "Differences to know")."""
    if left.dtype != right.dtype and not (left.dtype.kind == right.dtype.kind == "f"):
        raise RuntimeError(
            f"matmul: expected both operands to have the same dtype, but got {left.dtype} and "
            f"{right.dtype}. Convert one first, e.g. other.to(x.dtype)."
        )
    if left.dtype == np.bool_ and (left.shape[-1] != 0 or left.ndim == right.ndim == 1):
        # An empty sum (a dimension of 0 to contract) calls no kernel in PyTorch.
        raise NotImplementedError(
            "matmul is not implemented for bool Variables; convert first, e.g. x.long() or "
            "x.float()."
        )


class MatMul(Function):
    """C = A @ B;  dA = dC @ B^T, dB = A^T @ dC (batch dimensions summed back by apply)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        left, right = array_of(a, "matmul"), array_of(b, "matmul")
        ctx.save_for_backward(a, b)
        if type(left) is np.ndarray and type(right) is np.ndarray and left.ndim == right.ndim == 2:
            fits = left.shape[1] == right.shape[0]
            if fits and left.dtype is right.dtype and left.dtype is not _BOOL:
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
        if left.dtype != right.dtype or left.dtype == np.bool_:
            _require_dtypes(left, right)
        if left.ndim > 2 and right.ndim == 2 and type(left) is np.ndarray:
            return _folded(left, right)
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
            grad_a = _product(grad, b_matrix.mT)
            grad_a = grad_a.squeeze(-2) if a.ndim == 1 else grad_a
        if ctx.needs_input_grad[1]:
            if a_matrix.ndim > 2 and b.ndim == 2:  # Σ over the batch of Aᵀ dC, as one product
                size = a_matrix.shape[-1]
                grad_b = a_matrix.reshape(-1, size).mT @ grad.reshape(-1, grad.shape[-1])
            else:
                grad_b = a_matrix.mT @ grad
            grad_b = grad_b.squeeze(-1) if b.ndim == 1 else grad_b
        return grad_a, grad_b


# --------------------------------------------------------------------------- the op table


@register("matmul")
def matmul(x: Any, other: Any) -> Variable:
    for name, value in (("input", x), ("other", other)):
        if isinstance(value, (list, tuple)):
            # PyTorch's matmul takes Tensors only (NumPy would read a list as numbers).
            raise TypeError(
                f"matmul(): argument '{name}' must be a Variable, but got "
                f"{type(value).__name__} {value!r:.30}. Make one with minigrad.tensor(...)."
            )
    return MatMul.apply(x, other)
