"""Indexing: reading x[index], writing x[index] = value, and copying into a Variable.

The backward of reading is writing the gradient back where it came from (ScatterAdd),
and the backward of ScatterAdd is reading again, so second derivatives work too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import numeric


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
