"""Constant padding (and cropping, for negative amounts) of the last dimensions."""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric


def pad_widths(pad: tuple[int, ...], ndim: int) -> list[tuple[int, int]]:
    """PyTorch's pad = (left_last, right_last, left_before_last, ...) as one pair per dim."""
    widths = [(0, 0)] * ndim
    for pair in range(len(pad) // 2):
        widths[ndim - 1 - pair] = (pad[2 * pair], pad[2 * pair + 1])
    return widths


class ConstantPad(Function):
    """y = x with pad[2i] values before and pad[2i+1] after dim -1-i (negative: crop).

    dx = dy with the padding cut off and the cropped parts filled with 0: the same op
    with every amount negated.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, pad: tuple[int, ...], value: float) -> np.ndarray:
        data = numeric(x, "pad")
        ctx.pad = pad
        widths = pad_widths(pad, data.ndim)
        crop = tuple(
            slice(max(-before, 0), size - max(-after, 0))
            for (before, after), size in zip(widths, data.shape)
        )
        grow = [(max(before, 0), max(after, 0)) for before, after in widths]
        return np.pad(data[crop], grow, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return ConstantPad.apply(grad, tuple(-amount for amount in ctx.pad), 0.0), None, None
