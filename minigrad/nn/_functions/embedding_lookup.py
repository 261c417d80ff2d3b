"""The row lookup of an embedding: y = weight[indices], with no gradient for padding_idx."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.indexing import ScatterAdd
from minigrad.ops.operand import numeric


class EmbeddingLookup(Function):
    """y[..., :] = weight[indices[...], :]: indices (*) → y (*, embedding_dim).

    dweight = the rows of dy added up by index (repeats add), except the row padding_idx,
    which gets no gradient (as in PyTorch: the padding vector stays as it is).
    """

    @staticmethod
    def forward(
        ctx: FunctionCtx, weight: Variable, indices: np.ndarray, padding_idx: Any
    ) -> np.ndarray:
        table = numeric(weight, "embedding")
        ctx.indices = indices
        ctx.padding_idx = padding_idx
        ctx.shape = table.shape
        return table[indices]

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        if ctx.padding_idx is not None:
            used = (ctx.indices != ctx.padding_idx)[..., None].astype(grad.dtype)
            grad = grad * Variable._make(used)
        return ScatterAdd.apply(grad, ctx.indices, ctx.shape), None, None
