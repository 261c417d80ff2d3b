"""OneHot: integer class labels (*) as int64 rows (*, classes), 1 at each label.

A Function rather than NumPy in one_hot itself, so that minigrad.compile records it: a
replay computes the rows again from each batch's labels instead of keeping the traced
ones. It has no gradient (labels are integers).
"""

from __future__ import annotations

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable


class OneHot(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, labels: Variable, num_classes: int) -> np.ndarray:
        return (labels._data[..., None] == np.arange(num_classes)).astype(np.int64)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return None, None
