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
from minigrad.core.grad_mode import is_grad_enabled
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric


class Normalize(Function):
    """x̂ = (x - mean) / √(var + eps) over `axes`;  dx = (dy - mean(dy) - x̂·mean(dy·x̂)) / σ."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, axes: tuple[int, ...], eps: float) -> Variable:
        data = numeric(x, "normalize")
        ctx.axes, ctx.eps = axes, eps
        mean = data.mean(axis=axes, keepdims=True)
        centered = data - mean
        variance = (centered * centered).mean(axis=axes, keepdims=True)
        sigma = np.sqrt(variance + eps)
        ctx.inverse_sigma = (1 / sigma).astype(data.dtype, copy=False)
        # x̂ saved as the output it is (in-place changes to it are caught, as for any
        # saved value)
        normalized = Variable._make((centered / sigma).astype(data.dtype, copy=False))
        ctx.save_for_backward(x, normalized)
        return normalized

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, normalized = ctx.saved_tensors
        axes, eps = ctx.axes, ctx.eps
        if is_grad_enabled():
            # create_graph=True: x̂ and σ again from x, as Variable operations, so that a
            # second derivative sees how they depend on x.
            centered = x - x.mean(axes, keepdim=True)
            sigma = ((centered * centered).mean(axes, keepdim=True) + eps).sqrt()
            normalized = centered / sigma
            inverse_sigma = 1 / sigma
        else:  # the x̂ and 1/σ the forward computed: seven operations instead of fifteen
            inverse_sigma = Variable._make(ctx.inverse_sigma)
        mean_grad = grad.mean(axes, keepdim=True)
        mean_grad_normalized = (grad * normalized).mean(axes, keepdim=True)
        dx = (grad - mean_grad - normalized * mean_grad_normalized) * inverse_sigma
        return dx, None, None
