"""Replay rules: the NumPy call a built-in Function's forward makes, bound to fixed buffers.

A rule gets the replay's inputs (arrays, or the constants the trace saw) and the arrays the
trace saw come out, and returns (run, outputs, extras): `run()` recomputes the outputs in
place with `out=` (the same NumPy call as the forward, so the same bits), or is None when
there is nothing to run. A rule returns None when a call is not its usual case; the
replay then runs the Function's own forward (minigrad/compiler/replay.py).

Views (transpose, reshape, expand, ...) need no rule: a view of a fixed buffer stays a view
of it, so it is made once when the replay is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.ops.arithmetic import Add, Div, Mul, Neg, Pow, Sub
from minigrad.ops.comparison import Compare
from minigrad.ops.elementwise import Exp, Log, Relu, ReluBackward, Sigmoid, Tanh, Where
from minigrad.ops.indexing import Index, ScatterAdd
from minigrad.ops.linalg import Norm
from minigrad.ops.matmul import MatMul
from minigrad.ops.operand import normalize_dims, single_dim
from minigrad.ops.reduction import Mean, Sum
from minigrad.ops.shape import Reshape, Stack, SumToSize
from minigrad.ops.softmax import LogSoftmax

Rule = Callable[[list, dict, list, list], Any]
# np.sum and np.max are Python wrappers around these; calling them directly (arguments by
# position: array, axis, dtype, out, keepdims) is the same computation, a microsecond sooner.
_add_reduce = np.add.reduce
_maximum_reduce = np.maximum.reduce
_NUMBERS = (int, float, np.generic)


def _buffer_like(array: np.ndarray) -> np.ndarray:
    """A buffer of the trace's shape and dtype, filled with the trace's values."""
    return np.array(array, copy=True)


def _ufunc_rule(ufunc: np.ufunc) -> Rule:
    def rule(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
        if kwargs or extras or len(inputs) != ufunc.nin:
            return None
        for value in inputs:
            if not (type(value) is np.ndarray or isinstance(value, _NUMBERS)):
                return None
        operands = tuple(inputs)

        def writing_into(out: np.ndarray) -> Callable[[], None]:
            arguments = (*operands, out)  # out passed by position: NumPy parses it faster

            def run() -> None:
                ufunc(*arguments)

            # The replay may redirect an elementwise step into another buffer (p -= ...).
            run.writing_into = writing_into
            return run

        out = _buffer_like(outputs[0])
        return writing_into(out), [out], []

    rule.ufunc = ufunc  # the replay may feed it a float argument through a 0-d buffer
    return rule


def _matmul(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, b = inputs
    if kwargs or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    out = _buffer_like(outputs[0])
    if a.ndim > 2 and b.ndim == 2:
        # As MatMul.forward: one product of a's rows (see _folded in ops/matmul.py), into
        # a 2-D view of the buffer; a's rows copied first when a is not contiguous.
        rows = np.empty((a.size // a.shape[-1], a.shape[-1]), a.dtype)
        out_rows = out.reshape(-1, out.shape[-1])
        if a.flags.c_contiguous:
            rows = a.reshape(rows.shape)

            def run() -> None:
                np.matmul(rows, b, out_rows)

        else:

            def run() -> None:
                np.copyto(rows.reshape(a.shape), a)
                np.matmul(rows, b, out_rows)

        return run, [out], []

    def run() -> None:
        np.matmul(a, b, out)

    return run, [out], []


def _relu(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    (a,) = inputs
    if kwargs or extras or type(a) is not np.ndarray:
        return None
    out = _buffer_like(outputs[0])

    def run() -> None:
        np.maximum(a, 0, out=out)

    return run, [out], []


def _relu_backward(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    grad, y = inputs
    if kwargs or len(extras) > 1 or type(grad) is not np.ndarray or type(y) is not np.ndarray:
        return None
    out = _buffer_like(outputs[0])
    mask = _buffer_like(extras[0]) if extras else np.empty(y.shape, bool)

    def run() -> None:
        np.greater(y, 0, mask)  # the mask ReluBackward saves for a double backward
        np.multiply(grad, mask, out)

    return run, [out], [mask] if extras else []


def _reduction(inputs: list, kwargs: dict, extras: list) -> tuple | None:
    """(array, axes, keepdim) of a Sum or Mean call `x.sum(dim, keepdim)`; None when the
    call is not that usual case."""
    if kwargs or extras or type(inputs[0]) is not np.ndarray or inputs[0].ndim == 0:
        return None
    a, dim, keepdim = inputs[0], None, False
    if len(inputs) > 1:
        dim = inputs[1]
    if len(inputs) > 2:
        keepdim = inputs[2]
    if len(inputs) > 3 or not isinstance(keepdim, bool):
        return None
    return a, normalize_dims(dim, a.ndim), keepdim


def _sum(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    found = _reduction(inputs, kwargs, extras)
    if found is None:
        return None
    a, axes, keepdim = found
    out = _buffer_like(outputs[0])

    def run() -> None:
        _add_reduce(a, axes, None, out, keepdim)

    return run, [out], []


def _mean(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    found = _reduction(inputs, kwargs, extras)
    # float16 means are summed in float32 and rounded once; out= would round twice.
    if found is None or found[0].dtype.kind != "f" or found[0].itemsize < 4:
        return None
    a, axes, keepdim = found
    out = _buffer_like(outputs[0])

    def run() -> None:
        np.mean(a, axes, None, out, keepdim)

    return run, [out], []


def _integer_arrays(index: Any) -> bool:
    """Whether `index` is a tuple of integer arrays (rows[np.arange(n), labels])."""
    if type(index) is not tuple or not index:
        return False
    return all(type(part) is np.ndarray and part.dtype.kind in "iu" for part in index)


def _index(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, index = inputs
    if kwargs or extras or type(a) is not np.ndarray or not _integer_arrays(index):
        return None
    out = _buffer_like(outputs[0])

    def run() -> None:
        np.copyto(out, a[index])  # integer arrays: NumPy copies (no view to make once)

    return run, [out], []


def _scatter_add(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    grad, index, shape = inputs
    if kwargs or extras or type(grad) is not np.ndarray or not _integer_arrays(index):
        return None
    out = _buffer_like(outputs[0])

    def run() -> None:
        # As ScatterAdd.forward: zeros, then add.at (an index may repeat).
        out.fill(0)
        np.add.at(out, index, grad)

    return run, [out], []


_COMPARISONS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def _operands(*values: Any) -> bool:
    """Whether each value is an array or a number (what a NumPy call can take as it is)."""
    return all(type(value) is np.ndarray or isinstance(value, _NUMBERS) for value in values)


def _compare(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, b, name = inputs
    if kwargs or extras or type(a) is not np.ndarray or not _operands(b):
        return None
    ufunc = _COMPARISONS[name]  # what Python's operator does on an array
    out = _buffer_like(outputs[0])

    def run() -> None:
        ufunc(a, b, out)

    return run, [out], []


def _where(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    condition, x, y = inputs
    if kwargs or len(extras) > 1 or not _operands(x, y):
        return None
    if type(condition) is not np.ndarray or condition.dtype != np.bool_:
        return None
    out = _buffer_like(outputs[0])

    def run() -> None:
        np.copyto(out, np.where(condition, x, y))  # Where.forward's call

    # The condition Where's ctx keeps for backward (when recorded) is the condition itself.
    return run, [out], [condition] if extras else []


def _norm(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, p, dims, keepdim = inputs
    if kwargs or extras or type(a) is not np.ndarray or p != 2 or not isinstance(keepdim, bool):
        return None
    squares = np.empty(a.shape, a.dtype)
    out = _buffer_like(outputs[0])

    def run() -> None:
        # As Norm.forward for p = 2: sqrt(sum(|x| * |x|)).
        np.absolute(a, squares)
        np.multiply(squares, squares, squares)
        _add_reduce(squares, dims, None, out, keepdim)
        np.sqrt(out, out)

    return run, [out], []


def _reshape_copy(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    """A reshape that must copy (of a transposed gradient, say); views are made once."""
    a = inputs[0]
    if kwargs or extras or type(a) is not np.ndarray:
        return None
    out = _buffer_like(outputs[0])
    if np.shares_memory(a.reshape(out.shape), a):
        return None  # a view: the replay makes it once
    shape = out.shape

    def run() -> None:
        np.copyto(out, a.reshape(shape))

    return run, [out], []


def _stack(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    dim, arrays = inputs[0], inputs[1:]
    if kwargs or extras or not arrays or not all(type(a) is np.ndarray for a in arrays):
        return None
    axis = single_dim(dim, arrays[0].ndim + 1)
    out = _buffer_like(outputs[0])

    def run() -> None:
        np.stack(arrays, axis, out)

    return run, [out], []


def _sigmoid(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    (a,) = inputs
    if kwargs or extras or type(a) is not np.ndarray:
        return None
    out = _buffer_like(outputs[0])
    half = np.empty(a.shape, out.dtype)

    def run() -> None:
        # As Sigmoid.forward: 0.5 * (1 + tanh(0.5 * x)).
        np.multiply(0.5, a, half)
        np.tanh(half, half)
        np.add(1, half, half)
        np.multiply(0.5, half, out)

    return run, [out], []


def _sum_to_size(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, shape = inputs
    if kwargs or extras or type(a) is not np.ndarray:
        return None
    shape = tuple(shape)
    # As SumToSize.forward: sum the leading dimensions away, then the size-1 ones.
    leading = tuple(range(a.ndim - len(shape)))
    summed_shape = a.shape[len(leading) :]
    ones = tuple(
        axis for axis, size in enumerate(shape) if size == 1 and summed_shape[axis] != 1
    )
    out = _buffer_like(outputs[0])
    if leading and ones:
        middle = np.empty(summed_shape, out.dtype)

        def run() -> None:
            _add_reduce(a, leading, None, middle, False)
            _add_reduce(middle, ones, None, out, True)

    elif leading or ones:
        axes, keep = (leading, False) if leading else (ones, True)

        def run() -> None:
            _add_reduce(a, axes, None, out, keep)

    else:
        return None
    return run, [out], []


def _log_softmax(inputs: list, kwargs: dict, outputs: list, extras: list) -> Any:
    a, dim = inputs
    if kwargs or extras or type(a) is not np.ndarray or a.ndim == 0:
        return None
    axis = single_dim(dim, a.ndim)
    out = _buffer_like(outputs[0])
    kept = list(a.shape)
    kept[axis] = 1
    largest = np.empty(kept, a.dtype)
    shifted = np.empty(a.shape, out.dtype)
    exps = np.empty(a.shape, out.dtype)
    total = np.empty(kept, out.dtype)

    def run() -> None:
        # As LogSoftmax.forward: shifted - log(sum(exp(shifted))), shifted = x - max(x).
        _maximum_reduce(a, axis, None, largest, True)
        np.subtract(a, largest, shifted)
        np.exp(shifted, exps)
        _add_reduce(exps, axis, None, total, True)
        np.log(total, total)
        np.subtract(shifted, total, out)

    return run, [out], []


RULES: dict[type, Rule] = {
    Add: _ufunc_rule(np.add),
    Sub: _ufunc_rule(np.subtract),
    Mul: _ufunc_rule(np.multiply),
    Div: _ufunc_rule(np.true_divide),
    Neg: _ufunc_rule(np.negative),
    Pow: _ufunc_rule(np.power),
    Exp: _ufunc_rule(np.exp),
    Log: _ufunc_rule(np.log),
    Tanh: _ufunc_rule(np.tanh),
    Sigmoid: _sigmoid,
    MatMul: _matmul,
    Relu: _relu,
    ReluBackward: _relu_backward,
    Sum: _sum,
    Mean: _mean,
    Compare: _compare,
    Where: _where,
    Norm: _norm,
    Reshape: _reshape_copy,
    Stack: _stack,
    Index: _index,
    ScatterAdd: _scatter_add,
    SumToSize: _sum_to_size,
    LogSoftmax: _log_softmax,
}
