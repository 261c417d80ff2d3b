"""Binary cross-entropy on probabilities, with PyTorch's clamped logs and gradient."""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric

LOG_FLOOR = -100.0  # PyTorch clamps log(x) and log(1 - x) here, so x = 0 or 1 stays finite
EPSILON = 1e-12  # and floors x(1 - x) here in the gradient


class BinaryCrossEntropy(Function):
    """ℓ = -(t·max(log x, -100) + (1 - t)·max(log(1 - x), -100)), elementwise.

    dℓ/dx = (x - t) / max(x(1 - x), 1e-12);  dℓ/dt = log(1 - x) - log(x), as PyTorch.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, target: Variable) -> np.ndarray:
        probabilities = numeric(x, "binary_cross_entropy")
        labels = numeric(target, "binary_cross_entropy")
        if probabilities.dtype == np.bool_:  # NumPy has no 1 - x for bools
            raise NotImplementedError(
                "binary_cross_entropy is not implemented for bool probabilities, as in "
                "PyTorch; convert them with .float() (or .double()) first."
            )
        ctx.save_for_backward(x, target)
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(probabilities), LOG_FLOOR)
            log_rest = np.maximum(np.log1p(-probabilities), LOG_FLOOR)
        return (labels - 1) * log_rest - labels * log_x

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, target = ctx.saved_tensors
        grad_x = grad_target = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * (x - target) / ((1 - x) * x).clamp(min=EPSILON)
        if ctx.needs_input_grad[1]:
            grad_target = grad * -(x / (1 - x)).log()
        return grad_x, grad_target
