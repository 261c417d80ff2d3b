"""Normalization over some axes, the core of BatchNorm and GroupNorm.

    x̂ = (x - μ) / σ,  μ = mean(x),  σ = √(var(x) + eps)   (biased var, over `axes`)

Its backward in compact form (m elements in each mean; means over `axes`):

    dx = (dy - mean(dy) - x̂ · mean(dy · x̂)) / σ

The three terms: dy itself, the path through μ (every input moves the mean, so each gets
-mean(dy)), and the path through σ (each input moves the variance by 2(x - μ)/m).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric


class Normalize(Function):
    """x̂ = (x - mean) / √(var + eps) over `axes`;  dx = (dy - mean(dy) - x̂·mean(dy·x̂)) / σ."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, axes: tuple[int, ...], eps: float) -> np.ndarray:
        data = numeric(x, "normalize")
        ctx.save_for_backward(x)
        ctx.axes, ctx.eps = axes, eps
        mean = data.mean(axis=axes, keepdims=True)
        centered = data - mean
        variance = (centered * centered).mean(axis=axes, keepdims=True)
        return (centered / np.sqrt(variance + eps)).astype(data.dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (x,) = ctx.saved_tensors
        axes, eps = ctx.axes, ctx.eps
        # x̂ and σ again from x, as Variable operations: with create_graph=True a second
        # derivative then sees how they depend on x.
        centered = x - x.mean(axes, keepdim=True)
        sigma = ((centered * centered).mean(axes, keepdim=True) + eps).sqrt()
        normalized = centered / sigma
        mean_grad = grad.mean(axes, keepdim=True)
        mean_grad_normalized = (grad * normalized).mean(axes, keepdim=True)
        dx = (grad - mean_grad - normalized * mean_grad_normalized) / sigma
        return dx, None, None
