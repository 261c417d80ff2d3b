"""Operations that move elements around without changing them.

reshape/view, transpose, permute, unsqueeze, squeeze, expand, sum_to_size, cat, stack.
Each backward undoes the move: reshape back, transpose back, and so on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.autodiff.function import Function, FunctionCtx, broadcasts_to
from minigrad.ops.operand import array_of, numeric, single_dim
from minigrad.ops.table import register
from minigrad.variable import Variable


def _check_sizes(shape: tuple, op: str) -> tuple:
    for size in shape:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"{op} expects sizes that are ints; got {size!r} in {shape}.")
    return tuple(int(size) for size in shape)


class Reshape(Function):
    """Same elements in a new shape (one size may be -1);  backward reshapes back."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, shape: tuple) -> np.ndarray:
        data = numeric(x, "reshape")
        ctx.input_shape = data.shape
        shape = _check_sizes(shape, "reshape")
        if shape.count(-1) > 1:
            raise RuntimeError(f"reshape {shape}: only one dimension can be inferred (-1).")
        if any(size < -1 for size in shape):
            raise RuntimeError(f"reshape {shape}: invalid shape dimension {min(shape)}.")
        try:
            return data.reshape(shape)
        except ValueError:
            raise RuntimeError(
                f"shape {tuple(shape)} is invalid for input of size {data.size} (shape "
                f"{data.shape}); the sizes must multiply to {data.size}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.reshape(ctx.input_shape), None


class Transpose(Function):
    """Swap two dimensions;  backward swaps them back."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim0: int, dim1: int) -> np.ndarray:
        data = numeric(x, "transpose")
        ctx.dim0, ctx.dim1 = single_dim(dim0, data.ndim), single_dim(dim1, data.ndim)
        return np.swapaxes(data, ctx.dim0, ctx.dim1) if data.ndim else data

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.transpose(ctx.dim0, ctx.dim1), None, None


class Permute(Function):
    """Reorder all dimensions;  backward applies the inverse order."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dims: tuple) -> np.ndarray:
        data = numeric(x, "permute")
        normalized = [single_dim(d, data.ndim) for d in dims] if data.ndim else []
        if sorted(normalized) != list(range(data.ndim)):
            raise ValueError(
                f"permute needs each of the {data.ndim} dimensions exactly once; got {tuple(dims)}."
            )
        ctx.inverse = tuple(int(i) for i in np.argsort(normalized))
        return np.transpose(data, normalized)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.permute(ctx.inverse), None


class Unsqueeze(Function):
    """Insert a dimension of size 1 at `dim`;  backward removes it."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int) -> np.ndarray:
        data = numeric(x, "unsqueeze")
        ctx.dim = single_dim(dim, data.ndim + 1)
        return np.expand_dims(data, ctx.dim)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.squeeze(ctx.dim), None


class Squeeze(Function):
    """Remove dimensions of size 1 (all, or only `dim`);  backward reshapes back."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int | None = None) -> np.ndarray:
        data = numeric(x, "squeeze")
        ctx.input_shape = data.shape
        if dim is None:
            return np.squeeze(data)
        axis = single_dim(dim, data.ndim)
        # As in PyTorch, squeezing a dimension whose size is not 1 leaves it alone.
        return np.squeeze(data, axis) if data.ndim and data.shape[axis] == 1 else data

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.reshape(ctx.input_shape), None


class Expand(Function):
    """Repeat size-1 dimensions (and add leading ones) without copying;  backward sums them."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, sizes: tuple) -> np.ndarray:
        data = numeric(x, "expand")
        sizes = _check_sizes(sizes, "expand")
        ctx.input_shape = data.shape
        if len(sizes) < data.ndim:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal "
                f"to the number of dimensions of the Variable ({data.ndim})."
            )
        offset = len(sizes) - data.ndim
        target = list(sizes)
        for axis, size in enumerate(data.shape):
            wanted = sizes[offset + axis]
            if wanted == -1:
                target[offset + axis] = size
            elif size != 1 and wanted != size:
                raise RuntimeError(
                    f"The expanded size of the Variable ({wanted}) must match the existing size "
                    f"({size}) at non-singleton dimension {offset + axis}. Target sizes: "
                    f"{list(sizes)}. Variable sizes: {list(data.shape)}."
                )
        if any(size < 0 for size in target):
            raise RuntimeError(f"expand: -1 is not allowed for a new leading dimension: {sizes}.")
        return np.broadcast_to(data, tuple(target))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.sum_to_size(ctx.input_shape), None


class SumToSize(Function):
    """Sum broadcast dimensions away until the shape is `shape`;  backward expands again."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, shape: tuple) -> np.ndarray:
        data = numeric(x, "sum_to_size")
        shape = _check_sizes(shape, "sum_to_size")
        ctx.input_shape = data.shape
        if len(shape) > data.ndim or not broadcasts_to(shape, data.shape):
            raise RuntimeError(
                f"sum_to_size: size {shape} is not expandable to the Variable's size {data.shape}."
            )
        leading = data.ndim - len(shape)
        summed = data.sum(axis=tuple(range(leading))) if leading else data
        ones = tuple(
            axis for axis, size in enumerate(shape) if size == 1 and summed.shape[axis] != 1
        )
        return summed.sum(axis=ones, keepdims=True) if ones else summed

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.expand(ctx.input_shape), None


def _split_along(grad: Variable, dim: int, stops: list[int], keep_dim: bool) -> list[Variable]:
    """The pieces of `grad` along `dim`, as differentiable slices."""
    pieces, start = [], 0
    for stop in stops:
        index = (slice(None),) * dim + ((slice(start, stop),) if keep_dim else (start,))
        pieces.append(grad[index])
        start = stop
    return pieces


def _only_needed(pieces: list, needs_input_grad: tuple) -> list:
    """Constants (arrays, numbers) among the inputs get None, not a gradient."""
    return [piece if needed else None for piece, needed in zip(pieces, needs_input_grad)]


def _as_variable_list(tensors: Any, op: str) -> list:
    if isinstance(tensors, Variable) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op} expects a list or tuple of Variables; got {type(tensors).__name__}.")
    if not tensors:
        raise ValueError(f"{op} expects a non-empty list of Variables.")
    return list(tensors)


class Cat(Function):
    """Join Variables along an existing dimension;  backward slices the gradient apart."""

    @staticmethod
    def forward(ctx: FunctionCtx, dim: int, *tensors: Any) -> np.ndarray:
        arrays = [array_of(t, "cat") for t in tensors]
        if any(a.ndim == 0 for a in arrays):
            raise ValueError(
                "zero-dimensional Variables cannot be concatenated; use minigrad.stack to "
                "join them along a new dimension."
            )
        ctx.dim = single_dim(dim, arrays[0].ndim)
        ctx.stops = list(
            int(s) for s in np.cumsum([a.shape[ctx.dim] if a.ndim else 1 for a in arrays])
        )
        try:
            return np.concatenate(arrays, axis=ctx.dim)
        except ValueError:
            shapes = [a.shape for a in arrays]
            raise ValueError(
                f"cat: Variables must have the same shape except in dimension {ctx.dim}; "
                f"got {shapes}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        pieces = _split_along(grad, ctx.dim, ctx.stops, keep_dim=True)
        return (None, *_only_needed(pieces, ctx.needs_input_grad[1:]))


class Stack(Function):
    """Join Variables along a new dimension;  backward selects each slice."""

    @staticmethod
    def forward(ctx: FunctionCtx, dim: int, *tensors: Any) -> np.ndarray:
        arrays = [array_of(t, "stack") for t in tensors]
        ctx.dim = single_dim(dim, arrays[0].ndim + 1)
        try:
            return np.stack(arrays, axis=ctx.dim)
        except ValueError:
            shapes = [a.shape for a in arrays]
            raise ValueError(
                f"stack expects each Variable to be equal size; got {shapes}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        stops = list(range(1, grad.shape[ctx.dim] + 1))
        pieces = _split_along(grad, ctx.dim, stops, keep_dim=False)
        return (None, *_only_needed(pieces, ctx.needs_input_grad[1:]))


def cat(tensors: list[Variable] | tuple[Variable, ...], dim: int = 0) -> Variable:
    """Concatenate Variables along dimension `dim`."""
    return Cat.apply(dim, *_as_variable_list(tensors, "cat"))


def stack(tensors: list[Variable] | tuple[Variable, ...], dim: int = 0) -> Variable:
    """Stack Variables of equal shape along a new dimension `dim`."""
    return Stack.apply(dim, *_as_variable_list(tensors, "stack"))


# --------------------------------------------------------------------------- the op table


def shape_arguments(args: tuple) -> tuple:
    """Accept both v.reshape(2, 3) and v.reshape((2, 3))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


@register("reshape")
def reshape(x: Variable, *shape: Any) -> Variable:
    return Reshape.apply(x, shape_arguments(shape))


@register("view", function=False)
def view(x: Variable, *shape: Any) -> Variable:
    """Same as reshape: minigrad's reshapes of NumPy arrays are views whenever NumPy can."""
    return Reshape.apply(x, shape_arguments(shape))


@register("transpose", aliases=("swapaxes", "swapdims"))
def transpose(x: Variable, dim0: int, dim1: int) -> Variable:
    return Transpose.apply(x, dim0, dim1)


@register("permute")
def permute(x: Variable, *dims: Any) -> Variable:
    return Permute.apply(x, shape_arguments(dims))


@register("unsqueeze")
def unsqueeze(x: Variable, dim: int) -> Variable:
    return Unsqueeze.apply(x, dim)


@register("squeeze")
def squeeze(x: Variable, dim: int | None = None) -> Variable:
    return Squeeze.apply(x, dim)


@register("expand", function=False)
def expand(x: Variable, *sizes: Any) -> Variable:
    return Expand.apply(x, shape_arguments(sizes))


@register("sum_to_size", function=False)
def sum_to_size(x: Variable, *shape: Any) -> Variable:
    """Sum broadcast dimensions away until the shape is `shape` (backward of broadcasting)."""
    return SumToSize.apply(x, shape_arguments(shape))


register("cat", method=False, aliases=("concat", "concatenate"))(cat)
register("stack", method=False)(stack)
