"""Elementwise functions of one Variable: exp, log, tanh, sigmoid, relu, sqrt, abs, clone.

Those whose derivative is easiest to write from the output (exp, tanh, sigmoid, sqrt) save
the output, using the setup_context style: forward(x), then setup_context sees the output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric
from minigrad.ops.table import register


class Exp(Function):
    """y = exp(x);  dy/dx = y."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.exp(numeric(x, "exp"))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * y


class Log(Function):
    """y = log(x);  dy/dx = 1 / x."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.log(numeric(x, "log"))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad / x


class Tanh(Function):
    """y = tanh(x);  dy/dx = 1 - y**2."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.tanh(numeric(x, "tanh"))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x));  dy/dx = y * (1 - y)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        # The tanh form of the same function never overflows exp for large |x|.
        return 0.5 * (1 + np.tanh(0.5 * numeric(x, "sigmoid")))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


class Relu(Function):
    """y = max(x, 0);  dy/dx = 1 where x > 0, else 0."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.maximum(numeric(x, "relu"), 0)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return ReluBackward.apply(grad, y)


class ReluBackward(Function):
    """g = grad where y > 0, else 0: relu's backward as a Function of (grad, y), so that a
    double backward reaches y (with derivative 0), as PyTorch's threshold_backward does:
    a gradient penalty then gives the parameters before a relu zeros, not None."""

    @staticmethod
    def forward(ctx: FunctionCtx, grad: Variable, y: Variable) -> np.ndarray:
        positive = numeric(y, "relu") > 0
        ctx.save_for_backward(positive)
        return numeric(grad, "relu") * positive

    @staticmethod
    def backward(ctx: FunctionCtx, grad_grad: Variable) -> tuple:
        (positive,) = ctx.saved_tensors
        grad_y = Variable._make(np.zeros(positive.shape)) if ctx.needs_input_grad[1] else None
        return grad_grad * positive, grad_y


class Sqrt(Function):
    """y = sqrt(x);  dy/dx = 1 / (2 y)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable) -> np.ndarray:
        return np.sqrt(numeric(x, "sqrt"))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (y,) = ctx.saved_tensors
        return grad / (2 * y)


class Abs(Function):
    """y = |x|;  dy/dx = sign(x) (0 at 0, as in PyTorch)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = numeric(x, "abs")
        if data.dtype == np.bool_:
            raise NotImplementedError(
                "abs of a bool Variable is not supported (nor in PyTorch): a mask is its own "
                "absolute value; for numbers convert first, mask.float().abs()."
            )
        ctx.save_for_backward(np.sign(data))
        return np.abs(data)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (sign,) = ctx.saved_tensors
        return grad * sign


class Clone(Function):
    """y = x, in new memory;  dy/dx = 1."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> Any:
        return x.data if isinstance(x.data, str) else x.data.copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        return grad


# --------------------------------------------------------------------------- the op table


@register("exp", inplace=True, numpy=np.exp)
def exp(x: Variable) -> Variable:
    return Exp.apply(x)


@register("log", inplace=True)
def log(x: Variable) -> Variable:
    return Log.apply(x)


@register("tanh", inplace=True)
def tanh(x: Variable) -> Variable:
    return Tanh.apply(x)


@register("sigmoid", inplace=True)
def sigmoid(x: Variable) -> Variable:
    return Sigmoid.apply(x)


@register("relu", inplace=True)
def relu(x: Variable) -> Variable:
    return Relu.apply(x)


@register("sqrt", inplace=True)
def sqrt(x: Variable) -> Variable:
    return Sqrt.apply(x)


@register("abs", inplace=True, aliases=("absolute",))
def absolute(x: Variable) -> Variable:
    return Abs.apply(x)


@register("clone")
def clone(x: Variable) -> Variable:
    """A differentiable copy with its own data."""
    return Clone.apply(x)
