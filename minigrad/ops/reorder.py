"""Reordering and regrouping elements: flip, roll, unbind, view_as, masked_select.

Each moves elements without changing them, so each backward moves the gradient back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import normalize_dims, numeric, single_dim
from minigrad.ops.table import register


class Flip(Function):
    """y = x reversed along `dims`;  dx = dy reversed along the same dims."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dims: tuple) -> np.ndarray:
        data = numeric(x, "flip")
        ctx.dims = normalize_dims(dims, data.ndim)
        return np.flip(data, axis=ctx.dims).copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Flip.apply(grad, ctx.dims), None


class Roll(Function):
    """y = x shifted by `shifts` along `dims` (wrapping round);  dx = dy shifted back."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, shifts: Any, dims: Any) -> np.ndarray:
        data = numeric(x, "roll")
        if dims is None:
            ctx.shifts, ctx.dims = shifts, None
            return np.roll(data.reshape(-1), shifts).reshape(data.shape)
        shift_list = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
        dim_list = dims if isinstance(dims, (tuple, list)) else (dims,)
        if len(shift_list) != len(dim_list):
            raise RuntimeError(
                f"roll: shifts and dims must have the same length; got {len(shift_list)} "
                f"shifts and {len(dim_list)} dims."
            )
        ctx.shifts = tuple(int(s) for s in shift_list)
        ctx.dims = tuple(single_dim(d, data.ndim) for d in dim_list)
        return np.roll(data, ctx.shifts, axis=ctx.dims)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        if ctx.dims is None:
            return Roll.apply(grad, -ctx.shifts, None), None, None
        back = tuple(-s for s in ctx.shifts)
        return Roll.apply(grad, back, ctx.dims), None, None


@register("flip")
def flip(x: Variable, *dims: Any) -> Variable:
    """x reversed along each of `dims` (x.flip(0), x.flip((0, 1)), minigrad.flip(x, [0]))."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if not dims:
        raise TypeError("flip needs the dims to reverse, e.g. x.flip(0) or x.flip((0, 1)).")
    return Flip.apply(x, dims)


@register("roll")
def roll(x: Variable, shifts: Any, dims: Any = None) -> Variable:
    """x shifted by `shifts` along `dims`; with dims=None the flattened x is rolled."""
    return Roll.apply(x, shifts, dims)


@register("unbind")
def unbind(x: Variable, dim: int = 0) -> tuple:
    """The slices of x along `dim`, as a tuple (each a differentiable x.select)."""
    axis = single_dim(dim, x.ndim)
    prefix = (slice(None),) * axis
    return tuple(x[prefix + (i,)] for i in range(x.shape[axis]))


@register("view_as", function=False)
def view_as(x: Variable, other: Variable) -> Variable:
    """x reshaped to other's shape."""
    return x.reshape(other.shape)


@register("masked_select")
def masked_select(x: Variable, mask: Any) -> Variable:
    """The elements of x where `mask` (broadcast to x's shape) is True, as a 1-D Variable."""
    if x.device == "cuda" or (isinstance(mask, Variable) and mask.device == "cuda"):
        raise NotImplementedError(
            "masked_select is not supported on cuda yet (its result's size depends on the "
            "data); move the Variable to the CPU with .cpu()"
        )
    mask_data = numeric(mask, "masked_select")
    if np.asarray(mask_data).dtype != np.bool_:
        raise TypeError(
            f"masked_select expects a bool mask; got dtype {np.asarray(mask_data).dtype}. "
            f"Make one with a comparison, e.g. x > 0."
        )
    try:
        shape = np.broadcast_shapes(x.shape, np.shape(mask_data))
    except ValueError:
        raise OpError(
            f"masked_select: the mask's shape {np.shape(mask_data)} does not broadcast with "
            f"the input's {x.shape}; each dimension must match or be 1."
        ) from None
    expanded = x.expand(shape) if x.shape != shape else x
    return expanded[np.broadcast_to(mask_data, shape)]
