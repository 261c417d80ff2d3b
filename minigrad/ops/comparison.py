"""Comparisons: elementwise <, <=, >, >=, ==, != giving Variables of bools, never recorded."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minigrad.devices import is_on_cuda
from minigrad.ops.operand import numeric, shape_of
from minigrad.variable import Variable

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
    compute = _OPERATORS[name]
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
        return Variable._make(np.asarray(compute(a.data, other)))
    try:
        result = compute(a.data, numeric(b, name))
    except ValueError:
        raise ValueError(
            f"{name}: shapes {a.shape} and {shape_of(b)} cannot be broadcast together."
        ) from None
    return Variable._make(result if is_on_cuda(result) else np.asarray(result))
