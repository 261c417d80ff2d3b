"""Arithmetic with NumPy broadcasting: + - * / ** and unary minus.

Each backward returns the gradient at the output's (broadcast) shape; apply sums it back
to each input's shape, so these formulas stay the textbook ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.autodiff.function import Function, FunctionCtx
from minigrad.ops.operand import numeric, shape_of
from minigrad.variable import Variable


def _broadcast(op: str, compute: Any, a: Any, b: Any) -> Any:
    try:
        return compute(numeric(a, op), numeric(b, op))
    except ValueError as error:
        if "broadcast" not in str(error):
            raise ValueError(f"{op} of shapes {shape_of(a)} and {shape_of(b)}: {error}") from None
        raise ValueError(
            f"{op}: shapes {shape_of(a)} and {shape_of(b)} cannot be broadcast together; "
            f"each dimension must match or be 1 (counting from the right)."
        ) from None


class Add(Function):
    """z = a + b;  dz/da = 1, dz/db = 1."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        return _broadcast("add", np.add, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        needs_a, needs_b = ctx.needs_input_grad
        return (grad if needs_a else None), (grad if needs_b else None)


class Sub(Function):
    """z = a - b;  dz/da = 1, dz/db = -1."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        return _broadcast("sub", np.subtract, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        needs_a, needs_b = ctx.needs_input_grad
        return (grad if needs_a else None), (-grad if needs_b else None)


class Mul(Function):
    """z = a * b;  dz/da = b, dz/db = a."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        ctx.save_for_backward(a, b)
        return _broadcast("mul", np.multiply, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = ctx.saved_tensors
        grad_a = grad * b if ctx.needs_input_grad[0] else None
        grad_b = grad * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """z = a / b;  dz/da = 1 / b, dz/db = -a / b**2."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        ctx.save_for_backward(a, b)
        return _broadcast("div", np.true_divide, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = ctx.saved_tensors
        grad_a = grad / b if ctx.needs_input_grad[0] else None
        grad_b = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """z = a ** b;  dz/da = b * a**(b-1), dz/db = a**b * log(a).

    At the edges, as in PyTorch: dz/da is 0 where a == b == 0, and dz/db is 0 where a == 0.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> np.ndarray:
        ctx.save_for_backward(a, b)
        return _broadcast("pow", np.power, a, b)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            # Where a == b == 0 use the exponent 1 instead: b * a**1 is then 0, not 0 * inf.
            both_zero = np.equal(numeric(b, "pow"), 0) & np.equal(numeric(a, "pow"), 0)
            grad_a = grad * b * a ** (b - 1 + both_zero)
        if ctx.needs_input_grad[1]:
            # Where a == 0 take log(1) = 0 instead of log(0) = -inf.
            a_is_zero = np.equal(numeric(a, "pow"), 0)
            log_a = (a + a_is_zero).log() if isinstance(a, Variable) else np.log(a + a_is_zero)
            grad_b = grad * a**b * log_a
        return grad_a, grad_b


class Neg(Function):
    """z = -a;  dz/da = -1."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Variable) -> np.ndarray:
        return np.negative(numeric(a, "neg"))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return -grad
