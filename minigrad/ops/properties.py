"""Questions about a value rather than operations on it: is_tensor, numel, is_floating_point."""

from __future__ import annotations

from typing import Any

from minigrad.ops.table import register
from minigrad.variable import Variable


@register("is_tensor", method=False)
def is_tensor(value: Any) -> bool:
    """True for a Variable (minigrad's Tensor)."""
    return isinstance(value, Variable)


@register("numel", method=False)
def numel(x: Variable) -> int:
    """The number of elements."""
    return x.numel()


@register("is_floating_point")
def is_floating_point(x: Variable) -> bool:
    """True when the dtype is a floating-point one (the dtypes that can require grad)."""
    return not x.is_text and x.data.dtype.kind == "f"
