"""Data types under PyTorch's names: `dtype=minigrad.float32`, `x.double()`, `x.to(minigrad.long)`.

minigrad's data are NumPy arrays, so each name is the NumPy scalar type: `x.dtype ==
minigrad.float32` compares a NumPy dtype with it, which NumPy answers as you would expect.
As in PyTorch, `float` is 32-bit and `double` 64-bit; `int` is 32-bit and `long` 64-bit.
(New Variables made from Python floats are float64, NumPy's default, not float32.)
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from minigrad.core.variable import Variable

# Floating-point results as PyTorch gives them: exp(1000) is inf, log(0) is -inf, 0/0 is nan,
# without a word. NumPy would warn ("overflow encountered in exp") from the engine's own line,
# which the user never wrote. Only warnings raised in minigrad's modules are silenced;
# NumPy in the user's code still warns. (np.errstate per operation would cost ~5 us each.)
warnings.filterwarnings(
    "ignore",
    message=r"(overflow|underflow|divide by zero|invalid value) encountered",
    category=RuntimeWarning,
    module=r"minigrad\.",
)

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
    if isinstance(dtype, LegacyTensorType):  # x.to(minigrad.DoubleTensor), x.type(...)
        return np.dtype(dtype.dtype)
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


# ------------------------------------------------------------------ legacy tensor types
#
# PyTorch's older spelling of a dtype on the CPU: torch.FloatTensor([1, 2]) makes float32
# values, torch.FloatTensor(2, 3) an uninitialised 2 x 3 block, and isinstance(x,
# torch.FloatTensor) asks "float32 and on the CPU?". They are not Variable subclasses
# (issubclass(torch.FloatTensor, torch.Tensor) is False in PyTorch too): a metaclass gives
# them the call and the isinstance answer.


class LegacyTensorType(type):
    """The type of minigrad.FloatTensor and its siblings (PyTorch's torch.tensortype)."""

    dtype: Any

    def __instancecheck__(cls, value: Any) -> bool:
        return (
            isinstance(value, Variable)
            and not value.is_text
            and value.device == "cpu"
            and value.dtype == cls.dtype
        )

    def __call__(cls, *args: Any) -> Variable:
        """FloatTensor() (empty), FloatTensor(2, 3) (uninitialised, that shape),
        FloatTensor(data) (a list, a tuple or an array of numbers, converted), or
        FloatTensor(x) (a Variable of this very dtype: the same data, as in PyTorch)."""
        if not args:
            return Variable._make(np.empty((0,), dtype=cls.dtype))
        if all(_is_size(arg) for arg in args):
            return Variable._make(np.empty(_sizes(cls, args), dtype=cls.dtype))
        if len(args) > 1:
            raise TypeError(
                f"{cls.__name__}() takes sizes (ints, e.g. {cls.__name__}(2, 3)) or one "
                f"sequence of data ({cls.__name__}([1, 2])); got "
                f"({', '.join(type(arg).__name__ for arg in args)})."
            )
        return _from_data(cls, args[0])

    def __repr__(cls) -> str:
        return f"<class 'minigrad.{cls.__name__}'>"


def _is_size(value: Any) -> bool:
    return isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool)


def _sizes(cls: LegacyTensorType, sizes: tuple) -> tuple:
    negative = [size for size in sizes if size < 0]
    if negative:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative[0]}: "
            f"{[builtins.int(size) for size in sizes]}; {cls.__name__}(*sizes) needs sizes >= 0."
        )
    return tuple(builtins.int(size) for size in sizes)


def _from_data(cls: LegacyTensorType, data: Any) -> Variable:
    if isinstance(data, Variable):
        if data.is_text or data.dtype != cls.dtype:
            got = "text" if data.is_text else np.dtype(data.dtype).name
            raise TypeError(
                f"{cls.__name__}(x) needs x of dtype {np.dtype(cls.dtype).name}; got {got}. "
                f"Convert it first: x.to(minigrad.{np.dtype(cls.dtype).name})."
            )
        return data.detach()
    if isinstance(data, str) or not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(
            f"{cls.__name__}(data): data must be a sequence such as a list of numbers "
            f"(got {type(data).__name__}); for a size, pass ints: {cls.__name__}(2, 3)."
        )
    try:
        array = np.array(data, dtype=cls.dtype)
    except (TypeError, ValueError):
        raise TypeError(
            f"{cls.__name__}(data): data must hold numbers only (nested lists of one "
            f"length per level); got {data!r}."
        ) from None
    return Variable._make(array)


class FloatTensor(metaclass=LegacyTensorType):
    """float32 on the CPU (float32 here too, though minigrad's own default is float64)."""

    dtype = np.float32


class DoubleTensor(metaclass=LegacyTensorType):
    """float64 on the CPU."""

    dtype = np.float64


class HalfTensor(metaclass=LegacyTensorType):
    """float16 on the CPU."""

    dtype = np.float16


class LongTensor(metaclass=LegacyTensorType):
    """int64 on the CPU."""

    dtype = np.int64


class IntTensor(metaclass=LegacyTensorType):
    """int32 on the CPU."""

    dtype = np.int32


class ShortTensor(metaclass=LegacyTensorType):
    """int16 on the CPU."""

    dtype = np.int16


class CharTensor(metaclass=LegacyTensorType):
    """int8 on the CPU."""

    dtype = np.int8


class ByteTensor(metaclass=LegacyTensorType):
    """uint8 on the CPU."""

    dtype = np.uint8


class BoolTensor(metaclass=LegacyTensorType):
    """bool on the CPU."""

    dtype = np.bool_


__all__ = [
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LegacyTensorType",
    "LongTensor",
    "ShortTensor",
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
