"""Convolution as three bilinear Functions, each the others' backward.

For y = conv(x, w) (a cross-correlation, as in PyTorch) with windows taken every `stride`,
`dilation` apart, over x padded by `padding`:

    y[n, o, p]        = Σ_c,k  x_pad[n, c, p·stride + k·dilation] · w[o, c, k]
    dx = conv_input_grad(dy, w)    the transposed convolution: each window's gradient
                                   dy[n, :, p] · w added back where the window came from
    dw = conv_weight_grad(x, dy)   the correlation of the input with the output gradient

All three are the same sum read with a different factor left out, so each one's backward
is made of the other two: second derivatives come for free. The arrays are computed by
im2col: a strided *view* of the padded input with one axis per window position and one
per kernel tap (no copy), then a single matmul per group. On the GPU (a Variable moved
with .cuda()) the same code runs: im2col and its adjoint are then the kernels of
kernels/convolution.py, and the matmuls the tiled matmul kernel.

Shapes, with d spatial dims (1 for conv1d, 2 for conv2d), G groups:
x (N, C_in, *S), w (C_out, C_in/G, *K), y (N, C_out, *P).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.ops.operand import numeric


@dataclass(frozen=True)
class Geometry:
    """How windows are laid over the input: per spatial dim, the stride, the dilation and
    the padding before and after; and the number of groups the channels split into."""

    stride: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    dilation: tuple[int, ...]
    groups: int = 1

    def output_size(self, size: tuple[int, ...], kernel: tuple[int, ...]) -> tuple[int, ...]:
        """P = ⌊(S + before + after - dilation·(K - 1) - 1) / stride⌋ + 1, per dim."""
        return tuple(
            (s + before + after - d * (k - 1) - 1) // st + 1
            for s, (before, after), d, k, st in zip(
                size, self.padding, self.dilation, kernel, self.stride
            )
        )


# --------------------------------------------------------------------------- im2col


def windows(
    x: np.ndarray, geometry: Geometry, kernel: tuple[int, ...], fill: float = 0
) -> np.ndarray:
    """Every window of x (N, C, *S): a read-only view (N, C, *P, *K), no copy.

    x is padded with `fill` first (a copy, only when there is padding)."""
    widths = ((0, 0), (0, 0), *geometry.padding)
    if any(before or after for before, after in geometry.padding):
        x = np.pad(x, widths, constant_values=fill)
    spatial = x.shape[2:]
    out = tuple(
        (s - d * (k - 1) - 1) // st + 1
        for s, d, k, st in zip(spatial, geometry.dilation, kernel, geometry.stride)
    )
    strides = x.strides
    view_strides = (
        strides[0],
        strides[1],
        *(s * st for s, st in zip(strides[2:], geometry.stride)),
        *(s * d for s, d in zip(strides[2:], geometry.dilation)),
    )
    return np.lib.stride_tricks.as_strided(
        x, (*x.shape[:2], *out, *kernel), view_strides, writeable=False
    )


def fold(
    columns: np.ndarray, geometry: Geometry, size: tuple[int, ...]
) -> np.ndarray:
    """The adjoint of `windows`: add each window back where it was taken from, then cut the
    padding off. columns (C, *K, N, *P), tap-major so that each tap's slice is one block
    → (N, C, *S). One strided slice-add per kernel tap (25 for a 5x5 kernel), no loop over
    positions."""
    if is_on_cuda(columns):
        return _device_kernels().col2im(
            columns, size, geometry.stride, _before(geometry), geometry.dilation
        )
    d = len(size)
    channels, kernel = columns.shape[0], columns.shape[1 : 1 + d]
    batch, out = columns.shape[1 + d], columns.shape[2 + d :]
    padded_size = tuple(s + before + after for s, (before, after) in zip(size, geometry.padding))
    padded = np.zeros((channels, batch, *padded_size), dtype=columns.dtype)
    for tap in np.ndindex(*kernel):
        where = tuple(
            slice(t * dil, t * dil + (p - 1) * st + 1, st)
            for t, dil, p, st in zip(tap, geometry.dilation, out, geometry.stride)
        )
        padded[(slice(None), slice(None), *where)] += columns[(slice(None), *tap)]
    inside = tuple(slice(before, before + s) for s, (before, _) in zip(size, geometry.padding))
    return np.ascontiguousarray(padded[(slice(None), slice(None), *inside)].swapaxes(0, 1))


def _device_kernels() -> Any:
    """kernels/convolution.py, imported (with numba) only when a Variable is on cuda."""
    from minigrad.kernels import convolution

    return convolution


def _before(geometry: Geometry) -> tuple[int, ...]:
    return tuple(before for before, _ in geometry.padding)


def _contiguous(a: Any) -> Any:
    """a as a C-contiguous array of its own (a DeviceArray's copy is contiguous)."""
    return np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a.copy()


def _columns(x: np.ndarray, geometry: Geometry, kernel: tuple[int, ...]) -> np.ndarray:
    """im2col: x's windows as one matrix per group, (G, C_in/G·K, N·P): a row per
    (channel, tap), a column per (sample, position). One copy of the strided view."""
    d = len(kernel)
    rows = x.shape[1] // geometry.groups * math.prod(kernel)
    if is_on_cuda(x):
        out = geometry.output_size(x.shape[2:], kernel)
        columns = _device_kernels().im2col(
            x, kernel, out, geometry.stride, _before(geometry), geometry.dilation
        )
        return columns.reshape(geometry.groups, rows, x.shape[0] * math.prod(out))
    view = windows(x, geometry, kernel)
    # (N, C, *P, *K) → (C, *K, N, *P)
    order = (1, *range(2 + d, 2 + 2 * d), 0, *range(2, 2 + d))
    # Every size spelled out, no -1: with an empty batch (N = 0) -1 would be undetermined.
    positions = x.shape[0] * math.prod(view.shape[2 : 2 + d])
    return view.transpose(order).reshape(geometry.groups, rows, positions)


def _channel_major(y: np.ndarray) -> np.ndarray:
    """(N, C, *P) as (C, N·P): the layout the matmuls below read gradients in."""
    positions = y.shape[0] * math.prod(y.shape[2:])
    return _contiguous(y.swapaxes(0, 1)).reshape(y.shape[1], positions)


def convolve(x: np.ndarray, w: np.ndarray, geometry: Geometry) -> np.ndarray:
    """y = conv(x, w): (N, C_in, *S), (C_out, C_in/G, *K) → (N, C_out, *P)."""
    kernel, groups = w.shape[2:], geometry.groups
    out = geometry.output_size(x.shape[2:], kernel)
    columns = _columns(x, geometry, kernel)
    y = np.matmul(w.reshape(groups, w.shape[0] // groups, -1), columns)  # (G, C_out/G, N·P)
    y = y.reshape(w.shape[0], x.shape[0], *out)
    return _contiguous(y.swapaxes(0, 1))


def convolve_input_grad(
    dy: np.ndarray, w: np.ndarray, geometry: Geometry, size: tuple[int, ...]
) -> np.ndarray:
    """dx = Σ_o dy[n, o, p] · w[o, c, k] put back at window p's tap k: (N, C_in, *S)."""
    batch, out_channels = dy.shape[:2]
    out, kernel, groups = dy.shape[2:], w.shape[2:], geometry.groups
    # (G, C_out/G, N·P)
    rows = _channel_major(dy).reshape(groups, out_channels // groups, batch * math.prod(out))
    weights = w.reshape(groups, out_channels // groups, -1).transpose(0, 2, 1)
    columns = np.matmul(weights, rows)  # (G, C_in/G·K, N·P)
    columns = columns.reshape(groups * w.shape[1], *kernel, batch, *out)
    return fold(columns, geometry, size)


def convolve_weight_grad(
    x: np.ndarray, dy: np.ndarray, geometry: Geometry, kernel: tuple[int, ...]
) -> np.ndarray:
    """dw[o, c, k] = Σ_n,p dy[n, o, p] · x_pad[n, c, p·stride + k·dilation]: (C_out, C_in/G, *K)."""
    out_channels, groups = dy.shape[1], geometry.groups
    columns = _columns(x, geometry, kernel)  # (G, C_in/G·K, N·P)
    # (G, C_out/G, N·P)
    rows = _channel_major(dy).reshape(groups, out_channels // groups, columns.shape[2])
    dw = np.matmul(rows, columns.transpose(0, 2, 1))
    return dw.reshape(out_channels, x.shape[1] // groups, *kernel)


# --------------------------------------------------------------------------- Functions


def _channel_sum(grad: Variable) -> Variable:
    """A bias's gradient: grad (N, C, *P) summed over everything but the channels."""
    return grad.sum((0, *range(2, grad.ndim)))


class Convolution(Function):
    """y = conv(x, w) + b;  dx = conv_input_grad(dy, w), dw = conv_weight_grad(x, dy),
    db = Σ dy over the batch and the positions."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, w: Any, b: Any, geometry: Geometry
    ) -> np.ndarray:
        ctx.save_for_backward(x, w)
        ctx.geometry = geometry
        x_data, w_data = numeric(x, "conv"), numeric(w, "conv")
        y = convolve(x_data, w_data, geometry)
        if b is not None:
            y += numeric(b, "conv").reshape(-1, *(1,) * (y.ndim - 2))
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, w = ctx.saved_tensors
        geometry = ctx.geometry
        needs_x, needs_w, needs_b, _ = ctx.needs_input_grad
        dx = ConvolutionInputGrad.apply(grad, w, None, geometry, x.shape[2:]) if needs_x else None
        dw = ConvolutionWeightGrad.apply(x, grad, geometry, w.shape[2:]) if needs_w else None
        db = _channel_sum(grad) if needs_b else None
        return dx, dw, db, None


class ConvolutionInputGrad(Function):
    """z = conv_input_grad(g, w) + b, the transposed convolution (z has x's shape, `size`).

    Since <dz, conv_input_grad(g, w)> = <conv(dz, w), g> = <conv_weight_grad(dz, g), w>:
    dg = conv(dz, w), dw = conv_weight_grad(dz, g)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, g: Any, w: Any, b: Any, geometry: Geometry, size: tuple[int, ...]
    ) -> np.ndarray:
        ctx.save_for_backward(g, w)
        ctx.geometry = geometry
        z = convolve_input_grad(numeric(g, "conv"), numeric(w, "conv"), geometry, size)
        if b is not None:
            z += numeric(b, "conv").reshape(-1, *(1,) * (z.ndim - 2))
        return z

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        g, w = ctx.saved_tensors
        geometry = ctx.geometry
        needs_g, needs_w, needs_b, _, _ = ctx.needs_input_grad
        dg = Convolution.apply(grad, w, None, geometry) if needs_g else None
        dw = ConvolutionWeightGrad.apply(grad, g, geometry, w.shape[2:]) if needs_w else None
        db = _channel_sum(grad) if needs_b else None
        return dg, dw, db, None, None


class ConvolutionWeightGrad(Function):
    """v = conv_weight_grad(x, g), of w's shape (kernel size `kernel`).

    Since <dv, conv_weight_grad(x, g)> = <conv(x, dv), g> = <conv_input_grad(g, dv), x>:
    dx = conv_input_grad(g, dv), dg = conv(x, dv)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, g: Any, geometry: Geometry, kernel: tuple[int, ...]
    ) -> np.ndarray:
        ctx.save_for_backward(x, g)
        ctx.geometry = geometry
        return convolve_weight_grad(numeric(x, "conv"), numeric(g, "conv"), geometry, kernel)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, g = ctx.saved_tensors
        geometry = ctx.geometry
        needs_x, needs_g, _, _ = ctx.needs_input_grad
        dx = ConvolutionInputGrad.apply(g, grad, None, geometry, x.shape[2:]) if needs_x else None
        dg = Convolution.apply(x, grad, None, geometry) if needs_g else None
        return dx, dg, None, None


class Unfold(Function):
    """im2col as PyTorch's F.unfold: x (N, C, *S) → (N, C·K, L), L window positions;
    its backward is Fold (each window's gradient added back where it was taken)."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, geometry: Geometry, kernel: tuple[int, ...]
    ) -> np.ndarray:
        data = numeric(x, "unfold")
        ctx.geometry, ctx.size, ctx.kernel = geometry, data.shape[2:], kernel
        d = len(kernel)
        batch, channels = data.shape[:2]
        positions = math.prod(geometry.output_size(data.shape[2:], kernel))  # not -1: N may be 0
        if is_on_cuda(data):
            # the kernel's (C, *K, N, *P) → (N, C, *K, *P)
            columns = _columns(data, geometry, kernel).reshape(
                channels, *kernel, batch, positions
            )
            columns = _contiguous(columns.transpose(1 + d, 0, *range(1, 1 + d), 2 + d))
        else:
            view = windows(data, geometry, kernel)
            # (N, C, *P, *K) → (N, C, *K, *P) → (N, C·K, L)
            order = (0, 1, *range(2 + d, 2 + 2 * d), *range(2, 2 + d))
            columns = np.ascontiguousarray(view.transpose(order))
        return columns.reshape(batch, channels * math.prod(kernel), positions)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Fold.apply(grad, ctx.geometry, ctx.size, ctx.kernel), None, None


class Fold(Function):
    """col2im as PyTorch's F.fold, the adjoint of Unfold: columns (N, C·K, L) → (N, C, *S),
    overlapping windows summed; its backward is Unfold."""

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        columns: Any,
        geometry: Geometry,
        size: tuple[int, ...],
        kernel: tuple[int, ...],
    ) -> np.ndarray:
        data = numeric(columns, "fold")
        ctx.geometry, ctx.kernel = geometry, kernel
        out = geometry.output_size(size, kernel)
        batch = data.shape[0]
        channels = data.shape[1] // math.prod(kernel)
        d = len(kernel)
        blocks = data.reshape(batch, channels, *kernel, *out)
        # (N, C, *K, *P) → (C, *K, N, *P), fold's layout
        order = (1, *range(2, 2 + d), 0, *range(2 + d, 2 + 2 * d))
        return fold(blocks.transpose(order), geometry, size)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        return Unfold.apply(grad, ctx.geometry, ctx.kernel), None, None, None
