"""Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, and Unfold/Fold.

Each holds its weight (and bias) and calls nn.functional; the weight starts as PyTorch's
does, Kaiming-uniform with a = √5 over fan_in = in_channels / groups · kernel elements.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.functional_conv import PADDING_STRINGS, spatial_tuple
from minigrad.nn.linear import bias_flag
from minigrad.nn.module import Module

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")  # PyTorch's; minigrad: zeros


def _channels(value: Any, name: str, layer: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{layer}: {name} must be a positive int; got {value!r}.")
    if value <= 0:  # ValueError, as PyTorch's "groups must be a positive integer"
        raise ValueError(f"{layer}: {name} must be a positive integer; got {value}.")
    return int(value)


class _ConvNd(Module):
    """What the convolution layers share: checked arguments, parameters, their start."""

    dims = 2
    transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        output_padding: Any = 0,
    ) -> None:
        super().__init__()
        layer = type(self).__name__
        self.in_channels = _channels(in_channels, "in_channels", layer)
        self.out_channels = _channels(out_channels, "out_channels", layer)
        self.groups = _channels(groups, "groups", layer)
        if in_channels % groups:
            raise ValueError(f"in_channels must be divisible by groups ({in_channels} by {groups})")
        if out_channels % groups:
            raise ValueError(
                f"out_channels must be divisible by groups ({out_channels} by {groups})"
            )
        if padding_mode not in PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {PADDING_MODES}, but got "
                f"padding_mode={padding_mode!r}"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"{layer}: padding_mode {padding_mode!r} is not supported by minigrad; only "
                f"'zeros' is. Pad the input yourself first (F.pad)."
            )
        self.padding_mode = padding_mode
        self.kernel_size = spatial_tuple(kernel_size, self.dims, "kernel_size", layer)
        self.stride = spatial_tuple(stride, self.dims, "stride", layer)
        self.dilation = spatial_tuple(dilation, self.dims, "dilation", layer)
        if isinstance(padding, str):
            if padding not in PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = spatial_tuple(padding, self.dims, "padding", layer)
        self.output_padding = spatial_tuple(output_padding, self.dims, "output_padding", layer)
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(factories.empty(*shape))
        if bias_flag(bias, layer):
            self.bias = Parameter(factories.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self.dims:
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) else (
                f", padding={self.padding}"
            )
        if self.dilation != (1,) * self.dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """y = conv1d(x, weight, bias): x (N, C_in, L) → (N, C_out, L_out);
    weight (C_out, C_in/groups, K)."""

    dims = 1

    def forward(self, x: Variable) -> Variable:
        return F.conv1d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv2d(_ConvNd):
    """y = conv2d(x, weight, bias): x (N, C_in, H, W) → (N, C_out, H_out, W_out);
    weight (C_out, C_in/groups, kH, kW)."""

    dims = 2

    def forward(self, x: Variable) -> Variable:
        return F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
    ) -> None:
        if isinstance(padding, str):
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or a tuple of ints (no 'same' "
                f"or 'valid' for transposed convolutions); got {padding!r}."
            )
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, output_padding,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """y = conv_transpose1d(x, weight, bias), the input-gradient of a Conv1d used as a layer:
    x (N, C_in, L) → (N, C_out, (L-1)·stride - 2·padding + dilation·(K-1) + output_padding + 1)."""

    dims = 1

    def forward(self, x: Variable) -> Variable:
        return F.conv_transpose1d(
            x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation,
        )


class ConvTranspose2d(_ConvTransposeNd):
    """y = conv_transpose2d(x, weight, bias): upsampling, x (N, C_in, H, W) →
    (N, C_out, H_out, W_out); weight (C_in, C_out/groups, kH, kW)."""

    dims = 2

    def forward(self, x: Variable) -> Variable:
        return F.conv_transpose2d(
            x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation,
        )


class Unfold(Module):
    """im2col: (N, C, H, W) → (N, C·kH·kW, L), one column per window position."""

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Variable) -> Variable:
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Module):
    """col2im: (N, C·kH·kW, L) → (N, C, *output_size), overlapping windows summed."""

    def __init__(
        self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Variable) -> Variable:
        return F.fold(
            x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )
