"""log_sigmoid, computed without overflow for large |x| (the stable core of the BCE losses)."""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric


class LogSigmoid(Function):
    """y = log(1 / (1 + e^(-x))) = min(x, 0) - log(1 + e^(-|x|));  dy/dx = sigmoid(-x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> np.ndarray:
        data = numeric(x, "log_sigmoid")
        if data.dtype == np.bool_:  # NumPy has no -x for bools
            raise NotImplementedError(
                "log_sigmoid (and binary_cross_entropy_with_logits) is not implemented for "
                "bool Variables, as in PyTorch; convert them with .float() first."
            )
        ctx.save_for_backward(x)
        return np.minimum(data, 0) - np.log1p(np.exp(-np.abs(data)))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * (-x).sigmoid()
