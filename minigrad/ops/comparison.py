"""Comparisons: elementwise <, <=, >, >=, ==, != giving Variables of bools, never recorded
for backward (they have no gradient). While a listener hears the operations (minigrad.compile
tracing a step), a comparison runs as the Function Compare, so that a replay computes the
mask again (leaky_relu's x > 0) instead of keeping the traced one."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.grad_mode import state
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import numeric, shape_of
from minigrad.ops.table import register

_OPERATORS = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}


def compare(name: str, a: Variable, b: Any) -> Variable:
    """a <op> b elementwise, as a Variable of bools that does not require grad."""
    b_is_text = isinstance(b, str) or (isinstance(b, Variable) and b.is_text)
    if a.is_text != b_is_text:
        raise TypeError(
            f"cannot compare {'text' if a.is_text else 'numbers'} with "
            f"{'text' if b_is_text else 'numbers'} ({name}); compare like with like."
        )
    if a.is_text:
        if name not in ("eq", "ne"):
            raise TypeError(f"text Variables support == and != only; got the comparison {name!r}.")
        other = b.data if isinstance(b, Variable) else b
        return Variable._make(np.asarray(_OPERATORS[name](a.data, other)))
    if state.listener.watching:
        other = b.detach() if isinstance(b, Variable) else b
        return Compare.apply(a.detach(), other, name)
    result = _compared(name, a, b)
    return Variable._make(result if is_on_cuda(result) else np.asarray(result))


def _compared(name: str, a: Variable, b: Any) -> Any:
    """The comparison on the values (a NumPy or GPU array), or which shapes do not fit."""
    try:
        return _OPERATORS[name](a._data, numeric(b, name))
    except ValueError:
        raise OpError(
            f"{name}: shapes {a.shape} and {shape_of(b)} cannot be broadcast together."
        ) from None


class Compare(Function):
    """a <op> b elementwise, bools; as compare(), for a listener to hear. No gradient."""

    @staticmethod
    def forward(ctx: FunctionCtx, a: Variable, b: Any, name: str) -> np.ndarray:
        return np.asarray(_compared(name, a, b))

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Variable) -> tuple:
        return None, None, None

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> None:
        return None


# --------------------------------------------------------------------------- the op table


def _comparison(name: str, aliases: tuple[str, ...]) -> None:
    """Register x.eq(y) / minigrad.eq(x, y) and friends: the operators by name."""

    def compare_by_name(x: Variable, other: Any) -> Variable:
        if type(other) is list or type(other) is tuple:
            # PyTorch's x.eq(other) refuses a list (NumPy would compare it elementwise).
            raise TypeError(
                f"{name}(): argument 'other' must be a Variable or a number, but got "
                f"{type(other).__name__} {other!r:.30}. Make one with minigrad.tensor(...)."
            )
        return compare(name, x, other)

    compare_by_name.__name__ = compare_by_name.__qualname__ = name
    compare_by_name.__doc__ = f"x {name} other, elementwise, as a Variable of bools."
    register(name, aliases=aliases)(compare_by_name)


_comparison("eq", ())
_comparison("ne", ("not_equal",))
_comparison("lt", ("less",))
_comparison("le", ("less_equal",))
_comparison("gt", ("greater",))
_comparison("ge", ("greater_equal",))
