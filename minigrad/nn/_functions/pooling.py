"""Pooling: the largest value, or the mean, of each window (see convolution.py's windows).

Max pooling routes each output's gradient to the input its value came from (the argmax of
its window); where a window holds the maximum twice, the first in the window's row-major
order wins, as in PyTorch's CPU kernels (a NaN counts as the maximum, and there the last
NaN wins, as in those kernels). Average pooling sends each output's gradient,
divided by its divisor, back to every input of its window.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.nn._functions.convolution import Geometry, fold, windows
from minigrad.ops.operand import cpu_only, numeric


def _lowest(dtype: np.dtype) -> Any:
    """What padding holds for max pooling: never the maximum of a window."""
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


class MaxPool(Function):
    """y[p] = max over window p;  dx = dy sent to each window's argmax (indices: flat
    positions in x's spatial plane, PyTorch's return_indices)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, geometry: Geometry, kernel: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        data = numeric(x, "max_pool")
        cpu_only(data, "max_pool")
        size, d = data.shape[2:], len(kernel)
        view = windows(data, geometry, kernel, fill=_lowest(data.dtype))
        out = view.shape[2 : 2 + d]
        values, taps = _scan(view, kernel, nan_wins=data.dtype.kind == "f" and bool(
            np.isnan(data).any()
        ))
        indices = _flat_indices(taps, geometry, kernel, size, out)
        # With dilation a window can miss x altogether (value -inf): it sends no gradient.
        # (PyTorch adds its gradient at its index, which then lies outside x or, in 2-d,
        # wraps round to an element of the next row that the window never held.)
        empty = ~_windows_holding_x(geometry, kernel, size, out)
        # The indices are integers: an output that gets no gradient.
        ctx.size, ctx.indices, ctx.empty = data.shape, indices, empty if empty.any() else None
        return values, indices

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable, _: Any) -> tuple:
        indices = ctx.indices
        batch, channels = ctx.size[:2]
        positions = math.prod(indices.shape[2:])  # not -1: N may be 0
        flat_grad = grad.reshape(batch, channels, positions)
        flat_indices = indices.reshape(batch, channels, positions)
        if ctx.empty is not None:  # windows that hold no element of x: no gradient
            held = ~ctx.empty.reshape(positions)
            flat_grad = flat_grad * held.astype(flat_grad.dtype)
            flat_indices = np.where(held, flat_indices, 0)
        dx = Unpool.apply(flat_grad, flat_indices, math.prod(ctx.size[2:]))
        return dx.reshape(ctx.size), None, None


class Unpool(Function):
    """z[n, c, indices[n, c, i]] += g[n, c, i] into zeros of (N, C, plane), max-pool's
    backward (PyTorch's max_unpool);  dg = dz gathered at the indices."""

    @staticmethod
    def forward(ctx: FunctionCtx, g: Any, indices: np.ndarray, plane: int) -> np.ndarray:
        data = numeric(g, "max_pool")
        ctx.indices = indices
        batch, channels, _ = data.shape
        # One flat index into all N·C planes, then one bincount: windows that overlap
        # (stride < kernel) send several gradients to one place, and they add up.
        planes = np.arange(batch * channels, dtype=np.int64).reshape(batch, channels, 1)
        flat = (indices + planes * plane).reshape(-1)
        summed = np.bincount(flat, weights=data.reshape(-1), minlength=batch * channels * plane)
        return summed.astype(data.dtype, copy=False).reshape(batch, channels, plane)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return grad.gather(2, ctx.indices), None, None


def _scan(view: np.ndarray, kernel: tuple[int, ...], nan_wins: bool) -> tuple:
    """The largest value of each window (N, C, *P, *K) and its tap (row-major number).

    One pass per kernel tap over all windows at once, as PyTorch's kernel scans a window:
    a value replaces the best so far when it is larger, or NaN (`val > max ||
    isnan(val)`): the first maximum wins, and the last NaN."""
    d = len(kernel)
    values = view[(Ellipsis, *(0,) * d)].copy()
    taps = np.zeros(values.shape, dtype=np.int32)
    for number, tap in enumerate(np.ndindex(*kernel)):
        if number == 0:
            continue
        candidate = view[(Ellipsis, *tap)]
        better = candidate > values
        if nan_wins:  # rare: the slower, exact form of the rule
            better |= np.isnan(candidate)
            np.copyto(values, candidate, where=better)
        else:  # arithmetic rather than masked copies, several times faster in NumPy
            values = np.maximum(values, candidate)
        taps += better * np.int32(number) - better * taps
    return values, taps


def _flat_indices(
    taps: np.ndarray,
    geometry: Geometry,
    kernel: tuple[int, ...],
    size: tuple[int, ...],
    out: tuple[int, ...],
) -> np.ndarray:
    """Each window's chosen tap as a flat position in x's spatial plane (row-major):
    the window's start (p·stride - padding) plus tap·dilation, per dim."""
    d = len(kernel)
    plane_strides = [math.prod(size[dim + 1 :]) for dim in range(d)]
    starts = [
        np.arange(out[dim], dtype=np.int64) * geometry.stride[dim] - geometry.padding[dim][0]
        for dim in range(d)
    ]
    window_start = sum(
        _along(start * plane_stride, dim, d)
        for dim, (start, plane_stride) in enumerate(zip(starts, plane_strides))
    )
    tap_offset = np.array(
        [
            sum(t * dil * plane_stride for t, dil, plane_stride in zip(tap, geometry.dilation,
                                                                       plane_strides))
            for tap in np.ndindex(*kernel)
        ],
        dtype=np.int64,
    )
    indices = window_start + tap_offset[taps]
    if not any(before or after for before, after in geometry.padding):
        return indices  # every tap lies in x
    # With padding the chosen tap may lie in it, when the window's values are all as low
    # as the padding (-inf): the index is then PyTorch's, the window's first tap at or after
    # 0 in each dim (its first element of x, when it has one).
    inside = np.ones(taps.shape, dtype=bool)
    for dim, tap in enumerate(np.unravel_index(taps, kernel)):
        coordinate = _along(starts[dim], dim, d) + tap * geometry.dilation[dim]
        inside &= (coordinate >= 0) & (coordinate < size[dim])
    if inside.all():
        return indices
    return np.where(inside, indices, _first_taps(geometry, size, out))


def _along(values: np.ndarray, dim: int, spatial: int) -> np.ndarray:
    """A vector over spatial dim `dim`, shaped to broadcast over (N, C, *P)."""
    shape = [1] * (2 + spatial)
    shape[2 + dim] = values.size
    return values.reshape(shape)


def _windows_holding_x(
    geometry: Geometry, kernel: tuple[int, ...], size: tuple[int, ...], out: tuple[int, ...]
) -> np.ndarray:
    """(*P): whether window p holds at least one element of x (a dilated window over the
    padding may hold none)."""
    holds = np.ones(out, dtype=bool)
    for dim, (k, st, (before, _), dil) in enumerate(
        zip(kernel, geometry.stride, geometry.padding, geometry.dilation)
    ):
        start = np.arange(out[dim]) * st - before
        taps = start[:, None] + np.arange(k) * dil
        along = ((taps >= 0) & (taps < size[dim])).any(axis=1)
        shape = [1] * len(out)
        shape[dim] = out[dim]
        holds = holds & along.reshape(shape)
    return holds


def _first_taps(geometry: Geometry, size: tuple[int, ...], out: tuple[int, ...]) -> np.ndarray:
    """(*P): the flat position, row-major over x's spatial plane, of each window's first
    tap at or after 0 in every dim, as PyTorch's max-pool kernel starts its scan."""
    flat = np.zeros(out, dtype=np.int64)
    for dim, (st, (before, _), dil) in enumerate(
        zip(geometry.stride, geometry.padding, geometry.dilation)
    ):
        start = np.arange(out[dim], dtype=np.int64) * st - before
        start = np.where(start < 0, start + (-start + dil - 1) // dil * dil, start)
        shape = [1] * len(out)
        shape[dim] = out[dim]
        flat = flat + start.reshape(shape) * math.prod(size[dim + 1 :])
    return flat


def pool_divisor(
    size: tuple[int, ...],
    out: tuple[int, ...],
    geometry: Geometry,
    kernel: tuple[int, ...],
    padding: tuple[int, ...],
    count_include_pad: bool,
) -> np.ndarray:
    """Average pooling's divisor for each output position, as PyTorch counts it: the
    window's elements inside x plus its padding (count_include_pad), or inside x only;
    the part of a window that ceil_mode lets run past the padding never counts."""
    per_dim = []
    for s, p, k, st, pad in zip(size, out, kernel, geometry.stride, padding):
        start = np.arange(p) * st - pad
        if count_include_pad:
            counted = np.minimum(start + k, s + pad) - start
        else:
            counted = np.minimum(start + k, s) - np.maximum(start, 0)
        per_dim.append(counted)
    divisor = per_dim[0]
    for counted in per_dim[1:]:
        divisor = np.multiply.outer(divisor, counted)
    return divisor


class AvgPool(Function):
    """y[p] = Σ window p / divisor[p];  dx = AvgPoolAdjoint(dy): each dy[p] / divisor[p]
    added back over window p."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, geometry: Geometry, kernel: tuple[int, ...], divisor: Any
    ) -> np.ndarray:
        data = numeric(x, "avg_pool")
        cpu_only(data, "avg_pool")
        ctx.geometry, ctx.kernel, ctx.divisor, ctx.size = geometry, kernel, divisor, data.shape[2:]
        view = windows(data, geometry, kernel)
        taps = tuple(range(view.ndim - len(kernel), view.ndim))
        return (view.sum(axis=taps) / divisor).astype(data.dtype, copy=False)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        dx = AvgPoolAdjoint.apply(grad, ctx.geometry, ctx.kernel, ctx.divisor, ctx.size)
        return dx, None, None, None


class AvgPoolAdjoint(Function):
    """z = each g[p] / divisor[p] added back over window p (AvgPool's backward);
    its own backward is AvgPool."""

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        g: Any,
        geometry: Geometry,
        kernel: tuple[int, ...],
        divisor: Any,
        size: tuple[int, ...],
    ) -> np.ndarray:
        data = numeric(g, "avg_pool")
        ctx.geometry, ctx.kernel, ctx.divisor = geometry, kernel, divisor
        share = (data / divisor).astype(data.dtype, copy=False).swapaxes(0, 1)  # (C, N, *P)
        # every tap of a window gets the same share: (C, *K, N, *P), fold's layout
        spread = share.reshape(share.shape[0], *(1,) * len(kernel), *share.shape[1:])
        columns = np.broadcast_to(spread, (share.shape[0], *kernel, *share.shape[1:]))
        return fold(columns, geometry, size)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        dg = AvgPool.apply(grad, ctx.geometry, ctx.kernel, ctx.divisor)
        return dg, None, None, None, None


def adaptive_bins(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """The (out, size) matrix whose row i averages bin i: from ⌊i·size/out⌋ to
    ⌈(i+1)·size/out⌉, PyTorch's adaptive bins (they may overlap)."""
    matrix = np.zeros((out, size), dtype=dtype)
    for i in range(out):
        start = (i * size) // out
        end = -((-(i + 1) * size) // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


class AdaptiveAvgPool(Function):
    """y = x averaged over adaptive bins, one (out, size) matrix A_d per spatial dim:
    y = x ×_d A_d for each d;  dx = dy ×_d A_dᵀ."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, matrices: tuple[np.ndarray, ...]) -> np.ndarray:
        data = numeric(x, "adaptive_avg_pool")
        cpu_only(data, "adaptive_avg_pool")
        ctx.matrices = matrices
        y = data
        for dim, matrix in enumerate(matrices):
            axis = 2 + dim
            y = np.swapaxes(np.swapaxes(y, axis, -1) @ matrix.T, -1, axis)
        return np.ascontiguousarray(y)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        dx = grad
        for dim, matrix in enumerate(ctx.matrices):
            axis = 2 + dim
            dx = (dx.transpose(axis, -1) @ matrix).transpose(-1, axis)
        return dx, None
