"""Operations that move elements around without changing them.

reshape/view, flatten, unflatten, transpose, permute, unsqueeze, squeeze, expand,
expand_as, repeat, sum_to_size, cat, stack, contiguous; then reordering (flip, roll,
unbind, view_as, masked_select). Each backward undoes the move: reshape back, transpose
back, sum the copies, and so on. A new op that only moves elements goes here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.checks import broadcasts_to, summed_to
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import (
    array_of,
    cpu_only,
    normalize_dims,
    numeric,
    numeric_metadata,
    numeric_shape,
    single_dim,
)
from minigrad.ops.table import register


def _check_sizes(shape: tuple, op: str) -> tuple:
    for size in shape:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"{op} expects sizes that are ints; got {size!r} in {shape}.")
    return tuple(int(size) for size in shape)


class Reshape(Function):
    """Same elements in a new shape (one size may be -1);  backward reshapes back."""

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

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

    backward_on_arrays = True  # its formula means the same on NumPy arrays (see Function)

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim0: int, dim1: int) -> np.ndarray:
        data = numeric(x, "transpose")
        ctx.dim0, ctx.dim1 = single_dim(dim0, data.ndim), single_dim(dim1, data.ndim)
        return data.swapaxes(ctx.dim0, ctx.dim1) if data.ndim else data

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        # swapaxes: NumPy's transpose would read (dim0, dim1) as a whole new order
        return (grad.swapaxes(ctx.dim0, ctx.dim1) if grad.ndim else grad), None, None


class Permute(Function):
    """Reorder all dimensions;  backward applies the inverse order."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dims: tuple) -> np.ndarray:
        data = numeric(x, "permute")
        dims = _check_sizes(tuple(dims), "permute")
        if len(dims) != data.ndim:
            raise OpError(
                f"permute: the number of dims must match the Variable's {data.ndim} dimensions; "
                f"got {len(dims)}: {dims}. Name each dimension once, e.g. x.permute("
                f"{', '.join(str(d) for d in reversed(range(data.ndim)))})."
            )
        normalized = [single_dim(d, data.ndim) for d in dims]
        if len(set(normalized)) != len(normalized):
            raise OpError(f"permute(): duplicate dims are not allowed; got {dims}.")
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
        # A new dimension of size 1 never needs a copy; reshape is NumPy's cheapest way.
        return data.reshape(data.shape[: ctx.dim] + (1,) + data.shape[ctx.dim :])

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
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = [single_dim(d, data.ndim) for d in dims]
        if len(set(axes)) != len(axes):
            raise OpError(f"squeeze: a dim appears more than once in {tuple(dims)}; name it once.")
        # As in PyTorch, squeezing a dimension whose size is not 1 leaves it alone.
        ones = tuple(axis for axis in axes if data.ndim and data.shape[axis] == 1)
        return np.squeeze(data, ones) if ones else data

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


class Repeat(Function):
    """Tile x: x.repeat(2, 3) lays out 2 x 3 copies of x;  backward sums the copies' gradients.

    Tiling is an expand in disguise: x of shape (d0, d1), viewed as (1, d0, 1, d1), expanded
    to (r0, d0, r1, d1) and reshaped to (r0 * d0, r1 * d1). Backward reshapes the gradient to
    (r0, d0, r1, d1) and sums over the tile axes r0 and r1.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, repeats: tuple) -> np.ndarray:
        data = numeric(x, "repeat")
        repeats = _check_sizes(repeats, "repeat")
        if len(repeats) < data.ndim:
            raise RuntimeError(
                f"Number of dimensions of repeat dims ({len(repeats)}) can not be smaller than "
                f"number of dimensions of tensor ({data.ndim}, shape {data.shape}); give one "
                f"count per dimension, e.g. x.repeat({', '.join(['1'] * data.ndim)})."
            )
        if any(count < 0 for count in repeats):
            raise RuntimeError(f"repeat: counts must be 0 or more; got {repeats}.")
        ctx.input_shape = data.shape
        sizes = (1,) * (len(repeats) - data.ndim) + data.shape  # x with leading 1s
        one_tile = data.reshape(tuple(n for size in sizes for n in (1, size)))
        ctx.tiled_shape = tuple(n for pair in zip(repeats, sizes) for n in pair)
        tiled = np.broadcast_to(one_tile, ctx.tiled_shape).copy()  # (r0, d0, r1, d1, ...)
        return tiled.reshape(tuple(count * size for count, size in zip(repeats, sizes)))

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        tile_axes = tuple(range(0, len(ctx.tiled_shape), 2))
        per_tile = grad.reshape(ctx.tiled_shape).sum(dim=tile_axes)
        return per_tile.reshape(ctx.input_shape), None


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
        return summed_to(data, shape)

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
        raise OpError(f"{op} expects a non-empty list of Variables.")
    return list(tensors)


class Cat(Function):
    """Join Variables along an existing dimension;  backward slices the gradient apart."""

    @staticmethod
    def forward(ctx: FunctionCtx, dim: int, *tensors: Any) -> np.ndarray:
        arrays = [array_of(t, "cat") for t in tensors]
        if any(a.ndim == 0 for a in arrays):
            raise OpError(
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
            raise OpError(
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
            raise OpError(
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


def _one_sequence(value: Any, op: str, argument: str) -> tuple:
    """The sizes of minigrad.reshape(x, shape) and minigrad.permute(x, dims): one tuple or
    list, as PyTorch's functions take them (only the methods take them one by one)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"minigrad.{op}(): argument '{argument}' (position 2) must be a tuple of ints, but "
            f"got {type(value).__name__} {value!r:.40}. Give them as one tuple or list "
            f"(minigrad.{op}(x, (a, b))), or one by one to the method (x.{op}(a, b))."
        )
    return tuple(value)


def _reshape_function(x: Variable, shape: Any) -> Variable:
    """minigrad.reshape(x, shape): x's elements in the shape, a tuple (one size may be -1)."""
    return Reshape.apply(x, _one_sequence(shape, "reshape", "shape"))


@register("reshape", function=_reshape_function)
def reshape(x: Variable, *shape: Any) -> Variable:
    return Reshape.apply(x, _required_sizes(shape, "reshape", "shape"))


@register("view", function=False)
def view(x: Variable, *shape: Any) -> Variable:
    """x's memory seen in another shape (writes through one are seen by the other); an
    error where the strides allow no such view (a transposed x), as in PyTorch."""
    sizes = _required_sizes(shape, "view")
    data = numeric_metadata(x, "view")
    if type(data) is np.ndarray and not data.flags.c_contiguous:
        _check_viewable(data, sizes)
    return Reshape.apply(x, sizes)


def _check_viewable(data: np.ndarray, sizes: Any) -> None:
    """A RuntimeError when `data` has the elements for `sizes` but only a copy can hold
    them in that shape (a wrong size is left to reshape's own error)."""
    try:
        np.reshape(data, sizes, copy=False)
    except ValueError:
        try:
            np.reshape(data, sizes)
        except (ValueError, TypeError):
            return
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces): the Variable of shape "
            f"{data.shape} is not contiguous (transposed or sliced). Use .reshape(...) "
            f"instead, or .contiguous().view(...)."
        ) from None
    except TypeError:
        return


@register("transpose", aliases=("swapaxes", "swapdims"))
def transpose(x: Variable, dim0: int, dim1: int) -> Variable:
    return Transpose.apply(x, dim0, dim1)


def _permute_function(x: Variable, dims: Any) -> Variable:
    """minigrad.permute(x, dims): x's dimensions in the order `dims`, a tuple."""
    return Permute.apply(x, _one_sequence(dims, "permute", "dims"))


@register("permute", function=_permute_function)
def permute(x: Variable, *dims: Any) -> Variable:
    return Permute.apply(x, _required_sizes(dims, "permute", "dims"))


@register("unsqueeze", numpy=np.expand_dims)
def unsqueeze(x: Variable, dim: int) -> Variable:
    return Unsqueeze.apply(x, dim)


@register("squeeze")
def squeeze(x: Variable, dim: Any = None) -> Variable:
    """x without its dimensions of size 1: all of them, or those of dim (an int or a tuple)."""
    return Squeeze.apply(x, dim)


def _required_sizes(sizes: tuple, op: str, argument: str = "size") -> tuple:
    """The sizes of x.expand(*sizes), x.reshape(*shape) and the like: at least one, as in
    PyTorch (x.reshape(()) is the way to ask for no dimensions)."""
    if not sizes:
        raise TypeError(
            f"Variable.{op}() missing 1 required positional argument: '{argument}'. Give the "
            f"{argument} one by one or as a tuple, e.g. x.{op}(2, 3) or x.{op}((2, 3))."
        )
    return shape_arguments(sizes)


@register("expand", function=False)
def expand(x: Variable, *sizes: Any) -> Variable:
    return Expand.apply(x, _required_sizes(sizes, "expand"))


@register("expand_as", function=False)
def expand_as(x: Variable, other: Any) -> Variable:
    """x expanded to other's shape (x.expand(other.shape))."""
    return Expand.apply(x, tuple(np.shape(numeric(other, "expand_as"))))


@register("repeat", function=False)
def repeat(x: Variable, *repeats: Any) -> Variable:
    """Tile x: repeats[i] copies along dimension i (leading counts add new dimensions)."""
    return Repeat.apply(x, _required_sizes(repeats, "repeat", "repeats"))


@register("flatten")
def flatten(x: Variable, start_dim: int = 0, end_dim: int = -1) -> Variable:
    """Merge dimensions start_dim..end_dim into one (a reshape); a 0-d x becomes shape (1,)."""
    shape = numeric_shape(x, "flatten")
    start, end = single_dim(start_dim, len(shape)), single_dim(end_dim, len(shape))
    if not shape:
        return Reshape.apply(x, (1,))
    if start > end:
        raise RuntimeError(
            f"flatten() has invalid args: start_dim cannot come after end_dim; got "
            f"start_dim={start_dim}, end_dim={end_dim} for a Variable of shape {shape}."
        )
    merged = int(np.prod(shape[start : end + 1]))
    return Reshape.apply(x, shape[:start] + (merged,) + shape[end + 1 :])


@register("unflatten")
def unflatten(x: Variable, dim: int, sizes: Any) -> Variable:
    """Split dimension `dim` into `sizes` (one may be -1, inferred) (a reshape)."""
    shape = numeric_shape(x, "unflatten")
    # PyTorch's order: the kind of sizes, sizes given, a dimension to split, dim's range.
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(
            f"unflatten(dim, sizes): sizes must be a tuple or list of ints, e.g. (2, 3); "
            f"got {type(sizes).__name__} {sizes!r:.40}."
        )
    sizes = _check_sizes(tuple(sizes), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty; give the new sizes, e.g. (2, 3).")
    if not shape:
        raise RuntimeError("unflatten needs a dimension to split; got a 0-d Variable.")
    axis = single_dim(dim, len(shape))
    known = int(np.prod([size for size in sizes if size != -1]))
    fits = shape[axis] % known == 0 if -1 in sizes and known else known == shape[axis]
    if not sizes or sizes.count(-1) > 1 or not fits:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({shape[axis]}) in the input tensor (shape {shape}); give sizes whose "
            f"product is {shape[axis]}, at most one of them -1."
        )
    return Reshape.apply(x, shape[:axis] + sizes + shape[axis + 1 :])


@register("is_contiguous", function=False)
def is_contiguous(x: Variable) -> bool:
    """Whether x's elements lie in memory in row-major order without gaps (C order)."""
    # Its layout only, no value: minigrad.compile sees no read of values.
    return bool(numeric_metadata(x, "is_contiguous").flags.c_contiguous)


@register("contiguous", function=False)
def contiguous(x: Variable) -> Variable:
    """x itself when its data is C-contiguous; otherwise a contiguous copy, in the graph."""
    return x if is_contiguous(x) else x.clone()


@register("element_size", function=False)
def element_size(x: Variable) -> int:
    """The number of bytes one element takes (8 for float64)."""
    return int(numeric(x, "element_size").itemsize)


def _broadcast_to_function(x: Variable, size: Any) -> Variable:
    """minigrad.broadcast_to(x, size): the size is one tuple or list, as in PyTorch (the
    method, x.broadcast_to(2, 3), also takes the sizes one by one)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"minigrad.broadcast_to(): argument 'size' (position 2) must be a tuple of ints, "
            f"but got {type(size).__name__} {size!r:.40}. Give the shape as a tuple, e.g. "
            f"minigrad.broadcast_to(x, ({size!r:.20},))."
        )
    return Expand.apply(x, tuple(size))


@register(
    "broadcast_to",
    function=_broadcast_to_function,
    numpy=lambda x, *shape: np.broadcast_to(x, _numpy_shape(shape)),
)
def broadcast_to(x: Variable, *shape: Any) -> Variable:
    """x expanded to `shape` by NumPy's broadcasting rules (the same as x.expand(shape))."""
    return Expand.apply(x, _required_sizes(shape, "broadcast_to"))


def _numpy_shape(shape: tuple) -> tuple:
    """(2, 3) from f(x, 2, 3) or f(x, (2, 3))."""
    return tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape


@register("sum_to_size", function=False)
def sum_to_size(x: Variable, *shape: Any) -> Variable:
    """Sum broadcast dimensions away until the shape is `shape` (backward of broadcasting)."""
    return SumToSize.apply(x, _required_sizes(shape, "sum_to_size"))


register("cat", method=False, aliases=("concat", "concatenate"))(cat)
register("stack", method=False)(stack)


# ------------------------------------------------------------------------- reorder
#
# Reordering and regrouping elements: flip, roll, unbind, view_as, masked_select.
#
# Each moves elements without changing them, so each backward moves the gradient back.

class Flip(Function):
    """y = x reversed along `dims`;  dx = dy reversed along the same dims."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dims: tuple) -> np.ndarray:
        data = numeric(x, "flip")
        # No dims flips nothing (normalize_dims would read () as every dim, as a reduction).
        ctx.dims = normalize_dims(dims, data.ndim) if dims else ()
        return np.flip(data, axis=ctx.dims).copy()

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Flip.apply(grad, ctx.dims), None


class Roll(Function):
    """y = x shifted by `shifts` along `dims` (wrapping round);  dx = dy shifted back."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, shifts: Any, dims: Any) -> np.ndarray:
        data = numeric(x, "roll")
        shift_list = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
        dim_list = () if dims is None else dims if isinstance(dims, (tuple, list)) else (dims,)
        shift_list = _check_sizes(tuple(shift_list), "roll")
        dim_list = _check_sizes(tuple(dim_list), "roll")
        if not shift_list:
            raise RuntimeError("roll: `shifts` required; give at least one shift.")
        if len(shift_list) != max(len(dim_list), 1):
            raise RuntimeError(
                f"roll: shifts and dims must have the same length (one shift without dims); got "
                f"{len(shift_list)} shifts and {len(dim_list)} dims."
            )
        if not dim_list:
            # No dims: the flattened x is rolled, then put back in its shape.
            ctx.shifts, ctx.dims = shift_list[0], None
            return np.roll(data.reshape(-1), ctx.shifts).reshape(data.shape)
        if data.ndim == 0:
            raise IndexError(
                f"roll: dimension specified as {dim_list[0]} but the Variable has no dimensions; "
                f"roll a 0-d Variable without dims (it stays as it is)."
            )
        ctx.shifts = shift_list
        ctx.dims = tuple(single_dim(d, data.ndim) for d in dim_list)
        return np.roll(data, ctx.shifts, axis=ctx.dims)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        if ctx.dims is None:
            return Roll.apply(grad, -ctx.shifts, None), None, None
        back = tuple(-s for s in ctx.shifts)
        return Roll.apply(grad, back, ctx.dims), None, None


def _flip_function(x: Variable, dims: Any) -> Variable:
    """minigrad.flip(x, dims): the dims are one tuple or list, as in PyTorch (the method,
    x.flip(0, 1), also takes them one by one)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(
            f"minigrad.flip(): argument 'dims' (position 2) must be a tuple of ints, but got "
            f"{type(dims).__name__} {dims!r:.30}. Give the dims as a tuple, e.g. "
            f"minigrad.flip(x, ({dims!r:.10},))."
        )
    return flip(x, tuple(dims))


@register("flip", function=_flip_function)
def flip(x: Variable, *dims: Any) -> Variable:
    """x reversed along each of `dims` (x.flip(0), x.flip((0, 1)), minigrad.flip(x, [0]))."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    elif not dims:
        raise TypeError(
            "Variable.flip() missing 1 required positional argument: 'dims'. Give the dims "
            "to reverse, e.g. x.flip(0) or x.flip((0, 1))."
        )
    elif any(isinstance(dim, (tuple, list)) for dim in dims):
        raise TypeError(
            f"Variable.flip(): dims are ints, or one tuple of them; got {dims!r:.40}. Write "
            f"x.flip(0, 1) or x.flip((0, 1))."
        )
    return Flip.apply(x, dims)


@register("roll")
def roll(x: Variable, shifts: Any, dims: Any = None) -> Variable:
    """x shifted by `shifts` along `dims`; with dims=None the flattened x is rolled."""
    return Roll.apply(x, shifts, dims)


@register("unbind")
def unbind(x: Variable, dim: int = 0) -> tuple:
    """The slices of x along `dim`, as a tuple (each a differentiable x.select)."""
    if x.ndim == 0:
        raise IndexError(
            f"Dimension specified as {dim} but tensor has no dimensions: unbind cuts a "
            f"Variable along a dimension, and a 0-d one has none (use it as it is, or .item())."
        )
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




# ------------------------------------------------------------------ diagonals
#
# x.diagonal(offset, dim1, dim2) is a view: its elements are x[..., i, i + offset, ...] along
# dim1 and dim2, and a write into it writes into x (as PyTorch's). Its backward puts the
# gradient back on the same diagonal of zeros; diag_embed is that placement as an op.


def _diagonal_of(data: np.ndarray, offset: int, axis1: int, axis2: int) -> np.ndarray:
    """A writable view of diagonal `offset` of axes (axis1, axis2), appended as the last axis.

    Stepping one element along the diagonal moves one step along both axes, so the view's
    last stride is the sum of the two (np.diagonal gives the same numbers, read-only)."""
    moved = np.moveaxis(data, (axis1, axis2), (-2, -1))
    rows, columns = moved.shape[-2:]
    if offset >= 0:
        length, first = min(rows, columns - offset), (0, offset)
    else:
        length, first = min(rows + offset, columns), (-offset, 0)
    length = max(length, 0)
    corner = moved[..., first[0] :, first[1] :] if length else moved
    strides = moved.strides[:-2] + (moved.strides[-2] + moved.strides[-1],)
    return np.lib.stride_tricks.as_strided(corner, moved.shape[:-2] + (length,), strides)


def _diagonal_axes(offset: Any, dim1: Any, dim2: Any, ndim: int, op: str) -> tuple[int, int]:
    """(dim1, dim2) as non-negative axes of an `ndim`-dimensional array, checked as PyTorch."""
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'offset' must be int, not {type(offset).__name__}.")
    axis1, axis2 = single_dim(dim1, ndim), single_dim(dim2, ndim)
    if axis1 == axis2:
        raise RuntimeError(
            f"diagonal dimensions cannot be identical {dim1}, {dim2}; {op} takes the "
            f"diagonal of two different dimensions (dim1=-2, dim2=-1 for the last two)."
        )
    return axis1, axis2


def _on_host(data: Any) -> np.ndarray:
    """The values as a NumPy array (a cuda array is copied to the host)."""
    return data if isinstance(data, np.ndarray) else data.to_host()


class Diagonal(Function):
    """y[..., i] = x[..., i, i + offset, ...] along (dim1, dim2): a view of x;
    dx = zeros(x.shape) with dy on that diagonal."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, offset: int, dim1: int, dim2: int) -> Any:
        data = numeric(x, "diagonal")
        ctx.axes = _diagonal_axes(offset, dim1, dim2, data.ndim, "diagonal")
        ctx.offset, ctx.input_shape = int(offset), data.shape
        if type(data) is np.ndarray:
            return _diagonal_of(data, ctx.offset, *ctx.axes)
        # On cuda: a copy made on the host (the GPU arrays have no strided views).
        on_host = _diagonal_of(_on_host(data), ctx.offset, *ctx.axes).copy()
        return devices.move(on_host, "cuda")

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        placed = DiagonalScatter.apply(grad, ctx.input_shape, ctx.offset, *ctx.axes)
        return placed, None, None, None


class DiagonalScatter(Function):
    """y = zeros(shape) with v on diagonal `offset` of (dim1, dim2);  dv = that diagonal of dy."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, v: Variable, shape: tuple, offset: int, dim1: int, dim2: int
    ) -> Any:
        values = numeric(v, "diag_embed")
        ctx.offset, ctx.axes = offset, (dim1, dim2)
        result = np.zeros(shape, dtype=values.dtype)
        _diagonal_of(result, offset, dim1, dim2)[...] = _on_host(values)
        return result if type(values) is np.ndarray else devices.move(result, "cuda")

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Diagonal.apply(grad, ctx.offset, *ctx.axes), None, None, None, None


@register("diagonal")
def diagonal(x: Variable, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Variable:
    """The diagonal `offset` of dims (dim1, dim2), a view moved to the last dim:
    (2, 3, 4).diagonal() is (4, 2)."""
    return Diagonal.apply(x, offset, dim1, dim2)


@register("diag_embed")
def diag_embed(x: Variable, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Variable:
    """Each last-dim vector of x (n values) on diagonal `offset` of a new square block of
    size n + |offset| at dims (dim1, dim2) of the result: (2, 3) -> (2, 3, 3), zeros elsewhere."""
    shape = numeric_shape(x, "diag_embed")
    ndim = len(shape) + 1
    axis1, axis2 = _diagonal_axes(offset, dim1, dim2, ndim, "diag_embed")
    size = shape[-1] + abs(int(offset))
    result_shape = list(shape[:-1])
    for axis in sorted((axis1, axis2)):
        result_shape.insert(axis, size)
    return DiagonalScatter.apply(x, tuple(result_shape), int(offset), axis1, axis2)


# ------------------------------------------------------------------ windows and repeats
#
# x.unfold(dim, size, step) views x as the windows x[..., i*step : i*step + size, ...] along
# dim, each window in a new last dimension; windows may overlap, so its backward adds the
# gradient of every window back where it came from. repeat_interleave repeats each slice
# along dim in place (1 1 2 2, where repeat tiles: 1 2 1 2): it is index_select with each
# position repeated, whose backward adds the copies' gradients back together.


def _window_count(length: int, size: int, step: int) -> int:
    return (length - size) // step + 1


class Unfold(Function):
    """y[..., i, ..., k] = x[..., i * step + k, ...] along dim: (.., L, ..) -> (.., n, .., size)
    with n = (L - size) // step + 1, a view of x;  dx = each window's gradient added back."""

    _output_is_view = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, size: int, step: int) -> np.ndarray:
        data = numeric(x, "unfold")
        cpu_only(data, "unfold")
        ctx.input_shape, ctx.size, ctx.step = data.shape, size, step
        ctx.dim = single_dim(dim, data.ndim)
        line = np.atleast_1d(data)
        length = line.shape[ctx.dim]
        if size > length:
            raise RuntimeError(
                f"unfold(): maximum size for tensor at dimension {ctx.dim} is {length} but size "
                f"is {size}; a window cannot be longer than the dimension."
            )
        # Every start 0, 1, 2, ... as a read-only view, then every step-th of them: windows
        # may overlap, so a write through one would change its neighbours too.
        windows = np.lib.stride_tricks.sliding_window_view(line, size, axis=ctx.dim)
        chosen = (slice(None),) * ctx.dim + (slice(None, None, step),)
        result = windows[chosen]
        return result.reshape(size) if data.ndim == 0 else result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        folded = FoldWindows.apply(grad, ctx.input_shape, ctx.dim, ctx.size, ctx.step)
        return folded, None, None, None


class FoldWindows(Function):
    """Unfold's backward: y = zeros(shape), then each window of v added at its place along
    dim (overlaps add up);  dv = y's gradient unfolded again."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, v: Variable, shape: tuple, dim: int, size: int, step: int
    ) -> np.ndarray:
        windows = numeric(v, "unfold")
        ctx.dim, ctx.size, ctx.step = dim, size, step
        result = np.zeros(shape or (1,), dtype=windows.dtype)
        count = _window_count(result.shape[dim], size, step)
        if windows.ndim == 1 and not shape:
            windows = windows.reshape(1, size)
        for k in range(size):
            # Element k of every window: positions k, k + step, ..., never one twice.
            place = (slice(None),) * dim + (slice(k, k + step * (count - 1) + 1, step),)
            result[place] += windows[..., k]
        return result.reshape(shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Unfold.apply(grad, ctx.dim, ctx.size, ctx.step), None, None, None, None


def _whole(value: Any, name: str, op: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{op}(): argument '{name}' must be an int; got {type(value).__name__} {value!r:.40}."
        )
    return int(value)


@register("unfold", function=False)
def unfold(x: Variable, dimension: int, size: int, step: int) -> Variable:
    """The windows of `size` elements, `step` apart, along `dimension`, as a view of x with
    the window in a new last dim: arange(1., 8).unfold(0, 2, 2) is [[1, 2], [3, 4], [5, 6]]."""
    size, step = _whole(size, "size", "unfold"), _whole(step, "step", "unfold")
    single_dim(_whole(dimension, "dimension", "unfold"), len(numeric_shape(x, "unfold")))
    if size < 0:  # after the dimension, as PyTorch checks them
        raise RuntimeError(f"unfold(): size is {size} but must be >= 0.")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0.")
    return Unfold.apply(x, dimension, size, step)


def _repeat_counts(repeats: Any, op: str) -> np.ndarray:
    """repeats as an int64 array of 0 or 1 dimensions, each count checked."""
    if isinstance(repeats, Variable) and not repeats.is_text:
        counts = repeats.detach().cpu().numpy()
        if counts.dtype.kind not in "iu":
            raise NotImplementedError(
                f'"{op}_cpu" not implemented for \'{counts.dtype}\': repeats must hold '
                f"integers; convert them with repeats.long()."
            )
        if counts.ndim > 1:
            raise RuntimeError(
                f"{op}(): repeats must be 0-dim or 1-dim tensor; got shape {counts.shape}."
            )
        if (counts < 0).any():
            raise RuntimeError(f"{op}(): repeats can not be negative; got {counts.tolist()}.")
        return counts.astype(np.int64)
    count = _whole(repeats, "repeats", op)
    if count < 0:
        raise RuntimeError(f"{op}(): Repeats must be non-negative; got {count}.")
    return np.asarray(count, dtype=np.int64)


def _positions_repeated(counts: np.ndarray, length: int, op: str) -> np.ndarray:
    """0 0 1 1 1 ...: each position along dim as often as its count says."""
    if counts.ndim == 1 and counts.size != 1 and counts.size != length:
        raise RuntimeError(
            f"{op}(): repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.size} and input.size(dim) = {length}; give one count "
            f"per slice, or a single count for all."
        )
    return np.repeat(np.arange(length), counts.reshape(-1) if counts.size != 1 else counts.item())


# repeat_interleave(counts) alone: no repeats given (None given is refused, as in PyTorch).
_NOT_GIVEN: Any = object()


def _repeat_interleave_function(
    x: Variable,
    repeats: int | Variable | None = _NOT_GIVEN,
    dim: int | None = None,
    *,
    output_size: Any = None,
) -> Variable:
    """minigrad.repeat_interleave(x, repeats, dim) as the method; repeat_interleave(repeats)
    alone (a 1-D Variable of counts) gives 0 repeated repeats[0] times, 1 ..., and so on."""
    if repeats is None:
        raise TypeError(
            "repeat_interleave(): argument 'repeats' must be an int or a Variable of counts, "
            "not None; leave it out to repeat the positions of a 1-D Variable of counts."
        )
    if repeats is _NOT_GIVEN:
        if dim is not None:
            raise TypeError(
                "repeat_interleave(repeats) takes no dim: it repeats the positions 0, 1, ... "
                "of a 1-D Variable of counts. To repeat a Variable's slices, pass "
                "repeat_interleave(x, repeats, dim)."
            )
        counts = _repeat_counts(x, "repeat_interleave")
        if counts.ndim != 1:
            raise RuntimeError(
                "repeat_interleave only accept 1D vector as repeat; got a 0-dim one. Give a "
                "1-D Variable of counts, e.g. repeat_interleave(tensor([1, 2]))."
            )
        positions = np.repeat(np.arange(counts.size), counts)
        _check_output_size(output_size, positions.size)
        return Variable(positions.astype(np.int64))
    return repeat_interleave(x, repeats, dim, output_size=output_size)


def _check_output_size(output_size: Any, size: int) -> None:
    if output_size is None:
        return
    if isinstance(output_size, Variable) and output_size.numel() == 1:
        output_size = output_size.item()  # a 0-d Variable counts as its int, as in PyTorch
    if _whole(output_size, "output_size", "repeat_interleave") != size:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {size} but got {output_size} "
            f"(the sum of the repeats along dim); leave it out or pass {size}."
        )


@register("repeat_interleave", function=_repeat_interleave_function)
def repeat_interleave(
    x: Variable,
    repeats: int | Variable | None,
    dim: int | None = None,
    *,
    output_size: Any = None,
) -> Variable:
    """Each slice along dim repeated in place, repeats[i] times (or `repeats` times each):
    [1, 2] with 2 is [1, 1, 2, 2]. dim=None flattens x first. See the section comment."""
    if isinstance(output_size, Variable) and not output_size.is_text:
        if np.dtype(output_size.dtype).kind not in "iu" or output_size.numel() != 1:
            raise TypeError(
                f"repeat_interleave(): argument 'output_size' must be an int; got a Variable "
                f"of dtype {output_size.dtype} and shape {tuple(output_size.shape)}."
            )
    elif output_size is not None:
        _whole(output_size, "output_size", "repeat_interleave")  # its kind first, as PyTorch
    counts = _repeat_counts(repeats, "repeat_interleave")
    shape = numeric_shape(x, "repeat_interleave")
    if dim is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = single_dim(dim, len(shape))
        if not shape:  # PyTorch refuses any dim of a 0-d input here
            raise IndexError(
                f"repeat_interleave(): a 0-d Variable has no dim {dim} to repeat along; "
                f"pass dim=None, or make it 1-d first (x.reshape(1))."
            )
    positions = _positions_repeated(counts, x.shape[axis], "repeat_interleave")
    _check_output_size(output_size, positions.size)
    return x.index_select(axis, Variable(positions.astype(np.int64)))
