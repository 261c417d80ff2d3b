"""Reductions along an axis (sum, max, min, argmax) with a tree in shared memory.

Reducing axis k of x leaves one output element per combination of the other indices:
``out[r] = x[r, 0] (+) x[r, 1] (+) ... (+) x[r, n-1]`` where (+) is + for sum and the
larger of two for max. Any associative (+) can be computed as a tree:

    step 1:  x0+x4   x1+x5   x2+x6   x3+x7      (4 threads, each adds a pair)
    step 2:  (x0+x4)+(x2+x6)   (x1+x5)+(x3+x7)  (2 threads)
    step 3:  everything                          (1 thread)

log2(threads) steps instead of n - 1 additions in a row.

Thread layout of `make_reduce_kernel`: one block per output element. The block's T
threads (a power of two, at most BLOCK) first walk the axis with stride T, each folding
its share into a register (so any length works, not only powers of two); then they write
their T partial results to shared memory and run the tree, with ``cuda.syncthreads()``
between steps so nobody reads a partial result before it is written. Thread 0 writes
the block's result.

When the reduced axis is not the fastest-moving one and there are many outputs (a bias
gradient: sum over the batch, axis 0), the block's threads would read memory far apart.
There one thread per output element walking the axis alone reads neighbouring addresses
across a warp (`make_columns_kernel`); both strategies give the same numbers.

Sum over every element uses a grid-stride loop first (`make_partials_kernel`): many
blocks, each thread folding elements i, i + gridsize, i + 2 gridsize, ..., one partial
result per block, then one block reduces the partials.
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from numba import cuda  # module level: the simulator finds `cuda` in the kernel's globals

from . import elementwise
from .buffers import StridedBuffer
from .elementwise import maximum, minimum, position
from .launch import launch, launch_1d
from .layout import broadcast_shapes, coalesce, normalize_axes, normalize_shape

# The most threads one reduction block uses: a power of two, so the tree halves evenly.
# Kernels take it as a factory argument, not as this global: numba freezes globals at
# compile time and the on-disk cache does not notice when they change.
BLOCK = 256


@cuda.jit(device=True)
def plus(a, b):
    return a + b


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The value that changes nothing: 0 for sum, the lowest value for max."""
    if kind == "sum":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(-np.inf if kind == "max" else np.inf)
    if dtype.kind == "b":
        return np.bool_(kind == "min")
    info = np.iinfo(dtype)
    return dtype.type(info.min if kind == "max" else info.max)


_COMBINE = {"sum": plus, "max": maximum, "min": minimum}


def _accumulator_dtype(kind: str, dtype: np.dtype) -> np.dtype:
    # As np.sum: bools and small integers add up in the platform integer.
    if kind == "sum" and dtype.kind in "bi":
        return np.dtype(np.int64)
    if kind == "sum" and dtype.kind == "u":
        return np.dtype(np.uint64)
    return dtype


@functools.cache
def make_reduce_kernel(kind: str, dtype: np.dtype, block: int) -> Any:
    """One block per output element; a tree in shared memory (see the module docstring)."""
    combine = _COMBINE[kind]
    identity = _identity(kind, dtype)
    shared_type = numba.from_dtype(dtype)

    # cache=True keeps the compiled kernel on disk between runs (the simulator ignores it).
    @cuda.jit(cache=True)
    def reduce_kernel(out, x, x_offset, shape, strides, length, step):
        o = cuda.blockIdx.x  # the output element this block computes
        t = cuda.threadIdx.x
        start = position(o, shape, strides, x_offset)  # where its row starts in x
        # 1. Each thread folds elements t, t + T, t + 2T, ... of the row.
        acc = identity
        for k in range(t, length, cuda.blockDim.x):
            acc = combine(acc, x[start + k * step])
        # 2. The block's T partial results meet in shared memory and halve each step.
        partial = cuda.shared.array(block, shared_type)  # one slot per thread, T <= block
        partial[t] = acc
        cuda.syncthreads()
        half = cuda.blockDim.x // 2
        while half > 0:
            if t < half:
                partial[t] = combine(partial[t], partial[t + half])
            cuda.syncthreads()  # every thread, inside the if or not, must reach it
            half //= 2
        if t == 0:
            out[o] = partial[0]

    return reduce_kernel


@functools.cache
def make_columns_kernel(kind: str, dtype: np.dtype) -> Any:
    """One thread per output element, walking the reduced axis alone."""
    combine = _COMBINE[kind]
    identity = _identity(kind, dtype)

    @cuda.jit(cache=True)
    def columns_kernel(n, out, x, x_offset, shape, strides, length, step):
        o = cuda.grid(1)
        if o < n:
            start = position(o, shape, strides, x_offset)
            acc = identity
            for k in range(length):
                acc = combine(acc, x[start + k * step])
            out[o] = acc

    return columns_kernel


@functools.cache
def make_partials_kernel(kind: str, dtype: np.dtype, block: int) -> Any:
    """Grid-stride loop over a contiguous range, then the tree: one result per block."""
    combine = _COMBINE[kind]
    identity = _identity(kind, dtype)
    shared_type = numba.from_dtype(dtype)

    @cuda.jit(cache=True)
    def partials_kernel(out, x, x_offset, n):
        t = cuda.threadIdx.x
        acc = identity
        for k in range(cuda.grid(1), n, cuda.gridsize(1)):
            acc = combine(acc, x[x_offset + k])
        partial = cuda.shared.array(block, shared_type)
        partial[t] = acc
        cuda.syncthreads()
        half = cuda.blockDim.x // 2
        while half > 0:
            if t < half:
                partial[t] = combine(partial[t], partial[t + half])
            cuda.syncthreads()
            half //= 2
        if t == 0:
            out[cuda.blockIdx.x] = partial[0]

    return partials_kernel


@cuda.jit(device=True)
def _first_larger(value, index, other, other_index):
    """Does (other, other_index) beat (value, index) for argmax? nan wins; ties: lower index."""
    if value != value:
        return other != other and other_index < index
    if other != other:
        return True
    return other > value or (other == value and other_index < index)


@functools.cache
def make_argmax_kernel(dtype: np.dtype, block: int) -> Any:
    """argmax along an axis: the tree of `make_reduce_kernel`, carrying (value, index)."""
    lowest = _identity("max", dtype)
    value_type = numba.from_dtype(dtype)

    @cuda.jit(cache=True)
    def argmax_kernel(out, x, x_offset, shape, strides, length, step):
        o = cuda.blockIdx.x
        t = cuda.threadIdx.x
        start = position(o, shape, strides, x_offset)
        best, best_index = lowest, length  # index `length` loses every tie
        for k in range(t, length, cuda.blockDim.x):
            value = x[start + k * step]
            if _first_larger(best, best_index, value, k):
                best, best_index = value, k
        values = cuda.shared.array(block, value_type)
        indices = cuda.shared.array(block, numba.int64)
        values[t] = best
        indices[t] = best_index
        cuda.syncthreads()
        half = cuda.blockDim.x // 2
        while half > 0:
            if t < half and _first_larger(
                values[t], indices[t], values[t + half], indices[t + half]
            ):
                values[t] = values[t + half]
                indices[t] = indices[t + half]
            cuda.syncthreads()
            half //= 2
        if t == 0:
            out[o] = indices[0]

    return argmax_kernel


def _threads_for(length: int, block: int) -> int:
    """The smallest power of two >= length, at most `block`: no idle threads on short rows."""
    threads = 1
    while threads < min(length, block):
        threads *= 2
    return threads


def reduce_axis(
    x: StridedBuffer, axis: int, kind: str, strategy: str | None = None
) -> StridedBuffer:
    """Reduce one axis of x (dropped from the result). kind: "sum", "max", "min", "argmax".

    strategy "tree" (one block per output) or "columns" (one thread per output); None
    picks: the tree when the axis is contiguous in memory or the outputs are few.
    """
    length, step = x.shape[axis], x.element_strides[axis]
    rest_shape = x.shape[:axis] + x.shape[axis + 1 :]
    rest_strides = x.element_strides[:axis] + x.element_strides[axis + 1 :]
    acc = np.dtype(np.int64) if kind == "argmax" else _accumulator_dtype(kind, x.dtype)
    out = x.new_empty(rest_shape, acc)
    if out.size == 0:
        return out
    if length == 0:
        if kind != "sum":
            raise ValueError(
                f"zero-size array to reduction operation {kind} which has no identity "
                f"(axis {axis} of shape {x.shape} is empty)"
            )
        return elementwise.copy_into(out, 0)
    shape, (strides,) = coalesce(rest_shape, rest_strides)
    # Every kernel here reads row r of x from position(r, shape, strides, offset) on.
    args = (out.buffer, x.buffer, x.offset, shape, strides, length, step)
    if strategy is None:
        strategy = "tree" if abs(step) == 1 or out.size < 1024 else "columns"
    block = BLOCK
    if kind == "argmax":
        launch(make_argmax_kernel(x.dtype, block), out.size, _threads_for(length, block), *args)
    elif strategy == "tree":
        launch(make_reduce_kernel(kind, acc, block), out.size, _threads_for(length, block), *args)
    elif strategy == "columns":
        launch_1d(make_columns_kernel(kind, acc), out.size, *args)
    else:
        raise ValueError(f"strategy must be 'tree' or 'columns'; got {strategy!r}.")
    return out


def _reshaped(x: StridedBuffer, shape: tuple) -> StridedBuffer:
    """x read as `shape` (the same number of elements): a view of x, or of a contiguous copy."""
    source = x if x.is_contiguous else elementwise.unary("identity", x)
    return source.with_layout(shape)


def reduce_all(x: StridedBuffer, kind: str) -> StridedBuffer:
    """Reduce every element of x to a 0-d array (two passes when x is large)."""
    acc = _accumulator_dtype(kind, x.dtype)
    if x.size == 0:
        if kind != "sum":
            raise ValueError(f"zero-size array to reduction operation {kind} which has no identity")
        return elementwise.copy_into(x.new_empty((), acc), 0)
    flat = _reshaped(x, (x.size,))
    block = BLOCK
    if x.size > 4 * block and kind != "argmax":
        blocks = min((x.size + block - 1) // block, 1024)
        partials = x.new_empty((blocks,), acc)
        kernel = make_partials_kernel(kind, acc, block)
        launch(kernel, blocks, block, partials.buffer, flat.buffer, flat.offset, x.size)
        flat = partials
    return _reshaped(reduce_axis(flat, 0, kind), ())


def _reduce(x: StridedBuffer, axis: Any, keepdims: bool, kind: str) -> StridedBuffer:
    if not isinstance(x, StridedBuffer):
        raise TypeError(f"{kind} expects a DeviceArray; got {type(x).__name__}.")
    axes = normalize_axes(axis, x.ndim)
    if len(axes) == x.ndim:
        if x.ndim:
            result = reduce_all(x, kind)
        else:  # a 0-d x is its own reduction, copied to the accumulator's dtype
            total = x.new_empty((), _accumulator_dtype(kind, x.dtype))
            result = elementwise.copy_into(total, x)
    else:
        result = x
        for a in reversed(axes):  # highest first, so the lower axis numbers stay valid
            result = reduce_axis(result, a, kind)
    if keepdims:
        result = _reshaped(result, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return result


def sum_along(x: StridedBuffer, axis: Any = None, keepdims: bool = False) -> StridedBuffer:
    """np.sum(x, axis, keepdims=keepdims); axis None, an int or a tuple of ints."""
    return _reduce(x, axis, keepdims, "sum")


def max_along(x: StridedBuffer, axis: Any = None, keepdims: bool = False) -> StridedBuffer:
    """np.max(x, axis, keepdims=keepdims); nan wins, as in NumPy."""
    return _reduce(x, axis, keepdims, "max")


def min_along(x: StridedBuffer, axis: Any = None, keepdims: bool = False) -> StridedBuffer:
    return _reduce(x, axis, keepdims, "min")


def mean_along(x: StridedBuffer, axis: Any = None, keepdims: bool = False) -> StridedBuffer:
    """np.mean: the sum divided by the number of elements reduced (float64 for integers)."""
    total = sum_along(x, axis, keepdims)
    count = 1
    for a in normalize_axes(axis, x.ndim):
        count *= x.shape[a]
    return elementwise.binary("div", total, count)


def argmax_along(x: StridedBuffer, axis: Any = None, keepdims: bool = False) -> StridedBuffer:
    """np.argmax: the index of the first largest element (of the flattened array if axis None)."""
    if axis is None:
        result = _reshaped(reduce_axis(_reshaped(x, (x.size,)), 0, "argmax"), ())
        return _reshaped(result, (1,) * x.ndim) if keepdims else result
    (a,) = normalize_axes(axis, x.ndim)
    result = reduce_axis(x, a, "argmax")
    if keepdims:
        result = _reshaped(result, tuple(1 if d == a else n for d, n in enumerate(x.shape)))
    return result


def sum_to_shape(x: StridedBuffer, shape: Any) -> StridedBuffer:
    """Sum a broadcast gradient back to the shape of the input it was broadcast from.

    If ``a`` of `shape` was broadcast to ``x.shape`` in forward, every element of ``a`` was
    used once per copy, so its gradient is the sum over the copies: over the leading
    dimensions ``a`` lacked and over the dimensions where ``a`` had size 1.
    """
    shape = normalize_shape(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    try:
        fits = lead >= 0 and broadcast_shapes(shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"sum_to_shape: shape {shape} does not broadcast to the gradient's shape "
            f"{x.shape}, so the gradient cannot be summed back to it."
        )
    stretched = tuple(lead + d for d, n in enumerate(shape) if n == 1 and x.shape[lead + d] != 1)
    summed = sum_along(x, tuple(range(lead)) + stretched, keepdims=True)
    return _reshaped(summed, shape)
