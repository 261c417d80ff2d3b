"""PyTorch's type promotion (torch.result_type): the dtype of an op on operands of mixed dtypes.

Each operand has a category, bool < integer < float, and a tier: a Variable (or array) with
dimensions, a 0-d one, or a Python number. The result takes the highest category of all,
in the width of the highest tier that reaches it:

- float32 (3,) with float64 () gives float32: a 0-d operand does not widen its category;
- int64 (3,) with float32 () gives float32: a 0-d float raises the category, in its width;
- int64 (3,) with 2.5 gives the default float dtype: a number has no width of its own.

NumPy differs on the first two (a 0-d array counts as much as any other) and widens int64
with float32 to float64, where PyTorch keeps the float's width.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.ops.properties import get_default_dtype


def promote_types(first: np.dtype, second: np.dtype) -> np.dtype:
    """torch.promote_types: NumPy's rule, except that a float met with an integer or a bool
    keeps its width (int64 with float32 is float32)."""
    if first == second:
        return first
    if first.kind in "fc" and second.kind not in "fc":
        return first
    if second.kind in "fc" and first.kind not in "fc":
        return second
    return np.promote_types(first, second)


def _combined(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """Two tiers' dtypes, `higher` of the tier that counts more: a lower tier changes the
    result only where its category is higher (PyTorch's combine_categories)."""
    if higher is None:
        return lower
    if lower is None or higher.kind in "fc":
        return higher
    if higher.kind == "b" or lower.kind in "fc":
        return promote_types(higher, lower)
    return higher


def _number_dtype(value: Any) -> np.dtype:
    """The dtype a Python number stands for: bool, int64, or the default float dtype."""
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (complex, np.complexfloating)):
        return np.dtype(np.complex128)
    return np.dtype(get_default_dtype())


def promoted_dtype(*operands: Any) -> np.dtype:
    """The dtype PyTorch computes in for these operands: Variables, arrays or numbers."""
    tiers: list[np.dtype | None] = [None, None, None]  # with dims, 0-d, numbers
    for operand in operands:
        data = getattr(operand, "_data", operand)
        dtype = getattr(data, "dtype", None)
        if dtype is None or isinstance(data, np.generic):
            tier, dtype = 2, _number_dtype(data)
        else:
            tier = 1 if np.ndim(data) == 0 else 0
        known = tiers[tier]
        tiers[tier] = dtype if known is None else promote_types(known, dtype)
    return _combined(tiers[0], _combined(tiers[1], tiers[2]))


def promoted_arrays(left: Any, right: Any) -> tuple[Any, Any]:
    """Two operands' values (arrays or numbers), arrays cast to promoted_dtype where their
    dtypes differ. NumPy's own rule is right for an array with a Python number."""
    left_dtype, right_dtype = getattr(left, "dtype", None), getattr(right, "dtype", None)
    if left_dtype is None or right_dtype is None or left_dtype == right_dtype:
        return left, right
    if type(left) is not np.ndarray or type(right) is not np.ndarray:
        return left, right  # a NumPy scalar is a number here; GPU arrays are left as they are
    dtype = promoted_dtype(left, right)
    return left.astype(dtype, copy=False), right.astype(dtype, copy=False)
