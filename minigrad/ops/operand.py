"""How the built-in ops read their operands: Variables, NumPy arrays, numbers, lists."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.fast_path import PLAIN
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.op_error import OpError


def numeric_shape(value: Any, op: str) -> tuple:
    """The shape of numeric(value, op): see numeric_metadata."""
    return np.shape(numeric_metadata(value, op))


def numeric_metadata(value: Any, op: str) -> Any:
    """numeric(value, op), for code that reads only its shape and dtype, never its values:
    minigrad.compile must not take that for NumPy work on the values (a reshape, a norm's
    dtype check)."""
    if type(value) in PLAIN and type(value._data) is np.ndarray:
        return value._data
    return numeric(value, op)


def numeric(value: Any, op: str) -> Any:
    """The NumPy value behind an operand; Python numbers stay numbers so dtypes don't widen."""
    # outside a forward: minigrad.compile cannot replay it
    state.listener.raw_read(op)
    if type(value) in PLAIN and type(value._data) is np.ndarray:
        return value._data
    if isinstance(value, Variable):
        if isinstance(value.data, str):
            raise TypeError(
                f"{op} needs numbers, but got a text Variable"
                f"{f' (role {value.role!r})' if value.role else ''}; text "
                f"Variables support + (concatenation) and the functions in minigrad.text."
            )
        return value._data
    if isinstance(value, np.ndarray) and value.dtype.kind not in "biufc":
        raise TypeError(
            f"{op} needs numbers, but got a NumPy array of dtype {value.dtype}; convert it "
            f"to numbers first."
        )
    if isinstance(value, (np.ndarray, np.generic, int, float, complex)) or is_on_cuda(value):
        return value
    if isinstance(value, (list, tuple)):
        if any(isinstance(item, Variable) for item in value):
            # A tuple of Variables where one belongs is almost always a missed unpacking
            # (x = ctx.saved_tensors); NumPy would stack it into numbers silently.
            raise TypeError(
                f"{op} expects a Variable, a NumPy array or a number; got {type(value).__name__} "
                f"of {len(value)} Variable(s). Unpack it ((x,) = ...) or join them with "
                f"minigrad.stack(...)."
            )
        try:
            array = np.asarray(value)
        except ValueError:
            raise TypeError(
                f"{op} cannot read a ragged {type(value).__name__} (rows of different "
                f"lengths) as numbers; give every row the same length."
            ) from None
        if array.dtype.kind in "biufc":
            return array
    if isinstance(value, str):
        raise TypeError(
            f"{op} cannot mix text and numbers: got the str {value[:40]!r}. Wrap text in a "
            f"text Variable and use + to concatenate."
        )
    raise TypeError(
        f"{op} expects a Variable, a NumPy array or a number; got {type(value).__name__}."
    )


def array_of(value: Any, op: str) -> Any:
    """The operand as an array: a NumPy array, or the GPU array of a Variable on cuda."""
    data = numeric(value, op)
    if type(data) is np.ndarray:
        return data
    return data if is_on_cuda(data) else np.asarray(data)


def shape_of(value: Any) -> tuple:
    return np.shape(value.data if isinstance(value, Variable) else value)


def single_dim(dim: Any, ndim: int) -> int:
    """One dimension as a non-negative axis (negative dims count from the end)."""
    if type(dim) is int and -ndim <= dim < ndim:  # the usual case, checked cheaply
        return dim + ndim if dim < 0 else dim
    if isinstance(dim, Variable) and not dim.is_text and dim.ndim == 0 and dim.dtype.kind in "iu":
        dim = dim.item()  # a 0-d integer Variable stands for its int, as in PyTorch
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"dim must be an int; got {dim!r} ({type(dim).__name__}).")
    # A 0-d value still accepts dim 0 or -1, as in PyTorch.
    low, high = -max(ndim, 1), max(ndim, 1) - 1
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})."
        )
    return int(dim) % max(ndim, 1)


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """dim as a sorted tuple of non-negative axes; None, [] or () means every axis (as the
    reductions of PyTorch read an empty dim list: t.sum([]) sums everything)."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if ndim == 0:
        # A 0-d value accepts dim 0 or -1 (as in PyTorch), and has no axis to reduce.
        normalize_dims(dim, 1)
        return ()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    normalized = []
    for d in dims:
        normalized.append(single_dim(d, ndim))
    if len(set(normalized)) != len(normalized):
        raise OpError(f"dim {dim} names the same dimension twice.")
    return tuple(sorted(normalized))


def cpu_only(data: Any, op: str) -> None:
    """Refuse data on cuda for an op the kernels cannot run yet (no silent host copy)."""
    if is_on_cuda(data):
        raise NotImplementedError(
            f"{op} is not supported on cuda yet; move the Variable to the CPU with .cpu() "
            f"(and back with .cuda() after)."
        )


# ------------------------------------------------------------------ saving operands
#
# PyTorch's save_for_backward takes only Variables (and None); a binary op given a Python
# number (x * 2) keeps that number on ctx, as PyTorch's nodes keep a scalar operand.


def save_operands(ctx: Any, a: Any, b: Any) -> None:
    """ctx.save_for_backward(a, b), with a Python number kept on ctx instead."""
    if isinstance(a, (Variable, np.ndarray)) and isinstance(b, (Variable, np.ndarray)):
        ctx.save_for_backward(a, b)  # the usual case: no number
        return
    saved = [value if isinstance(value, (Variable, np.ndarray)) else None for value in (a, b)]
    # Only the numbers stay on ctx: a Variable there would outlive backward's freeing.
    ctx.numbers = tuple(value if kept is None else None for kept, value in zip(saved, (a, b)))
    ctx.save_for_backward(*saved)


def saved_operands(ctx: Any) -> tuple:
    """(a, b) as save_operands kept them: the saved values, numbers back in their place."""
    a, b = ctx.saved_tensors
    if a is None or b is None:
        numbers = ctx.numbers
        return (numbers[0] if a is None else a), (numbers[1] if b is None else b)
    return a, b


def check_representable(value: Any, dtype: np.dtype, op: str) -> None:
    """PyTorch's RuntimeError for a fill value that x's dtype cannot hold: nan or inf among
    integers, 1e300 in float32 (whether or not any element is filled)."""
    if dtype.kind not in "iuf":
        return
    number = float(np.real(value))
    if dtype.kind == "f":
        fits = not math.isfinite(number) or abs(number) <= float(np.finfo(dtype).max)
    else:
        info = np.iinfo(dtype)
        fits = math.isfinite(number) and info.min <= number <= info.max
    if not fits:
        raise RuntimeError(
            f"{op}: value cannot be converted to type {dtype} without overflow; got {value!r}. "
            f"Pick a value the dtype holds, or convert x first, e.g. x.double()."
        )
