"""softmax and log_softmax along one dimension, computed stably (shifted by the max).

softmax:      y = exp(x) / sum(exp(x));   dx = y * (dy - sum(dy * y))
log_softmax:  y = x - log(sum(exp(x)));   dx = dy - exp(y) * sum(dy)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.elementwise import exp
from minigrad.ops.operand import numeric, single_dim
from minigrad.ops.reduction import reduce_sum
from minigrad.ops.table import register


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) along `dim`;  dx = y * (dy - sum(dy * y))."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable, dim: int) -> np.ndarray:
        data = numeric(x, "softmax")
        axis = single_dim(dim, data.ndim)  # checked on a 0-d x too: dim 0 or -1 only
        if data.ndim == 0:
            axis = None
        if data.size == 0:
            return data.copy()
        if data.dtype.kind not in "fc":
            # PyTorch has no kernel for it: cast first, x.softmax(dim, dtype=...).
            raise NotImplementedError(
                f"softmax of a {data.dtype} Variable: it works on floats. Pass "
                f"dtype=minigrad.float32 (or float64) to cast x first."
            )
        shifted = np.exp(data - np.max(data, axis=axis, keepdims=True))
        return shifted / np.sum(shifted, axis=axis, keepdims=True)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.dim = inputs[1]
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (y,) = ctx.saved_tensors
        return y * (grad - reduce_sum(grad * y, ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    """y = x - log(sum(exp(x))) along `dim`;  dx = dy - exp(y) * sum(dy)."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    @staticmethod
    def forward(x: Variable, dim: int) -> np.ndarray:
        data = numeric(x, "log_softmax")
        axis = single_dim(dim, data.ndim)  # checked on a 0-d x too: dim 0 or -1 only
        if data.ndim == 0:
            axis = None
        if data.size == 0:
            return data.copy()
        if data.dtype.kind not in "fc":
            # PyTorch has no kernel for it: cast first, x.log_softmax(dim, dtype=...).
            raise NotImplementedError(
                f"log_softmax of a {data.dtype} Variable: it works on floats. Pass "
                f"dtype=minigrad.float32 (or float64) to cast x first."
            )
        shifted = data - np.max(data, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        ctx.dim = inputs[1]
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (y,) = ctx.saved_tensors
        return grad - exp(y) * reduce_sum(grad, ctx.dim, keepdim=True), None


# --------------------------------------------------------------------------- the op table


def _cast(x: Variable, dtype: Any) -> Variable:
    """PyTorch's dtype= argument of softmax: cast the input first."""
    return x if dtype is None else x.to(dtype)


@register("softmax")
def softmax(x: Variable, dim: int, dtype: Any = None) -> Variable:
    return Softmax.apply(_cast(x, dtype), dim)


@register("log_softmax")
def log_softmax(x: Variable, dim: int, dtype: Any = None) -> Variable:
    return LogSoftmax.apply(_cast(x, dtype), dim)
