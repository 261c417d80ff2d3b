"""ToDevice: a Variable copied to another device, with its gradient copied back."""

from __future__ import annotations

from typing import Any

from minigrad import device as devices
from minigrad.autodiff.function import Function, FunctionCtx
from minigrad.variable import Variable


class ToDevice(Function):
    """y = x on `device`;  dy/dx = 1, so the gradient is x's, moved back to x's device."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, device: str) -> Any:
        ctx.source = x.device
        return devices.move(x.data, device)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Variable._make(devices.move(grad.data, ctx.source)), None
