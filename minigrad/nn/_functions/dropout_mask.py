"""DropoutMask: dropout's mask keep / (1 - p), keep ~ Bernoulli(1 - p) per element.

A Function rather than NumPy in dropout itself, so that minigrad.compile records the draw:
a replay runs this forward again, drawing the next mask from minigrad's generator in the
same order as the eager step would. It takes x only for its shape and dtype (pass it
detached: the mask has no gradient), or only for its dtype when `shape` is given (attention
draws one value per query-key pair, a shape no input has).
"""

from __future__ import annotations

import numpy as np

from minigrad import factories
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable


class DropoutMask(Function):
    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, p: float, shape: tuple[int, ...] | None = None
    ) -> np.ndarray:
        keep = factories._generator.random(x.shape if shape is None else shape) >= p
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        return (keep * scale).astype(x.dtype)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return (None,) * len(ctx.needs_input_grad)  # two or three inputs, none with a gradient
