"""Closeness tests: isclose, allclose and equal, as in PyTorch (never recorded in a graph)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.variable import Variable
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import numeric
from minigrad.ops.table import register


def _host(value: Any, op: str) -> Any:
    data = numeric(value, op)
    return data.to_host() if hasattr(data, "to_host") else data


def _fitting(x: Any, other: Any, op: str) -> tuple:
    """Both operands on the host, once their shapes are known to broadcast."""
    a, b = _host(x, op), _host(other, op)
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        raise OpError(
            f"{op}: shapes {np.shape(a)} and {np.shape(b)} cannot be broadcast together; "
            f"each dimension must match or be 1 (counting from the right)."
        ) from None
    return a, b


def _checked_pair(x: Any, other: Any, rtol: Any, atol: Any, op: str) -> tuple:
    """isclose's and allclose's operands on the host (and the tolerances as numbers),
    after PyTorch's checks in its order:
    other no list or tuple and tolerances that are numbers; two Variables of one dtype;
    tolerances >= 0."""
    if isinstance(other, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'other' (position 2) must be a Variable, but got "
            f"{type(other).__name__} {other!r:.30}. Make one with minigrad.tensor(...)."
        )
    tolerances = {}
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if isinstance(tolerance, Variable) and not tolerance.is_text and tolerance.ndim == 0:
            tolerance = tolerance.item()  # a 0-d Variable is read as its number, as PyTorch
        if isinstance(tolerance, complex) or not isinstance(
            tolerance, (int, float, np.integer, np.floating)
        ):
            raise TypeError(
                f"{op}(): argument '{name}' must be a float, but got "
                f"{type(tolerance).__name__} {tolerance!r:.30}. Pass a Python number."
            )
        tolerances[name] = tolerance
    a, b = _fitting(x, other, op)
    if isinstance(x, Variable) and isinstance(other, Variable) and a.dtype != b.dtype:
        raise RuntimeError(
            f"{op}(): {a.dtype} did not match {b.dtype}: both Variables need one dtype. "
            f"Convert one first, e.g. {op}(x, other.to(x.dtype))."
        )
    for name, tolerance in tolerances.items():
        if not tolerance >= 0:  # NaN too
            raise RuntimeError(
                f"{op}(): {name} must be greater than or equal to zero, but got {tolerance}."
            )
    return a, b, tolerances["rtol"], tolerances["atol"]


@register("isclose")
def isclose(
    x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Variable:
    """|x - other| <= atol + rtol * |other|, elementwise, as a Variable of bools."""
    a, b, rtol, atol = _checked_pair(x, other, rtol, atol, "isclose")
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    on_cuda = any(isinstance(v, Variable) and v.device == "cuda" for v in (x, other))
    # The answer lives where the question did, as in PyTorch.
    return Variable._make(devices.move(np.asarray(close), "cuda" if on_cuda else "cpu"))


@register("allclose")
def allclose(
    x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True when isclose holds for every element (a Python bool)."""
    a, b, rtol, atol = _checked_pair(x, other, rtol, atol, "allclose")
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@register("equal")
def equal(x: Any, other: Any) -> bool:
    """True when both have the same shape and the same elements (a Python bool)."""
    if isinstance(other, (list, tuple)):
        raise TypeError(
            f"equal(): argument 'other' (position 2) must be a Variable, but got "
            f"{type(other).__name__} {other!r:.30}. Make one with minigrad.tensor(...)."
        )
    return bool(np.array_equal(_host(x, "equal"), _host(other, "equal")))
