"""Searching sorted values: bucketize (in which interval of sorted boundaries each value
falls) and unique (the distinct values, sorted, with where each element went and how often
each value occurs). Their results are positions and counts, so they have no gradient.
A new op that searches or deduplicates sorted values goes here.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.ops.operand import cpu_only, single_dim
from minigrad.ops.table import register


def _values(x: Any, op: str, name: str) -> np.ndarray:
    """The numbers of a numeric Variable (or an array), never part of a graph."""
    if isinstance(x, Variable) and not x.is_text:
        data = x.detach().numpy()
    elif isinstance(x, np.ndarray):
        data = x
    else:
        raise TypeError(
            f"{op}(): argument '{name}' must be a Variable; got {type(x).__name__} {x!r:.30}."
        )
    cpu_only(data, op)
    return np.asarray(data)


@register("bucketize", method=False)
def bucketize(
    points: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False
) -> Variable:
    """For each value v of `points` (PyTorch's input), the index i of its interval among
    the sorted 1-D `boundaries`: boundaries[i-1] < v <= boundaries[i] (right=False), or
    boundaries[i-1] <= v < boundaries[i] (right=True). int64, or int32 with out_int32=True;
    points may be a number."""
    is_number = isinstance(points, numbers.Real)  # True counts, as in PyTorch
    values = np.asarray(points) if is_number else _values(points, "bucketize", "input")
    edges = _values(boundaries, "bucketize", "boundaries")
    if values.dtype == np.bool_ and edges.dtype == np.bool_ and values.size:
        raise NotImplementedError(
            '"searchsorted_out_cpu" not implemented for \'Bool\', as in PyTorch: masks have '
            "no order to search. Convert one first, e.g. boundaries.long()."
        )
    if edges.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({edges.ndim}); bucketize "
            f"searches one sorted list (searchsorted takes one per row)."
        )
    # right=False puts a value equal to a boundary in the interval that ends there.
    places = np.searchsorted(edges, values, side="right" if right else "left")
    return Variable(np.asarray(places, dtype=np.int32 if out_int32 else np.int64))


@register("unique")
def unique(
    x: Variable,
    sorted: Any = True,  # noqa: A002 (PyTorch's keyword)
    return_inverse: Any = False,
    return_counts: Any = False,
    dim: int | None = None,
) -> Any:
    """The distinct values of x in ascending order (1-D), or with dim the distinct slices
    along dim. return_inverse adds, for each element (slice), the position of its value in
    that output, shaped like x (like x's size along dim); return_counts adds how often each
    value occurs. The output is sorted whatever `sorted` says, as PyTorch's on the CPU. The
    flags are read by their truth, as PyTorch's Python function reads them."""
    # PyTorch picks its variant by these truths first (a Variable of several values: error).
    if not bool(return_counts):
        bool(return_inverse)
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse),
                       ("return_counts", return_counts)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(
                f"unique(): argument '{name}' must be bool, not {type(flag).__name__}; pass "
                f"True or False."
            )
    data = _values(x, "unique", "input")
    if dim is None:
        values, inverse, counts = np.unique(
            data.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False
        )
        inverse = inverse.reshape(data.shape)
    else:
        if data.ndim == 0:
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions; unique(dim=...) "
                f"needs a Variable with at least one dimension."
            )
        axis = single_dim(dim, data.ndim)
        if any(size == 0 for d, size in enumerate(data.shape) if d != axis):
            # Every slice along dim is empty, so each would equal every other: PyTorch refuses.
            raise RuntimeError(
                f"unique(dim={dim}): x of shape {tuple(data.shape)} has 0-sized dimensions "
                f"besides dim, so its slices are all empty; unique cannot be applied. Select "
                f"the empty dimension, or drop dim= for the distinct values."
            )
        values, inverse, counts = np.unique(
            data, return_inverse=True, return_counts=True, axis=axis
        )
        inverse = inverse.reshape(-1)
    results = [Variable(values)]
    if return_inverse:
        results.append(Variable(inverse.astype(np.int64)))
    if return_counts:
        results.append(Variable(counts.astype(np.int64)))
    return results[0] if len(results) == 1 else tuple(results)
