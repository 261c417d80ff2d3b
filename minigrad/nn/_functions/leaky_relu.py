"""leaky_relu as a Function whose backward is itself differentiable in x, as PyTorch's is."""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable


class LeakyRelu(Function):
    """y = x where x > 0, else slope · x;  dy/dx = 1 where x > 0, else slope (also at 0)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, slope: float) -> np.ndarray:
        data = x.data
        ctx.slope = slope
        ctx.save_for_backward(x)
        return np.where(data > 0, data, data * slope)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        return LeakyReluBackward.apply(grad, x, ctx.slope), None


class LeakyReluBackward(Function):
    """g = grad where x > 0, else slope · grad, as a Function of (grad, x): a double backward
    reaches x with derivative 0 (a gradient penalty gives the layers before zeros, not None)."""

    @staticmethod
    def forward(ctx: FunctionCtx, grad: Variable, x: Variable, slope: float) -> np.ndarray:
        scale = np.where(x.data > 0, 1.0, slope).astype(grad.data.dtype)
        ctx.save_for_backward(scale)
        return grad.data * scale

    @staticmethod
    def backward(ctx: FunctionCtx, grad_grad: Variable) -> tuple:
        (scale,) = ctx.saved_tensors
        grad_x = Variable._make(np.zeros(scale.shape)) if ctx.needs_input_grad[1] else None
        return grad_grad * scale, grad_x, None
