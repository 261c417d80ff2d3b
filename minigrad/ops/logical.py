"""Logical and bitwise operations: and, or, xor, not, elementwise. Like comparisons they
give values with no gradient, so they are computed directly, never recorded.

- `logical_and(x, y)` and friends: any dtype, nonzero is True; the result is bool.
- `bitwise_and(x, y)`, `x & y` and friends: bool or integer Variables only (a float has
  no bits to combine: NotImplementedError, as in PyTorch); bools give bools, integers
  integers.
  `(x > 0) & (x < 1)` is the usual use: a mask from two comparisons.
"""

# ruff: noqa: N807 (the operators at the end are the dunder methods Variable gets: __and__, ...)

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.ops.operand import numeric
from minigrad.ops.table import operator, register

BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
LOGICAL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _bits(value: Any, op: str) -> Any:
    """The values of an operand of a bitwise op: bools or integers, else PyTorch's error."""
    data = numeric(value, op)
    kind = np.asarray(data).dtype.kind
    if kind not in "biu":
        raise NotImplementedError(
            f"{op} works on bool and integer Variables, but got dtype {np.asarray(data).dtype}. "
            f"For a mask, combine comparisons: (x > 0) & (x < 1); for floats use "
            f"minigrad.logical_{op.split('_')[-1]}, where nonzero is True."
        )
    return data


def _result(values: Any) -> Variable:
    return Variable._make(np.asarray(values))


def _binary(name: str, table: dict, check: Callable) -> Callable:
    """x <name> other, elementwise, for logical_<name> or bitwise_<name>."""
    ufunc = table[name.split("_")[-1]]

    # x is Any: bitwise_or(1.5, v) is a number first, which PyTorch takes (and then refuses
    # for its dtype, as here).
    def run(x: Any, other: Any) -> Variable:
        if type(other) is list or type(other) is tuple:
            # PyTorch refuses a list here (NumPy would combine it elementwise).
            raise TypeError(
                f"{name}(): argument 'other' must be a Variable, but got "
                f"{type(other).__name__} {other!r:.30}. Make one with minigrad.tensor(...)."
            )
        try:
            return _result(ufunc(check(x, name), check(other, name)))
        except ValueError:
            raise RuntimeError(
                f"{name}: shapes {x.shape} and {np.shape(numeric(other, name))} cannot be "
                f"broadcast together."
            ) from None

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"x {name} other, elementwise (no gradient)."
    return run


for _name in ("and", "or", "xor"):
    register(f"logical_{_name}", inplace=True)(_binary(f"logical_{_name}", LOGICAL, numeric))
    register(f"bitwise_{_name}", inplace=True)(_binary(f"bitwise_{_name}", BITWISE, _bits))


@register("logical_not", inplace=True)
def logical_not(x: Variable) -> Variable:
    """not x, elementwise: True where x is zero (no gradient)."""
    return _result(np.logical_not(numeric(x, "logical_not")))


@register("bitwise_not", inplace=True)
def bitwise_not(x: Variable) -> Variable:
    """~x, elementwise: not for bools, the flipped bits for integers (no gradient)."""
    data = numeric(x, "bitwise_not")
    if np.asarray(data).dtype.kind not in "biu":
        # PyTorch has no float kernel for it: NotImplementedError (a RuntimeError).
        raise NotImplementedError(
            f"~ (bitwise_not) works on bool and integer Variables, but got dtype "
            f"{np.asarray(data).dtype}. For floats, use minigrad.logical_not(x) or x == 0."
        )
    return _result(np.invert(data))


# The operators &, |, ^ and ~ (with a plain value on the left too: True & mask).
@operator
def __and__(self, other: Any) -> Variable:
    return self.bitwise_and(other)


@operator
def __rand__(self, other: Any) -> Variable:
    return self.bitwise_and(other)


@operator
def __or__(self, other: Any) -> Variable:
    return self.bitwise_or(other)


@operator
def __ror__(self, other: Any) -> Variable:
    return self.bitwise_or(other)


@operator
def __xor__(self, other: Any) -> Variable:
    return self.bitwise_xor(other)


@operator
def __rxor__(self, other: Any) -> Variable:
    return self.bitwise_xor(other)


@operator
def __invert__(self) -> Variable:
    if not self.is_text and self.dtype.kind not in "biu":
        # PyTorch's operator says TypeError here (its method, bitwise_not, NotImplementedError).
        raise TypeError(
            f"~ (operator.invert) works on bool and integer Variables, but got dtype "
            f"{self.dtype}. For floats, use minigrad.logical_not(x) or x == 0."
        )
    return self.bitwise_not()


@operator
def __iand__(self, other: Any) -> Variable:
    return self.bitwise_and_(other)


@operator
def __ior__(self, other: Any) -> Variable:
    return self.bitwise_or_(other)


@operator
def __ixor__(self, other: Any) -> Variable:
    return self.bitwise_xor_(other)
