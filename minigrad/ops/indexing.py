"""Picking elements by position: reading x[index], writing x[index] = value, copying into a
Variable; then narrow, split, chunk, gather, index_select and scatter along a dimension.
A new op that selects or places elements goes here.

The backward of reading is writing the gradient back where it came from (ScatterAdd),
and the backward of ScatterAdd is reading again, so second derivatives work too.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import array_of, cpu_only, numeric, numeric_shape, single_dim
from minigrad.ops.table import register


def normalize_index(index: Any) -> Any:
    """NumPy's form of an index: Variables inside it become their arrays."""
    if isinstance(index, Variable):
        return _index_array(index)
    if isinstance(index, tuple):
        return tuple(_index_array(i) if isinstance(i, Variable) else i for i in index)
    if isinstance(index, list):
        try:
            return np.asarray(index)
        except ValueError:
            raise IndexError(
                f"an index list must be rectangular (rows of one length); got {index!r:.60}."
            ) from None
    return index


def _index_array(variable: Variable) -> np.ndarray:
    if variable.is_text or variable.data.dtype.kind not in "biu":
        raise IndexError(
            f"a Variable used as an index must hold integers or bools; got dtype {variable.dtype}."
        )
    return variable.data


def _is_basic(index: Any) -> bool:
    """Ints, slices, None and ... only: NumPy's basic indexing, which selects a view."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        isinstance(part, (int, np.integer, slice)) or part is None or part is Ellipsis
        for part in parts
    )


def _read(data: np.ndarray, index: Any) -> Any:
    try:
        return data[index]
    except IndexError as error:
        if "only integers" in str(error):
            raise IndexError(
                f"cannot index a Variable with {index!r} ({type(index).__name__}); valid "
                f"indices are ints, slices, None, ..., and integer or bool arrays."
            ) from None
        problem = "is out of range" if "out of bounds" in str(error) else "does not fit"
        raise IndexError(
            f"index {index!r} {problem} for a Variable of shape {data.shape}: {error}."
        ) from None
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"cannot index a Variable of shape {data.shape} with {index!r}: {error}. Use ints, "
            f"slices, None, ..., or integer/bool arrays."
        ) from None


class Index(Function):
    """y = x[index];  dx = the gradient written back at `index` (summed where repeated)."""

    _output_is_view = True  # basic indexing gives views (checked per call)

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, index: Any) -> np.ndarray:
        data = numeric(x, "indexing")
        ctx.index = normalize_index(index)
        ctx.input_shape = data.shape
        return _read(data, ctx.index)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return ScatterAdd.apply(grad, ctx.index, ctx.input_shape), None


class ScatterAdd(Function):
    """y = zeros(shape) with grad added at `index`;  backward reads `index` again."""

    @staticmethod
    def forward(ctx: FunctionCtx, grad: Variable, index: Any, shape: tuple) -> np.ndarray:
        ctx.index = index
        device = devices.device_of(grad.data)
        result = devices.zeros(shape, grad.data.dtype, device)
        if _is_basic(index):
            result[index] = grad.data  # ints and slices never pick an element twice
        elif device == "cuda":
            raise NotImplementedError(
                "the gradient of indexing with integer arrays is not supported on cuda yet "
                "(the kernels have no scatter-add); index on the CPU (.cpu()) or use slices."
            )
        else:
            np.add.at(result, index, grad.data)  # integer arrays may repeat: add, don't assign
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad[ctx.index], None, None


class IndexPut(Function):
    """y = x with y[index] = value;  dx = grad with zeros at index, dvalue = grad[index]."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, index: Any, value: Any) -> np.ndarray:
        result = numeric(x, "index assignment").copy()
        ctx.index = normalize_index(index)
        _read(result, ctx.index)
        try:
            result[ctx.index] = numeric(value, "index assignment")
        except (ValueError, TypeError) as error:
            raise OpError(
                f"cannot assign a value of shape {np.shape(numeric(value, 'index assignment'))} "
                f"to x[{index!r}] of shape {np.shape(result[ctx.index])}: {error}."
            ) from None
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = IndexPut.apply(grad, ctx.index, 0.0) if ctx.needs_input_grad[0] else None
        grad_value = grad[ctx.index] if ctx.needs_input_grad[2] else None
        return grad_x, None, grad_value


class Copy(Function):
    """y = source broadcast to x's shape (x.copy_(source));  x gets a zero gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, source: Any) -> np.ndarray:
        data = numeric(x, "copy_")
        values = numeric(source, "copy_")
        try:
            return np.broadcast_to(values, data.shape).astype(data.dtype)
        except ValueError:
            raise RuntimeError(
                f"copy_: a source of shape {np.shape(values)} cannot be broadcast to {data.shape}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        zeros = Variable._make(np.zeros_like(grad.data)) if ctx.needs_input_grad[0] else None
        return zeros, grad if ctx.needs_input_grad[1] else None


# ------------------------------------------------------------------------- selection
#
# Picking elements by position along one dimension, and adding them back.
#
# narrow, split and chunk cut x into slices (views, as x[..., a:b]). gather and index_select
# read elements at integer positions; scatter_add and index_add add values at such
# positions, scatter writes them there. Reading and adding are each other's backward: the
# gradient of a read is added back where the value came from, and the gradient of an add
# is read where it went, so second derivatives work too.
#
# Along dim=0 of a 2-d x, with integer Variables `index`:
#
#     gather:        out[i][j] = x[index[i][j]][j]
#     scatter_add:   out = x;  out[index[i][j]][j] += src[i][j]
#     scatter:       out = x;  out[index[i][j]][j] = src[i][j]   (or = value)
#     index_select:  out[i] = x[index[i]]
#     index_add:     out = x;  out[index[i]] += alpha * source[i]

def index_array(index: Any, op: str) -> np.ndarray:
    """The integer array behind an index argument: a Variable, a NumPy array or a list."""
    if isinstance(index, Variable) and not index.is_text:
        data = index.data
    elif isinstance(index, (np.ndarray, list, tuple)):
        data = np.asarray(index)
    else:
        raise TypeError(
            f"{op}(): index must be a Variable of integers, e.g. minigrad.tensor([0, 2]); "
            f"got {type(index).__name__}."
        )
    cpu_only(data, op)
    if data.dtype.kind not in "iu":
        raise RuntimeError(
            f"{op}(): expected an index of integers (int64); got dtype {data.dtype}. "
            f"Convert it with index.long()."
        )
    return data


def _check_range(index: np.ndarray, size: int, dim: int, op: str, error: type) -> None:
    """Every position in [0, size): PyTorch does not count back from the end here."""
    outside = (index < 0) | (index >= size)
    if outside.any():
        raise error(
            f"{op}(): index {index[outside].flat[0]} is out of bounds for dimension {dim} with "
            f"size {size}; positions must be in [0, {size - 1}] (negative ones are not "
            f"allowed here)."
        )


def _check_same_dtype(data: np.ndarray, values: np.ndarray, name: str, op: str) -> None:
    if values.dtype != data.dtype:
        raise RuntimeError(
            f"{op}(): expected {name} to have the dtype of self ({data.dtype}); got "
            f"{values.dtype}. Convert it first: {name}.to(x.dtype)."
        )


def _check_index_shape(
    index: np.ndarray, shape: tuple, dim: int | None, name: str, op: str
) -> None:
    """As PyTorch: index has as many dimensions as `name` and is no larger (except at dim)."""
    if index.ndim != len(shape):
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as {name} "
            f"({len(shape)}); got an index of shape {index.shape} for {name} of shape {shape}."
        )
    for axis, (wanted, available) in enumerate(zip(index.shape, shape)):
        if axis != dim and wanted > available:
            apart = "" if dim is None else f" apart from dimension {dim}"
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {axis}: expected index "
                f"{list(index.shape)} to be no larger than {name} {list(shape)}{apart}."
            )


def _coordinates(index: np.ndarray, dim: int) -> tuple:
    """For gather and scatter_add: element [i, j] of index points at (index[i, j], j) for
    dim=0, at (i, index[i, j]) for dim=1; a NumPy index that picks all those places."""
    places = list(np.indices(index.shape, sparse=True))
    places[dim] = index
    return tuple(places)


def _along(dim: int, index: np.ndarray) -> tuple:
    """For index_select and index_add: x[:, ..., index] with the index at position dim."""
    return (slice(None),) * dim + (index,)


def _vector(index: np.ndarray, op: str) -> np.ndarray:
    if index.ndim > 1:
        raise IndexError(
            f"{op}(): Index is supposed to be a vector (1-d); got an index of shape "
            f"{index.shape}. Flatten it with index.flatten()."
        )
    return index.reshape(-1)


def _without(shape: tuple, dim: int) -> tuple:
    return shape[:dim] + shape[dim + 1 :]


# --------------------------------------------------------------------------- the Functions
# A 0-d x (and 0-d index or values) works as if it had shape (1,), as in PyTorch.


class Gather(Function):
    """out[i][j] = x[index[i][j]][j] (dim=0);  dx = zeros with grad added at index (scatter_add)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray) -> np.ndarray:
        data = numeric(x, "gather")
        cpu_only(data, "gather")
        ctx.dim = single_dim(dim, data.ndim)
        ctx.index, ctx.input_shape = index, data.shape
        data, index = np.atleast_1d(data), np.atleast_1d(index)
        _check_index_shape(index, data.shape, ctx.dim, "self", "gather")
        _check_range(index, data.shape[ctx.dim], ctx.dim, "gather", RuntimeError)
        return data[_coordinates(index, ctx.dim)].reshape(ctx.index.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        zeros = Variable._make(np.zeros(ctx.input_shape, grad.data.dtype))
        return ScatterAddAlong.apply(zeros, ctx.dim, ctx.index, grad), None, None


class ScatterAddAlong(Function):
    """out = x, then out[index[i][j]][j] += src[i][j] (dim=0);  dx = grad,
    dsrc = grad.gather(dim, index) (zeros where src is larger than index)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray, src: Any) -> np.ndarray:
        data, values = numeric(x, "scatter_add"), array_of(src, "scatter_add")
        cpu_only(data, "scatter_add")
        cpu_only(values, "scatter_add")
        _check_same_dtype(data, values, "src", "scatter_add")
        ctx.dim = single_dim(dim, data.ndim)
        ctx.index, ctx.src_shape = index, values.shape
        out, index, values = np.atleast_1d(data).copy(), np.atleast_1d(index), np.atleast_1d(values)
        _check_index_shape(index, out.shape, ctx.dim, "self", "scatter_add")
        _check_index_shape(index, values.shape, None, "src", "scatter_add")
        _check_range(index, out.shape[ctx.dim], ctx.dim, "scatter_add", RuntimeError)
        used = values[tuple(slice(0, size) for size in index.shape)]  # src may be larger
        np.add.at(out, _coordinates(index, ctx.dim), used)  # add.at: repeated places add up
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_src = None
        if ctx.needs_input_grad[3]:
            grad_src = grad.gather(ctx.dim, ctx.index)
            if grad_src.shape != ctx.src_shape:  # the part of src that index did not reach
                corner = tuple(slice(0, size) for size in grad_src.shape)
                grad_src = ScatterAdd.apply(grad_src, corner, ctx.src_shape)
        return grad, None, None, grad_src


class ScatterAlong(Function):
    """out = x, then out[index[i][j]][j] = src[i][j] (dim=0), or = value when src is None;
    dx = grad with zeros at the places written, dsrc = grad.gather(dim, index). Where
    index repeats a place, which of the values lands there is not specified (as in
    PyTorch); here the last one does."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray, src: Any, value: Any
    ) -> np.ndarray:
        data = numeric(x, "scatter")
        cpu_only(data, "scatter")
        ctx.dim = single_dim(dim, data.ndim)
        ctx.index, ctx.src_shape = index, None
        out, index = np.atleast_1d(data).copy(), np.atleast_1d(index)
        _check_index_shape(index, out.shape, ctx.dim, "self", "scatter")
        _check_range(index, out.shape[ctx.dim], ctx.dim, "scatter", RuntimeError)
        places = _coordinates(index, ctx.dim)
        if src is None:
            out[places] = value
        else:
            values = array_of(src, "scatter")
            cpu_only(values, "scatter")
            _check_same_dtype(data, values, "src", "scatter")
            ctx.src_shape = values.shape
            values = np.atleast_1d(values)
            _check_index_shape(index, values.shape, None, "src", "scatter")
            out[places] = values[tuple(slice(0, size) for size in index.shape)]
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:  # what was written over gets no gradient
            grad_x = ScatterAlong.apply(grad, ctx.dim, ctx.index, None, 0)
        if ctx.src_shape is not None and ctx.needs_input_grad[3]:
            grad_src = grad.gather(ctx.dim, ctx.index)
            if grad_src.shape != ctx.src_shape:  # the part of src that index did not reach
                corner = tuple(slice(0, size) for size in grad_src.shape)
                grad_src = ScatterAdd.apply(grad_src, corner, ctx.src_shape)
        return grad_x, None, None, grad_src, None


class IndexSelect(Function):
    """out = x[..., index, ...] along dim;  dx = zeros with grad added at index (index_add)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray) -> np.ndarray:
        data = numeric(x, "index_select")
        cpu_only(data, "index_select")
        ctx.dim = single_dim(dim, data.ndim)
        ctx.index, ctx.input_shape = _vector(index, "index_select"), data.shape
        if data.ndim == 0 and ctx.index.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got "
                f"{ctx.index.size} value(s)."
            )
        data = np.atleast_1d(data)
        _check_range(ctx.index, data.shape[ctx.dim], ctx.dim, "index_select", IndexError)
        out = data[_along(ctx.dim, ctx.index)]
        return out.reshape(()) if not ctx.input_shape else out

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        zeros = Variable._make(np.zeros(ctx.input_shape, grad.data.dtype))
        return IndexAdd.apply(zeros, ctx.dim, ctx.index, grad, 1), None, None


class IndexAdd(Function):
    """out = x, then out[..., index[i], ...] += alpha * source[..., i, ...] along dim;
    dx = grad, dsource = alpha * grad.index_select(dim, index)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray, source: Any, alpha: Any
    ) -> np.ndarray:
        # PyTorch's order: the dim, the index's shape, then the source.
        data = numeric(x, "index_add")
        ctx.dim = single_dim(dim, data.ndim)
        ctx.index, ctx.alpha = _vector(index, "index_add"), alpha
        values = array_of(source, "index_add")
        cpu_only(data, "index_add")
        cpu_only(values, "index_add")
        _check_same_dtype(data, values, "source", "index_add")
        out, values = np.atleast_1d(data).copy(), np.atleast_1d(values)
        same_others = _without(values.shape, ctx.dim) == _without(out.shape, ctx.dim)
        if values.ndim != out.ndim or not same_others:
            raise RuntimeError(
                f"index_add(): source tensor shape must match self tensor shape, excluding "
                f"the specified dimension {dim}. Got self.shape = {list(data.shape)} "
                f"source.shape = {list(np.shape(values))}."
            )
        if len(ctx.index) != values.shape[ctx.dim]:
            raise RuntimeError(
                f"index_add(): Number of indices ({len(ctx.index)}) should be equal to "
                f"source.size(dim) ({values.shape[ctx.dim]}), for dim: {dim}; give one "
                f"position per slice of source."
            )
        _check_range(ctx.index, out.shape[ctx.dim], ctx.dim, "index_add", IndexError)
        np.add.at(out, _along(ctx.dim, ctx.index), values if alpha == 1 else alpha * values)
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_source = None
        if ctx.needs_input_grad[3]:
            grad_source = grad.index_select(ctx.dim, ctx.index)
            if ctx.alpha != 1:
                grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None


# --------------------------------------------------------------------------- the op table


def _length_along(x: Variable, dim: int, op: str) -> tuple[int, int]:
    """(axis, size) of x's dimension dim; a 0-d x has none to cut."""
    shape = numeric_shape(x, op)  # the shape only: minigrad.compile sees no read of values
    if not shape:
        raise RuntimeError(f"{op}() cannot be applied to a 0-dim Variable; it needs a dimension.")
    axis = single_dim(dim, len(shape))
    return axis, shape[axis]


def _count(value: Any, name: str, op: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, Variable)):
        raise TypeError(f"{op}(): {name} must be an int; got {value!r} ({type(value).__name__}).")
    return int(value)


@register("narrow")
def narrow(x: Variable, dim: int, start: int, length: int) -> Variable:
    """The slice start:start+length along dim, a view (x[..., start:start+length, ...])."""
    start, length = _count(start, "start", "narrow"), _count(length, "length", "narrow")
    if numeric_shape(x, "narrow") and length < 0:
        # PyTorch's order: a 0-d x, then the length, then the dim and the start.
        raise RuntimeError(f"narrow(): length must be non-negative; got {length}.")
    axis, size = _length_along(x, dim, "narrow")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size}); shorten "
            f"the length to at most {size - start}."
        )
    return x[(slice(None),) * axis + (slice(start, start + length),)]


@register("split")
def split(x: Variable, split_size_or_sections: Any, dim: int = 0) -> tuple[Variable, ...]:
    """Cut x along dim into pieces of split_size (the last may be smaller), or of the sizes
    in a list. The pieces are views of x."""
    axis, size = _length_along(x, dim, "split")
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_count(s, "each split size", "split") for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                f"tensor's size at dimension {axis}), but got split_sizes={sizes}."
            )
    else:
        step = _count(split_size_or_sections, "split_size", "split")
        if step < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={step}"
            )
        if step == 0 and size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of "
                f"{size}."
            )
        sizes = [min(step, size - start) for start in range(0, size, step or 1)] or [0]
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(narrow(x, axis, int(s), n) for s, n in zip(starts, sizes))


@register("chunk")
def chunk(x: Variable, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
    """Cut x along dim into `chunks` pieces of ceil(size / chunks) (the last may be smaller,
    and there may be fewer pieces). The pieces are views of x."""
    chunks = _count(chunks, "chunks", "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    axis, size = _length_along(x, dim, "chunk")
    if size == 0:
        return split(x, [0] * chunks, axis)
    return split(x, -(-size // chunks), axis)


@register("gather")
def gather(x: Variable, dim: int, index: Any, *, sparse_grad: bool = False) -> Variable:
    """out[i][j] = x[index[i][j]][j] for dim=0 (x[i][index[i][j]] for dim=1); see Gather.
    sparse_grad is accepted and ignored (gradients here are dense)."""
    return Gather.apply(x, dim, index_array(index, "gather"))


@register("scatter_add", inplace=True)
def scatter_add(x: Variable, dim: int, index: Any, src: Any) -> Variable:
    """A copy of x with src[i][j] added at x[index[i][j]][j] (dim=0); see ScatterAddAlong."""
    return ScatterAddAlong.apply(x, dim, index_array(index, "scatter_add"), src)


@register("scatter", inplace=True)
def scatter(
    x: Variable,
    dim: int,
    index: Any,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Variable:
    """A copy of x with src[i][j] written at x[index[i][j]][j] (dim=0), or the number
    `value` written at each of those places; see ScatterAlong. x.scatter_(...) writes
    into x: e.g. zeros(10).scatter_(0, tensor(3), value=1) is a one-hot vector."""
    if reduce is not None:
        raise NotImplementedError(
            f"scatter(reduce={reduce!r}) is not in minigrad (PyTorch deprecates it): use "
            f"scatter_add for reduce='add'."
        )
    if src is not None and value is not None:
        raise TypeError("scatter() takes src or value, not both.")
    if src is None and value is None:
        raise TypeError(
            "scatter() needs what to write: src (a Variable shaped like index) or value "
            "(a number), e.g. x.scatter(0, index, value=1.0)."
        )
    if src is not None and not isinstance(src, Variable):  # scatter(dim, index, 1.0)
        src, value = None, src
    if value is not None and not isinstance(value, (numbers.Number, np.number)):
        raise TypeError(f"scatter(): value must be a number; got {type(value).__name__}.")
    return ScatterAlong.apply(x, dim, index_array(index, "scatter"), src, value)


@register("index_select")
def index_select(x: Variable, dim: int, index: Any) -> Variable:
    """The slices of x at positions `index` along dim, in that order; see IndexSelect."""
    return IndexSelect.apply(x, dim, index_array(index, "index_select"))


@register("index_add", inplace=True)
def index_add(x: Variable, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Variable:
    """A copy of x with alpha * source[i] added at slice index[i] along dim; see IndexAdd.
    x.index_add_(...) changes x in place."""
    if isinstance(alpha, Variable):
        raise TypeError("index_add(): alpha must be a number; got a Variable.")
    if not isinstance(source, (Variable, np.ndarray)):
        raise TypeError(
            f"index_add(): argument 'source' (position 3) must be a Variable, but got "
            f"{type(source).__name__} {source!r:.40}. Make one with minigrad.tensor(...), "
            f"shaped like x along every dim but `dim`."
        )
    return IndexAdd.apply(x, dim, index_array(index, "index_add"), source, alpha)


