"""Questions about a value rather than operations on it: is_tensor, numel, isnan, nonzero, ...

None of them is differentiable: their answers are bools, counts or positions."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.variable import Variable
from minigrad.ops.table import register


@register("is_tensor", method=False)
def is_tensor(value: Any) -> bool:
    """True for a Variable (minigrad's Tensor)."""
    return isinstance(value, Variable)


@register("numel", method=False)
def numel(x: Variable) -> int:
    """The number of elements."""
    return x.numel()


@register("nelement", function=False)
def nelement(x: Variable) -> int:
    """The number of elements: x.numel() under PyTorch's older name (there is no
    torch.nelement function, only the method)."""
    return x.numel()


@register("is_floating_point")
def is_floating_point(x: Variable) -> bool:
    """True when the dtype is a floating-point one (the dtypes that can require grad)."""
    return not x.is_text and x.data.dtype.kind == "f"


def _elementwise_test(name: str, test: Any, doc: str) -> None:
    def check(x: Variable) -> Variable:
        if x.is_text:
            raise TypeError(f"{name} needs a numeric Variable, but got a text Variable.")
        data = x.data.to_host() if x.device == "cuda" else x.data
        answer = np.asarray(test(data))
        return Variable._make(devices.move(answer, devices.device_of(x.data)))

    check.__name__ = check.__qualname__ = name
    check.__doc__ = doc
    register(name)(check)


_elementwise_test("isnan", np.isnan, "True where x is NaN (a Variable of bools, no gradient).")
_elementwise_test("isinf", np.isinf, "True where x is +inf or -inf (bools, no gradient).")
_elementwise_test("isfinite", np.isfinite, "True where x is neither inf nor NaN (bools).")


@register("nonzero")
def nonzero(x: Variable, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: an (n, ndim) int64 Variable, or one per dim."""
    data = x.data.to_host() if x.device == "cuda" else x.data
    positions = np.nonzero(np.atleast_1d(data))
    if as_tuple:
        return tuple(Variable._make(p.astype(np.int64)) for p in positions)
    if np.ndim(data) == 0:
        # A 0-d value has no dimension to index: one row of no columns if it is nonzero,
        # as in PyTorch (shape (1, 0) or (0, 0)).
        return Variable._make(np.zeros((len(positions[0]), 0), dtype=np.int64))
    return Variable._make(np.stack(positions, axis=1).astype(np.int64))


@register("get_default_dtype", method=False)
def get_default_dtype() -> Any:
    """The dtype of new floating-point data: float64 in minigrad (NumPy's), float32 in PyTorch."""
    return np.float64
