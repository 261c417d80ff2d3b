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
from minigrad.ops.operand import (
    array_of,
    check_representable,
    cpu_only,
    numeric,
    numeric_shape,
    single_dim,
)
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
    return variable._data


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
            add_at(result, index, grad.data)  # integer arrays may repeat: add, don't assign
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad[ctx.index], None, None


def add_at(result: np.ndarray, index: Any, values: np.ndarray) -> None:
    """np.add.at(result, index, values). One integer array picking rows of a float result
    (an embedding's gradient: a row per token) is summed as a product instead,
    onehot(picks)ᵀ · values, one BLAS call in place of np.add.at's element-by-element loop
    (about 4x faster for a 65 x 64 table and 512 tokens)."""
    picks = index[0] if type(index) is tuple and len(index) == 1 else index
    rows = result.shape[0] if result.ndim else 0
    fits = (
        type(picks) is np.ndarray and picks.dtype.kind in "iu" and result.dtype.kind == "f"
        and result.flags.c_contiguous and values.dtype == result.dtype
        and values.shape == picks.shape + result.shape[1:]
        and 0 < picks.size and picks.size * rows <= 1 << 22
    )
    if fits:
        flat = picks.reshape(-1)
        if flat.min() >= -rows and flat.max() < rows:  # else np.add.at raises IndexError
            flat = np.where(flat < 0, flat + rows, flat)
            onehot = (np.arange(rows)[:, None] == flat[None, :]).astype(result.dtype)
            table = result.reshape(rows, -1)
            table += onehot @ values.reshape(flat.size, -1)
            return
    np.add.at(result, index, values)


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
        ctx.dim = single_dim(dim, data.ndim)  # PyTorch's order: the dim, then the dtype
        _check_same_dtype(data, values, "src", "scatter_add")
        ctx.index, ctx.src_shape = index, values.shape
        if index.size == 0:
            return data.copy()  # nothing to add: PyTorch checks no shapes either
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
        if ctx.needs_input_grad[3] and ctx.index.size == 0:
            grad_src = Variable._make(np.zeros(ctx.src_shape, grad.data.dtype))
        elif ctx.needs_input_grad[3]:
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
            check_representable(value, out.dtype, "scatter")
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
    given = split_size_or_sections
    whole = isinstance(given, (int, np.integer)) and not isinstance(given, bool)
    if whole and given < 0:  # PyTorch checks the size before the dim
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={given}")
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
    single_dim(dim, len(numeric_shape(x, "scatter_add")))  # PyTorch checks the dim first
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
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(
            f"reduce argument must be either add or multiply; got reduce={reduce!r}. (For "
            f"other reductions PyTorch has scatter_reduce.)"
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
    if reduce is not None:
        # reduce="add" / "multiply" combine with what is there (PyTorch deprecates them).
        return ScatterReduce.apply(x, dim, index_array(index, "scatter"), src, value, reduce)
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
    if isinstance(x, Variable) and not x.is_text and isinstance(alpha, (int, float, np.number)):
        check_representable(alpha, np.dtype(x.dtype), "index_add")
    return IndexAdd.apply(x, dim, index_array(index, "index_add"), source, alpha)




# --------------------------------------------------------------------------- copying and filling
#
# Writing into a copy of x at given places, along dim=0 of a 2-d x:
#
#     index_copy:     out = x;  out[index[i]] = source[i]
#     index_fill:     out = x;  out[index[i]] = value
#     put:            out = x;  out.flatten()[index[k]] = source.flatten()[k]  (or +=)
#     masked_scatter: out = x;  out[mask] = the first mask.sum() elements of source, in order
#
# What was written over gets no gradient; what was written gets the gradient of its place.


def _wrapped(index: np.ndarray, size: int, op: str, error: type) -> np.ndarray:
    """Positions in [-size, size) as positions in [0, size), as PyTorch counts back here."""
    outside = (index < -size) | (index >= size)
    if outside.any():
        raise error(
            f"{op}(): index {index[outside].flat[0]} is out of bounds for dimension with size "
            f"{size}; positions must be in [{-size}, {size - 1}]."
        )
    return np.where(index < 0, index + size, index)


def _index_vector(index: np.ndarray, op: str) -> np.ndarray:
    if index.ndim > 1:
        raise IndexError(
            f"{op}(): Index should have dimension 1 or 0 (got {index.ndim}); flatten it with "
            f"index.flatten()."
        )
    return index.reshape(-1)


class IndexCopy(Function):
    """out = x, then out[..., index[i], ...] = source[..., i, ...] along dim;
    dx = grad with zeros at those slices, dsource = grad.index_select(dim, index)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, index: Any, source: Any) -> np.ndarray:
        # PyTorch's order: the dim, the index's shape, the dimensions, the dtypes.
        data, values = numeric(x, "index_copy"), array_of(source, "index_copy")
        cpu_only(data, "index_copy")
        cpu_only(values, "index_copy")
        ctx.dim = single_dim(dim, data.ndim)
        raw_index = index.data if isinstance(index, Variable) else np.asarray(index)
        _index_vector(raw_index, "index_copy_")
        if data.ndim > 0 and values.ndim > 0 and data.ndim != values.ndim:
            raise IndexError(
                f"index_copy_(): When source and destination are not scalars, their "
                f"dimensionality must match. Source dimensionality ({values.ndim}), "
                f"destination dimensionality ({data.ndim})."
            )
        ctx.index = _index_vector(index_array(index, "index_copy_"), "index_copy_")
        if values.dtype != data.dtype:
            raise RuntimeError(
                f"index_copy_(): self and source expected to have the same dtype, but got "
                f"(self) {data.dtype} and (source) {values.dtype}; convert it first: "
                f"source.to(x.dtype)."
            )
        out, values = np.atleast_1d(data).copy(), np.atleast_1d(values)
        if values.ndim != out.ndim or _without(values.shape, ctx.dim) != _without(
            out.shape, ctx.dim
        ):
            raise RuntimeError(
                f"index_copy_(): Source/destination tensor must have same slice shapes: self "
                f"has shape {list(data.shape)}, source {list(np.shape(source))}; they must "
                f"match in every dimension but {ctx.dim}."
            )
        if len(ctx.index) != values.shape[ctx.dim]:
            raise IndexError(
                f"index_copy_(): Number of indices ({len(ctx.index)}) should be equal to "
                f"source.size(dim) ({values.shape[ctx.dim]}); give one position per slice."
            )
        _check_range(ctx.index, out.shape[ctx.dim], ctx.dim, "index_copy_", IndexError)
        out[_along(ctx.dim, ctx.index)] = values
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_x = IndexFillAlong.apply(grad, ctx.dim, ctx.index, 0)
        if ctx.needs_input_grad[3]:
            grad_source = grad.index_select(ctx.dim, ctx.index)
        return grad_x, None, None, grad_source


class IndexFillAlong(Function):
    """out = x, then out[..., index[i], ...] = value along dim (a number or a 0-d Variable);
    dx = grad with zeros at those slices, dvalue = the sum of grad over them."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray, value: Any) -> Any:
        data = numeric(x, "index_fill")
        cpu_only(data, "index_fill")
        filled = np.asarray(numeric(value, "index_fill"))
        if filled.ndim != 0:  # checked first, as PyTorch does
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{filled.ndim} dimension(s); pass a number or a 0-d Variable."
            )
        ctx.dim = single_dim(dim, data.ndim)
        if index.ndim > 1:
            raise RuntimeError(
                f"index_fill_(): Index has to be a vector/scalar; got an index of shape "
                f"{index.shape}. Flatten it with index.flatten()."
            )
        out = np.atleast_1d(data).copy()
        size = out.shape[ctx.dim]
        ctx.index = _wrapped(index.reshape(-1), size, "index_fill_", IndexError)
        # The value takes x's dtype, as PyTorch casts it: 2.5 into an int64 x is 2.
        out[_along(ctx.dim, ctx.index)] = filled.astype(out.dtype)
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = grad_value = None
        if ctx.needs_input_grad[0]:
            grad_x = IndexFillAlong.apply(grad, ctx.dim, ctx.index, 0)
        if ctx.needs_input_grad[3]:  # each filled place once, however often index names it
            places = np.unique(ctx.index)
            grad_value = grad.reshape(grad.shape or (1,)).index_select(ctx.dim, places).sum()
        return grad_x, None, None, grad_value


class Put(Function):
    """out = x, then out.flatten()[index[k]] = source.flatten()[k] (+= when accumulate);
    dx = grad (with zeros at index unless accumulate), dsource = grad.flatten()[index]."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, index: np.ndarray, source: Any, accumulate: bool
    ) -> np.ndarray:
        data, values = numeric(x, "put_"), array_of(source, "put_")
        cpu_only(data, "put_")
        cpu_only(values, "put_")
        if values.dtype != data.dtype:
            raise RuntimeError(
                f"put_(): self and source expected to have the same dtype, but got self.dtype "
                f"= {data.dtype} and source.dtype = {values.dtype}; convert it first: "
                f"source.to(x.dtype)."
            )
        if values.size != index.size:
            raise IndexError(
                f"put_(): Expected source and index to have the same number of elements, but "
                f"got source.numel() = {values.size}, index.numel() = {index.size}."
            )
        outside = (index < -data.size) | (index >= data.size)
        if outside.any():
            raise IndexError(
                f"put_(): out of range: tried to access index {index[outside].flat[0]} on a "
                f"tensor of {data.size} elements; positions count over x.flatten(), from "
                f"{-data.size} to {data.size - 1}."
            )
        ctx.places = np.where(index < 0, index + data.size, index).reshape(-1)
        ctx.accumulate, ctx.source_shape = accumulate, values.shape
        flat = data.reshape(-1).copy()
        if accumulate:
            np.add.at(flat, ctx.places, values.reshape(-1))  # repeated places add up
        else:
            flat[ctx.places] = values.reshape(-1)
        return flat.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_x = grad
            if not ctx.accumulate:
                zeros = np.zeros(ctx.places.shape, grad.data.dtype)
                grad_x = Put.apply(grad, ctx.places, zeros, False)
        if ctx.needs_input_grad[2]:
            grad_source = grad.reshape(-1)[ctx.places].reshape(ctx.source_shape)
        return grad_x, None, grad_source, None


class MaskedScatter(Function):
    """out = x (broadcast with mask), then out[mask] = the first mask.sum() elements of source
    in order;  dx = grad with zeros where mask, dsource = grad[mask] then zeros."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, mask: np.ndarray, source: Any) -> np.ndarray:
        data, values = numeric(x, "masked_scatter"), array_of(source, "masked_scatter")
        cpu_only(data, "masked_scatter")
        cpu_only(values, "masked_scatter")
        if values.dtype != data.dtype:
            raise RuntimeError(
                f"masked_scatter: expected self and source to have same dtypes but got "
                f"{data.dtype} and {values.dtype}; convert it first: source.to(x.dtype)."
            )
        try:
            shape = np.broadcast_shapes(data.shape, mask.shape)
        except ValueError:
            raise RuntimeError(
                f"masked_scatter: the mask's shape {mask.shape} does not broadcast with the "
                f"input's {data.shape}; each dimension must match or be 1."
            ) from None
        ctx.mask = np.broadcast_to(mask, shape)
        count = int(np.count_nonzero(ctx.mask))
        if values.size < count:
            raise RuntimeError(
                f"masked_scatter: Number of elements of source < number of ones in mask "
                f"({values.size} < {count}); give a source of at least {count} elements."
            )
        ctx.source_shape, ctx.count = values.shape, count
        out = np.broadcast_to(data, shape).copy()
        out[ctx.mask] = values.reshape(-1)[:count]
        return out

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_x = grad.masked_fill(Variable._make(ctx.mask), 0)
        if ctx.needs_input_grad[2]:
            size = int(np.prod(ctx.source_shape))
            used = ScatterAdd.apply(grad[ctx.mask], slice(0, ctx.count), (size,))
            grad_source = used.reshape(ctx.source_shape)
        return grad_x, None, grad_source


class ScatterReduce(Function):
    """out = x, then out[index[i][j]][j] += src[i][j] (reduce="add") or *= (reduce="multiply"),
    or the number `value` in place of src. PyTorch has no derivative for it."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Variable, dim: int, index: np.ndarray, src: Any, value: Any,
        reduce: str,
    ) -> np.ndarray:
        data = numeric(x, "scatter")
        cpu_only(data, "scatter")
        axis = single_dim(dim, data.ndim)
        out, index = np.atleast_1d(data).copy(), np.atleast_1d(index)
        _check_index_shape(index, out.shape, axis, "self", "scatter")
        _check_range(index, out.shape[axis], axis, "scatter", RuntimeError)
        if src is None:
            # The number takes x's dtype first, as PyTorch casts it (2.5 is 2 for int64).
            values = np.full(index.shape, value).astype(out.dtype)
        else:
            values = array_of(src, "scatter")
            cpu_only(values, "scatter")
            _check_same_dtype(data, values, "src", "scatter")
            values = np.atleast_1d(values)
            _check_index_shape(index, values.shape, None, "src", "scatter")
            values = values[tuple(slice(0, size) for size in index.shape)]
        combine = np.add if reduce == "add" else np.multiply
        combine.at(out, _coordinates(index, axis), values)  # repeated places combine
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        raise RuntimeError(
            "derivative for scatter with reduce= is not implemented (nor in PyTorch). For a "
            "differentiable sum use scatter_add; for a product, scatter the factors and "
            "multiply."
        )


@register("index_copy", inplace=True)
def index_copy(x: Variable, dim: int, index: Any, source: Any) -> Variable:
    """A copy of x with slice index[i] along dim replaced by source's slice i; see IndexCopy."""
    if not isinstance(source, (Variable, np.ndarray)):
        raise TypeError(
            f"index_copy(): argument 'source' must be a Variable; got {type(source).__name__}."
        )
    if not isinstance(index, (Variable, np.ndarray)):
        index_array(index, "index_copy_")  # PyTorch's TypeError for an index of another kind
    return IndexCopy.apply(x, dim, index, source)


@register("index_fill", inplace=True)
def index_fill(x: Variable, dim: int, index: Any, value: Any) -> Variable:
    """A copy of x with the slices at `index` along dim set to `value` (a number or a 0-d
    Variable); negative positions count from the end. See IndexFillAlong."""
    is_number = isinstance(value, (numbers.Number, np.number)) and not isinstance(value, complex)
    if not is_number and not (isinstance(value, Variable) and not value.is_text):
        raise TypeError(
            f"index_fill(): argument 'value' must be a number or a 0-d Variable; got "
            f"{type(value).__name__}."
        )
    if is_number and isinstance(x, Variable) and not x.is_text:
        check_representable(value, np.dtype(x.dtype), "index_fill")
    return IndexFillAlong.apply(x, dim, index_array(index, "index_fill_"), value)


@register("put", inplace=True)
def put(x: Variable, index: Any, source: Any, accumulate: bool = False) -> Variable:
    """A copy of x with x.flatten()[index[k]] = source.flatten()[k] (added when
    accumulate=True, so repeated positions sum); see Put."""
    if not isinstance(source, (Variable, np.ndarray)):
        raise TypeError(
            f"put(): argument 'source' must be a Variable; got {type(source).__name__}."
        )
    if not isinstance(accumulate, (bool, np.bool_)):
        raise TypeError(f"put(): argument 'accumulate' must be a bool; got {accumulate!r}.")
    return Put.apply(x, index_array(index, "put_"), source, bool(accumulate))


@register("masked_scatter", inplace=True)
def masked_scatter(x: Variable, mask: Any, source: Any) -> Variable:
    """A copy of x with the places where `mask` is True filled, in order, from source's
    elements; see MaskedScatter."""
    if isinstance(mask, Variable) and not mask.is_text:
        mask_data = mask.detach().cpu().numpy()
    elif isinstance(mask, np.ndarray):
        mask_data = mask
    else:
        raise TypeError(
            f"masked_scatter(): mask must be a bool Variable; got {type(mask).__name__}."
        )
    if mask_data.dtype != np.bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{mask_data.dtype}; make one with a comparison, e.g. x > 0."
        )
    if not isinstance(source, (Variable, np.ndarray)):
        raise TypeError(
            f"masked_scatter(): argument 'source' must be a Variable; got {type(source).__name__}."
        )
    return MaskedScatter.apply(x, mask_data, source)


@register("take_along_dim")
def take_along_dim(x: Variable, indices: Any, dim: int | None = None) -> Variable:
    """x's values at `indices` along dim, indices and x broadcast in the other dims (gather
    with broadcasting); dim=None picks from x.flatten(). Its gradient is gather's."""
    if not isinstance(indices, (Variable, np.ndarray)):
        raise TypeError(
            f"take_along_dim(): argument 'indices' must be a Variable, not "
            f"{type(indices).__name__}; make one with minigrad.tensor({indices!r:.30})."
        )
    positions = index_array(indices, "take_along_dim")
    shape = numeric_shape(x, "take_along_dim")
    if dim is None:
        flat = positions.reshape(-1)
        size = int(np.prod(shape))
        _check_range(flat, size, 0, "take_along_dim", RuntimeError)
        return x.reshape(-1).gather(0, Variable(flat))
    axis = single_dim(dim, len(shape))
    if positions.ndim != len(shape):
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(shape)} dimensions for input, and {positions.ndim} "
            f"dimensions for indices."
        )
    if not shape:
        return x.reshape(1).gather(0, Variable(positions.reshape(1))).reshape(())
    size = shape[axis]
    positions = _wrapped(positions, size, "take_along_dim", RuntimeError)
    try:
        outer = np.broadcast_shapes(_lengths_but(shape, axis), _lengths_but(positions.shape, axis))
    except ValueError:
        raise RuntimeError(
            f"take_along_dim(): input of shape {list(shape)} and indices of shape "
            f"{list(positions.shape)} must broadcast in every dimension but {axis} (each size "
            f"equal, or 1)."
        ) from None
    x_shape, index_shape = list(outer), list(outer)
    x_shape[axis], index_shape[axis] = size, positions.shape[axis]
    expanded = x.expand(*x_shape) if tuple(x_shape) != shape else x
    spread = np.broadcast_to(positions, tuple(index_shape))
    return expanded.gather(axis, Variable(np.ascontiguousarray(spread)))


def _lengths_but(shape: tuple, axis: int) -> tuple:
    """shape with a 1 at axis: the dims that broadcast in take_along_dim."""
    return shape[:axis] + (1,) + shape[axis + 1 :]
