"""Shapes and strides: the bookkeeping every kernel shares. Pure Python, no numba.

A device array is one flat buffer plus a *layout*: a shape, one stride per dimension
(counted in elements, not bytes) and an offset. Element ``(i0, i1, ..., ik)`` lives at

    buffer[offset + i0 * strides[0] + i1 * strides[1] + ... + ik * strides[k]]

so transposing, slicing and broadcasting only change the layout, never the data:

- transpose swaps two strides (and the two sizes);
- ``x[a:b:s]`` adds ``a * stride`` to the offset and multiplies the stride by ``s``;
- broadcasting a size-1 (or missing) dimension to size n gives it stride 0: every index
  along it reads the same element.

Kernels receive shapes and strides as tuples of ints. Before a launch, `coalesce` merges
dimensions that are contiguous for every operand, so a plain contiguous add runs as one
flat dimension and its threads do no index arithmetic at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Shape = tuple[int, ...]


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major (C order) strides in elements: the last dimension moves fastest."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def size_of(shape: Sequence[int]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the layout is row-major with no gaps (size-1 dimensions don't count)."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def normalize_shape(shape: object) -> Shape:
    """`shape` as a tuple of ints: accepts an int, a tuple or a list."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        dims = tuple(shape)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"a shape must be an int or a tuple of ints; got {shape!r}.") from None
    for size in dims:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"a shape must be an int or a tuple of ints; got {shape!r}.")
    return tuple(int(size) for size in dims)


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """The shape NumPy broadcasting gives: align on the right, sizes must match or be 1."""
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        size = 1
        for shape in shapes:
            if -axis > len(shape):
                continue
            other = shape[axis]
            if other == size or other == 1:
                continue
            if size != 1:
                listed = " ".join(str(tuple(s)) for s in shapes)
                raise ValueError(
                    f"operands could not be broadcast together with shapes {listed}: "
                    f"each dimension, counted from the right, must match or be 1."
                )
            size = other
        result.append(size)
    return tuple(result)


def check_broadcast(shape: Sequence[int], target: Shape) -> None:
    """Raise NumPy's ValueError unless an array of `shape` can be read as one of `target`.

    Only `shape` stretches: `target` must have at least as many dimensions, and each of
    `shape`'s sizes, counted from the right, must equal target's or be 1.
    """
    try:
        fits = len(shape) <= len(target) and broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"cannot broadcast an array of shape {tuple(shape)} to shape {tuple(target)}: "
            f"each dimension, counted from the right, must match or be 1."
        )


def broadcast_strides(shape: Sequence[int], strides: Sequence[int], out_shape: Shape) -> Shape:
    """Strides that read an array of `shape` as if it had `out_shape`.

    Missing leading dimensions and size-1 dimensions stretched to a larger size get
    stride 0, so every index along them lands on the same element.
    """
    lead = len(out_shape) - len(shape)
    result = [0] * lead
    for size, stride, out_size in zip(shape, strides, out_shape[lead:]):
        result.append(stride if size == out_size else 0)
    return tuple(result)


def coalesce(shape: Sequence[int], *strides_list: Sequence[int]) -> tuple[Shape, list[Shape]]:
    """Merge dimensions that every operand walks contiguously; drop size-1 dimensions.

    Dimensions d and d+1 merge when, for every operand, stride[d] == stride[d+1] * size[d+1]:
    then stepping along d is the same as stepping size[d+1] times along d+1. The result has
    at least one dimension (a 0-d array becomes shape (1,)), so kernels never see an
    empty tuple.
    """
    dims = [d for d, size in enumerate(shape) if size != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    new_shape = [shape[dims[0]]]
    new_strides = [[strides[dims[0]]] for strides in strides_list]
    for d in dims[1:]:
        size = shape[d]
        if all(out[-1] == strides[d] * size for out, strides in zip(new_strides, strides_list)):
            new_shape[-1] *= size
            for out, strides in zip(new_strides, strides_list):
                out[-1] = strides[d]
        else:
            new_shape.append(size)
            for out, strides in zip(new_strides, strides_list):
                out.append(strides[d])
    return tuple(new_shape), [tuple(strides) for strides in new_strides]


def normalize_axis(axis: object, ndim: int) -> int:
    """One axis as a non-negative int; NumPy's AxisError (an IndexError and ValueError)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int; got {axis!r} ({type(axis).__name__}).")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(int(axis), ndim)
    return int(axis) % ndim


def normalize_axes(axis: object, ndim: int) -> Shape:
    """None (every axis), an int or a tuple of ints, as a sorted tuple of distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, Iterable) else (axis,)
    result = tuple(normalize_axis(a, ndim) for a in axes)
    if len(set(result)) != len(result):
        raise ValueError(f"axis {axis} names the same axis twice.")
    return tuple(sorted(result))
