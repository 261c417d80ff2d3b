"""Reductions: sum, mean and max over all elements or along dimensions.

Backward puts the removed dimensions back (size 1) and expands the gradient over them.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from minigrad.autodiff.function import Function, FunctionCtx
from minigrad.devices import is_on_cuda
from minigrad.ops.operand import normalize_dims, numeric, single_dim
from minigrad.ops.table import register
from minigrad.variable import Variable

MaxResult = namedtuple("MaxResult", ["values", "indices"])


def _kept_shape(shape: tuple, dims: tuple) -> tuple:
    """`shape` with every reduced dimension kept as size 1."""
    return tuple(1 if axis in dims else size for axis, size in enumerate(shape))


class Sum(Function):
    """y = sum of x over `dim`;  dy/dx = 1 for every element that was summed."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False
    ) -> np.ndarray:
        data = numeric(x, "sum")
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        return np.sum(data, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return kept.expand(ctx.input_shape), None, None


class Mean(Function):
    """y = mean of x over `dim`;  dy/dx = 1 / (number of elements averaged)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False
    ) -> np.ndarray:
        data = numeric(x, "mean")
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        ctx.count = int(np.prod([data.shape[d] for d in ctx.dims])) if data.ndim else 1
        if ctx.count == 0:
            raise ValueError(f"mean of an empty Variable (shape {data.shape}) is undefined.")
        return np.mean(data, axis=ctx.dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return kept.expand(ctx.input_shape) / ctx.count, None, None


class Max(Function):
    """y = max of x over `dim`;  the gradient goes to the maximal element.

    On ties, as in PyTorch: max over everything splits it evenly between the tied
    elements; max along a dim gives it all to the index that max returns (the first).
    """

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: Any = None, keepdim: bool = False
    ) -> np.ndarray:
        data = numeric(x, "max")
        if data.size == 0:
            raise ValueError(f"max of an empty Variable (shape {data.shape}) is undefined.")
        ctx.dims = normalize_dims(dim, data.ndim)
        ctx.input_shape = data.shape
        values = np.max(data, axis=ctx.dims, keepdims=True)
        if dim is None or data.ndim == 0 or is_on_cuda(data):
            # Ties share the gradient. (On the CPU, max along a dim gives it all to the
            # first maximum, as PyTorch does; the GPU kernels have no scatter for that.)
            is_max = data == values
            share = (is_max / is_max.sum(axis=ctx.dims, keepdims=True)).astype(data.dtype)
        else:
            (axis,) = ctx.dims
            first = np.expand_dims(np.argmax(data, axis=axis), axis)
            share = np.zeros(data.shape, dtype=data.dtype)
            np.put_along_axis(share, first, 1.0, axis=axis)
        ctx.save_for_backward(share)
        return values if keepdim else values.reshape(np.max(data, axis=ctx.dims).shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        (share,) = ctx.saved_tensors
        kept = grad.reshape(_kept_shape(ctx.input_shape, ctx.dims))
        return kept.expand(ctx.input_shape) * share, None, None


def max_along(x: Variable, dim: int | None = None, keepdim: bool = False) -> Any:
    """x.max() gives the largest value; x.max(dim) gives (values, indices) as in PyTorch."""
    if dim is None:
        return Max.apply(x, None, keepdim)
    axis = single_dim(dim, x.ndim) if x.ndim else None
    values = Max.apply(x, dim, keepdim)
    indices = x.data.argmax(axis=axis)
    if keepdim and axis is not None:
        indices = indices.reshape(values.shape)
    return MaxResult(
        values, Variable._make(indices if is_on_cuda(indices) else np.asarray(indices))
    )


# --------------------------------------------------------------------------- the op table


@register("sum")
def reduce_sum(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:
    return Sum.apply(x, dim, keepdim)


@register("mean")
def reduce_mean(x: Variable, dim: Any = None, keepdim: bool = False) -> Variable:
    return Mean.apply(x, dim, keepdim)


register("max")(max_along)
