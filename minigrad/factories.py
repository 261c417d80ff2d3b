"""Factories: new leaf Variables filled with zeros, ones, a value, a range or random numbers.

Every factory takes `requires_grad=`; grad modes never change it (the factory exception).
Random factories draw from one generator that `manual_seed` resets, so runs repeat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.variable import Variable

float16, float32, float64 = np.float16, np.float32, np.float64
int32, int64 = np.int32, np.int64
bool_ = np.bool_

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Reset the random generator used by rand and randn, so results repeat."""
    global _generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed expects an int; got {seed!r} ({type(seed).__name__}).")
    if seed < 0:
        raise ValueError(f"manual_seed expects a non-negative int; got {seed}.")
    _generator = np.random.default_rng(int(seed))


def _size(size: tuple, factory: str) -> tuple[int, ...]:
    """Accept zeros(2, 3), zeros((2, 3)) and zeros([2, 3])."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for dim in size:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"{factory}() sizes must be ints; got {dim!r} in {size}.")
        if dim < 0:
            raise ValueError(f"{factory}() sizes must be non-negative; got {size}.")
    return tuple(int(dim) for dim in size)


def _dtype(dtype: Any) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"dtype {dtype!r} is not a NumPy dtype; use e.g. minigrad.float32, "
            f"minigrad.float64, minigrad.int64 or 'float32'."
        ) from None


def _leaf(data: np.ndarray, dtype: Any, requires_grad: bool) -> Variable:
    if dtype is not None:
        data = data.astype(_dtype(dtype))
    return Variable(data, requires_grad=requires_grad)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    return _leaf(np.zeros(_size(size, "zeros")), dtype, requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    return _leaf(np.ones(_size(size, "ones")), dtype, requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    """Uninitialised memory, as in PyTorch: fill it before reading it."""
    return _leaf(np.empty(_size(size, "empty")), dtype, requires_grad)


def full(
    size: Any, fill_value: float, *, dtype: Any = None, requires_grad: bool = False
) -> Variable:
    shape = _size(size if isinstance(size, (tuple, list)) else (size,), "full")
    return _leaf(np.full(shape, fill_value), dtype, requires_grad)


def rand(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    """Uniform numbers in [0, 1)."""
    return _leaf(_generator.random(_size(size, "rand")), dtype, requires_grad)


def randn(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Variable:
    """Standard normal numbers (mean 0, standard deviation 1)."""
    return _leaf(_generator.standard_normal(_size(size, "randn")), dtype, requires_grad)


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: Any = None,
    requires_grad: bool = False,
) -> Variable:
    """start, start + step, ... up to (not including) end; arange(n) is 0 .. n-1."""
    if end is None:
        start, end = 0, start
    for label, value in (("start", start), ("end", end), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"arange: {label} must be a number; got {value!r}.")
    if step == 0:
        raise ValueError("arange: step must be nonzero.")
    return _leaf(np.arange(start, end, step), dtype, requires_grad)


def _numeric_data(other: Any, factory: str) -> np.ndarray:
    if not isinstance(other, Variable) or other.is_text:
        raise TypeError(
            f"{factory} expects a numeric Variable; got "
            f"{'a text Variable' if isinstance(other, Variable) else type(other).__name__}."
        )
    return other.data


def zeros_like(other: Variable, *, dtype: Any = None, requires_grad: bool = False) -> Variable:
    return _leaf(np.zeros_like(_numeric_data(other, "zeros_like")), dtype, requires_grad)


def ones_like(other: Variable, *, dtype: Any = None, requires_grad: bool = False) -> Variable:
    return _leaf(np.ones_like(_numeric_data(other, "ones_like")), dtype, requires_grad)


def tensor(data: Any, *, dtype: Any = None, requires_grad: bool = False) -> Variable:
    """PyTorch's spelling of Variable(data): a new leaf that owns a copy of the data."""
    copied = (
        data
        if isinstance(data, str)
        else np.array(data.data if isinstance(data, Variable) else data)
    )
    if dtype is not None and not isinstance(copied, str):
        copied = copied.astype(_dtype(dtype))
    return Variable(copied, requires_grad=requires_grad)
