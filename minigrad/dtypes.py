"""Data types under PyTorch's names: `dtype=minigrad.float32`, `x.double()`, `x.to(minigrad.long)`.

minigrad's data are NumPy arrays, so each name is the NumPy scalar type: `x.dtype ==
minigrad.float32` compares a NumPy dtype with it, which NumPy answers as you would expect.
As in PyTorch, `float` is 32-bit and `double` 64-bit; `int` is 32-bit and `long` 64-bit.
(New Variables made from Python floats are float64, NumPy's default, not float32.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.variable import Variable

float16 = np.float16
float32 = np.float32
float64 = np.float64
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
bool_ = np.bool_

# PyTorch's short names. They shadow Python's builtins only as attributes of minigrad
# (minigrad.float, minigrad.int), which is exactly how PyTorch spells them.
half = float16
double = float64
long = int64
short = int16
float = float32  # noqa: A001
int = int32  # noqa: A001
bool = bool_  # noqa: A001


def as_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from any spelling minigrad accepts (minigrad.float32, 'float32', ...)."""
    if dtype is None or isinstance(dtype, (bool, np.ndarray, Variable)):
        # NumPy would read an array's (or a Variable's) .dtype: a value is not a dtype.
        raise TypeError(
            f"dtype must be a data type such as minigrad.float32; got {type(dtype).__name__}."
        )
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError):  # NumPy's words for "not a dtype" (a Variable: ValueError)
        raise TypeError(
            f"dtype {dtype!r} is not a data type minigrad knows; use e.g. minigrad.float32, "
            f"minigrad.float64 (minigrad.double), minigrad.int64 (minigrad.long) or 'float32'."
        ) from None


def is_floating_point(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "f"


__all__ = [
    "as_dtype",
    "bool",
    "bool_",
    "double",
    "float",
    "float16",
    "float32",
    "float64",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_floating_point",
    "long",
    "short",
    "uint8",
]
