"""Convolutions, unfold/fold and pooling, as in torch.nn.functional (re-exported there).

Each function checks its arguments the way PyTorch does (same exception classes, a
message that names the mismatch), then calls one Function from nn/_functions/:
convolution.py (Convolution and its transposed form, Unfold, Fold) or pooling.py.
Inputs are (N, C, *S) with one or two spatial dims S; an unbatched (C, *S) input gets a
batch dim of 1 on the way in and loses it on the way out, as PyTorch allows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.nn._functions.convolution import (
    Convolution,
    ConvolutionInputGrad,
    Fold,
    Geometry,
    Unfold,
)
from minigrad.nn._functions.pooling import (
    AdaptiveAvgPool,
    AvgPool,
    MaxPool,
    adaptive_bins,
    pool_divisor,
)
from minigrad.ops.tooling.arguments import checks

checked_function = checks("minigrad.nn.functional")

PADDING_STRINGS = ("valid", "same")

# --------------------------------------------------------------------------- arguments


def spatial_tuple(value: Any, dims: int, name: str, caller: str) -> tuple[int, ...]:
    """An int (the same for every spatial dim) or a tuple of `dims` ints."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims
    if len(values) == 1 and dims > 1:
        values = values * dims
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
        raise TypeError(
            f"{caller}: {name} must be an int or a tuple of {dims} ints; got {value!r}."
        )
    if len(values) != dims:
        # RuntimeError, as PyTorch's "kernel_size must either be a single int, or a tuple
        # of two ints": the values are ints, there are just not `dims` of them.
        raise RuntimeError(
            f"{caller}: {name} must be a single int or a tuple of {dims} ints (one per "
            f"spatial dim); got {len(values)} values: {value!r}."
        )
    return tuple(int(v) for v in values)


def _batched(x: Any, dims: int, caller: str) -> tuple[Variable, bool]:
    """x as (N, C, *S), and whether it came unbatched (C, *S)."""
    if not isinstance(x, Variable) or x.is_text:
        raise TypeError(
            f"{caller}() expects a numeric Variable as input; got {type(x).__name__}. "
            f"Make one with minigrad.tensor(...)."
        )
    if x.ndim == dims + 2:
        return x, False
    if x.ndim == dims + 1:
        return x.unsqueeze(0), True
    raise RuntimeError(
        f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {caller}, but got "
        f"input of size: {list(x.shape)}"
    )


def _channel_hint(x: Variable, dims: int) -> str:
    """What to try when the channels do not match: the usual layouts that cause it."""
    if x.ndim == dims + 1:
        return (
            f"A {dims + 1}-D input is read as one unbatched (C, {', '.join('HW'[-dims:])}) "
            f"sample; for a batch of 1-channel inputs use x.unsqueeze(1)."
        )
    if dims == 2:
        return "Channels-last images (N, H, W, C) need x.permute(0, 3, 1, 2) first."
    return "Channels-last sequences (N, L, C) need x.transpose(1, 2) first."


def _same_device(x: Variable, others: tuple, caller: str) -> None:
    for name, other in others:
        if isinstance(other, Variable) and other.device != x.device:
            raise RuntimeError(
                f"{caller}: expected the input and the {name} on the same device; got input "
                f"on {x.device.type} and {name} on {other.device.type}. Move one: "
                f"x.to({other.device.type!r}) (or model.to({x.device.type!r}))."
            )


def _floating(x: Variable, what: str, caller: str) -> None:
    if x.dtype.kind != "f":
        raise RuntimeError(
            f"{caller}: the {what} must be floating point (float32 or float64); got dtype "
            f"{x.dtype}. Convert it: x.float()."
        )


def _size_text(size: tuple[int, ...]) -> str:
    return " x ".join(str(s) for s in size)


# --------------------------------------------------------------------------- convolution


def _conv_padding(
    padding: Any, dims: int, kernel: tuple[int, ...], stride: tuple[int, ...],
    dilation: tuple[int, ...], caller: str,
) -> tuple[tuple[int, int], ...]:
    """PyTorch's padding: an int, a tuple, 'valid' (none) or 'same' (the output keeps the
    input's size; an odd total puts the extra row after, as PyTorch does)."""
    if isinstance(padding, str):
        if padding not in PADDING_STRINGS:
            raise RuntimeError(  # PyTorch's class here; nn.Conv2d raises ValueError
                f"{caller}: invalid padding string {padding!r}; expected one of 'valid', "
                f"'same', an int or a tuple of {dims} ints."
            )
        if padding == "valid":
            return ((0, 0),) * dims
        if any(s != 1 for s in stride):
            raise RuntimeError(
                f"{caller}: padding='same' is not supported for strided convolutions (got "
                f"stride={stride}); pad explicitly, e.g. padding={kernel[0] // 2}."
            )
        pairs = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    amounts = spatial_tuple(padding, dims, "padding", caller)
    if any(p < 0 for p in amounts):
        raise RuntimeError(f"{caller}: negative padding is not supported; got {amounts}.")
    return tuple((p, p) for p in amounts)


def _positive(values: tuple[int, ...], name: str, caller: str) -> tuple[int, ...]:
    if any(v <= 0 for v in values):
        raise RuntimeError(f"{caller}: non-positive {name} is not supported; got {values}.")
    return values


def _groups(groups: Any, caller: str) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise RuntimeError(f"{caller}: groups must be a positive int; got {groups!r}.")
    return int(groups)


def _kernel_of(weight: Variable, caller: str) -> tuple[int, ...]:
    kernel = weight.shape[2:]
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"{caller}: kernel size should be greater than zero, but the weight of shape "
            f"{list(weight.shape)} has kernel size {kernel}."
        )
    return kernel


def _check_bias(bias: Any, channels: int, caller: str) -> None:
    if bias is None:
        return
    if not isinstance(bias, Variable) or bias.shape != (channels,):
        shape = list(bias.shape) if isinstance(bias, Variable) else type(bias).__name__
        raise RuntimeError(
            f"{caller}: expected bias to be a Variable of shape [{channels}] (one value per "
            f"output channel); got {shape}."
        )


def _common_dtype(x: Variable, weight: Variable, bias: Any, caller: str) -> tuple:
    """x, weight and bias in one dtype. PyTorch raises when they differ; minigrad promotes,
    as its other ops (and Linear) do, because its parameters default to float64 while
    image data usually comes as float32. The casts are recorded: gradients come back in
    each one's own dtype."""
    _floating(x, "input", caller)
    operands = [x, weight] + ([bias] if isinstance(bias, Variable) else [])
    dtype = np.result_type(*(operand.dtype for operand in operands))
    x, weight = (v if v.dtype == dtype else v.to(dtype) for v in (x, weight))
    if isinstance(bias, Variable) and bias.dtype != dtype:
        bias = bias.to(dtype)
    return x, weight, bias


def _conv_operands(
    x: Any, weight: Any, bias: Any, stride: Any, dilation: Any, dims: int, caller: str,
    weight_layout: str,
) -> tuple:
    """What a convolution and a transposed one check alike, in PyTorch's order: x batched
    (and whether it came unbatched), the weight's rank, devices, one dtype for x, weight and
    bias, the kernel, stride and dilation."""
    batched, unbatched = _batched(x, dims, caller)
    if not isinstance(weight, Variable) or weight.ndim != dims + 2:
        shape = list(weight.shape) if isinstance(weight, Variable) else type(weight).__name__
        raise RuntimeError(
            f"{caller}: expected weight of shape ({weight_layout}, "
            f"{', '.join(['k'] * dims)}) ({dims + 2}D); got {shape}."
        )
    _same_device(batched, (("weight", weight), ("bias", bias)), caller)
    batched, weight, bias = _common_dtype(batched, weight, bias, caller)
    kernel = _kernel_of(weight, caller)
    stride = _positive(spatial_tuple(stride, dims, "stride", caller), "stride", caller)
    dilation = _positive(spatial_tuple(dilation, dims, "dilation", caller), "dilation", caller)
    return batched, unbatched, weight, bias, kernel, stride, dilation


def _convolution(
    x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: Any,
    dims: int, caller: str,
) -> Variable:
    batched, unbatched, weight, bias, kernel, stride, dilation = _conv_operands(
        x, weight, bias, stride, dilation, dims, caller, "out_channels, in_channels / groups"
    )
    groups = _groups(groups, caller)
    pads = _conv_padding(padding, dims, kernel, stride, dilation, caller)
    out_channels, in_per_group = weight.shape[:2]
    if out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    if batched.shape[1] != in_per_group * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(batched.shape)} to have {in_per_group * groups} channels, but got "
            f"{batched.shape[1]} channels instead. {_channel_hint(x, dims)}"
        )
    _check_bias(bias, out_channels, caller)
    padded = tuple(s + a + b for s, (a, b) in zip(batched.shape[2:], pads))
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(e > p for e, p in zip(effective, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({_size_text(padded)}). Kernel size: "
            f"({_size_text(effective)}). Kernel size can't be greater than actual input size; "
            f"pad the input (padding=...) or use a smaller kernel or dilation"
        )
    geometry = Geometry(stride, pads, dilation, groups)
    y = Convolution.apply(batched, weight, bias, geometry)
    return y.squeeze(0) if unbatched else y


@checked_function
def conv1d(
    x: Variable, weight: Variable, bias: Variable | None = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1,
) -> Variable:
    """y = Σ x windows · weight + bias: x (N, C_in, L), weight (C_out, C_in/groups, K)
    → y (N, C_out, L_out), L_out = ⌊(L + 2·padding - dilation·(K-1) - 1) / stride⌋ + 1."""
    return _convolution(x, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@checked_function
def conv2d(
    x: Variable, weight: Variable, bias: Variable | None = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1,
) -> Variable:
    """y = Σ x windows · weight + bias: x (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW)
    → y (N, C_out, H_out, W_out), each size ⌊(S + 2·padding - dilation·(K-1) - 1) / stride⌋ + 1."""
    return _convolution(x, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose(
    x: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any,
    groups: Any, dilation: Any, dims: int, caller: str,
) -> Variable:
    batched, unbatched, weight, bias, kernel, stride, dilation = _conv_operands(
        x, weight, bias, stride, dilation, dims, caller, "in_channels, out_channels / groups"
    )
    pads = spatial_tuple(padding, dims, "padding", caller)
    extra = spatial_tuple(output_padding, dims, "output_padding", caller)
    groups = _groups(groups, caller)
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{caller}: negative padding is not supported; got {pads}.")
    if any(e < 0 or e >= s for e, s in zip(extra, stride)):
        raise RuntimeError(
            f"{caller}: output padding must be smaller than the stride (minigrad's rule; "
            f"PyTorch also allows it below the dilation); got output_padding={extra}, "
            f"stride={stride}."
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    if batched.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(batched.shape)} to have {weight.shape[0]} channels, but got "
            f"{batched.shape[1]} channels instead"
        )
    out_channels = weight.shape[1] * groups
    _check_bias(bias, out_channels, caller)
    size = tuple(
        (p - 1) * s - 2 * pad + d * (k - 1) + e + 1
        for p, s, pad, d, k, e in zip(batched.shape[2:], stride, pads, dilation, kernel, extra)
    )
    if any(s <= 0 for s in size):
        raise RuntimeError(
            f"{caller}: the output size {size} is not positive; lower the padding {pads}."
        )
    geometry = Geometry(stride, tuple((p, p) for p in pads), dilation, groups)
    y = ConvolutionInputGrad.apply(batched, weight, bias, geometry, size)
    return y.squeeze(0) if unbatched else y


@checked_function
def conv_transpose1d(
    x: Variable, weight: Variable, bias: Variable | None = None, stride: Any = 1,
    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
) -> Variable:
    """The gradient of conv1d with respect to its input, used as a layer: x (N, C_in, L),
    weight (C_in, C_out/groups, K) → (N, C_out, (L-1)·stride - 2·padding + dilation·(K-1)
    + output_padding + 1)."""
    return _conv_transpose(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d"
    )


@checked_function
def conv_transpose2d(
    x: Variable, weight: Variable, bias: Variable | None = None, stride: Any = 1,
    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
) -> Variable:
    """The gradient of conv2d with respect to its input, used as a layer (upsampling):
    x (N, C_in, H, W), weight (C_in, C_out/groups, kH, kW) → (N, C_out, H_out, W_out)."""
    return _conv_transpose(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d"
    )


# --------------------------------------------------------------------------- unfold and fold


def _pads(geometry: Geometry) -> tuple[int, ...]:
    """The symmetric padding of unfold and fold, one int per dim, for messages."""
    return tuple(before for before, _ in geometry.padding)


def _unfold_geometry(
    kernel_size: Any, dilation: Any, padding: Any, stride: Any, caller: str
) -> tuple[tuple[int, ...], Geometry]:
    kernel = _positive(spatial_tuple(kernel_size, 2, "kernel_size", caller), "kernel_size", caller)
    dilation = _positive(spatial_tuple(dilation, 2, "dilation", caller), "dilation", caller)
    stride = _positive(spatial_tuple(stride, 2, "stride", caller), "stride", caller)
    pads = spatial_tuple(padding, 2, "padding", caller)
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{caller}: negative padding is not supported; got {pads}.")
    return kernel, Geometry(stride, tuple((p, p) for p in pads), dilation)


@checked_function
def unfold(
    x: Variable, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Variable:
    """im2col: x (N, C, H, W) → (N, C·kH·kW, L), one column per window position."""
    batched, unbatched = _batched(x, 2, "unfold")
    kernel, geometry = _unfold_geometry(kernel_size, dilation, padding, stride, "unfold")
    out = geometry.output_size(batched.shape[2:], kernel)
    if any(p <= 0 for p in out):
        padded = tuple(s + a + b for s, (a, b) in zip(batched.shape[2:], geometry.padding))
        raise RuntimeError(
            f"unfold: the {kernel} kernel (dilation {geometry.dilation}) does not fit the "
            f"padded input of size {padded}."
        )
    y = Unfold.apply(batched, geometry, kernel)
    return y.squeeze(0) if unbatched else y


@checked_function
def fold(
    x: Variable, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
    stride: Any = 1,
) -> Variable:
    """col2im, the adjoint of unfold: x (N, C·kH·kW, L) → (N, C, *output_size), the values
    of overlapping windows summed."""
    if not isinstance(x, Variable) or x.ndim not in (2, 3):
        shape = list(x.shape) if isinstance(x, Variable) else type(x).__name__
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to fold, but got {shape}."
        )
    batched = x if x.ndim == 3 else x.unsqueeze(0)
    size = spatial_tuple(output_size, 2, "output_size", "fold")
    kernel, geometry = _unfold_geometry(kernel_size, dilation, padding, stride, "fold")
    taps = math.prod(kernel)
    blocks = geometry.output_size(size, kernel)
    if any(b <= 0 for b in blocks):
        raise RuntimeError(
            f"fold: given output_size={size}, kernel_size={kernel}, dilation="
            f"{geometry.dilation}, padding={_pads(geometry)}, stride={geometry.stride}, the "
            f"array of sliding blocks would have shape {blocks}: the kernel does not fit."
        )
    if batched.shape[1] % taps:
        raise RuntimeError(
            f"fold: expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size ({taps}), but got {batched.shape[1]}."
        )
    if batched.shape[2] != math.prod(blocks):
        raise RuntimeError(
            f"fold: given output_size={size}, kernel_size={kernel}, dilation="
            f"{geometry.dilation}, padding={_pads(geometry)}, stride={geometry.stride}, expected "
            f"size of input's dimension 2 to match the calculated number of sliding blocks "
            f"{' * '.join(map(str, blocks))} = {math.prod(blocks)}, but got {batched.shape[2]}."
        )
    y = Fold.apply(batched, geometry, size, kernel)
    return y if x.ndim == 3 else y.squeeze(0)


# --------------------------------------------------------------------------- pooling


def _pool_geometry(
    size: tuple[int, ...], kernel_size: Any, stride: Any, padding: Any, dilation: Any,
    ceil_mode: bool, dims: int, caller: str,
) -> tuple[tuple[int, ...], Geometry, tuple[int, ...]]:
    """The kernel, the windows' geometry and the padding asked for. ceil_mode lets the last
    window run past the padding (extra padding after, never counted), as long as it starts
    inside the input or the padding before it."""
    kernel = spatial_tuple(kernel_size, dims, "kernel_size", caller)
    kernel = _positive(kernel, "kernel_size", caller)
    stride = kernel if stride is None or stride == [] or stride == () else stride
    stride = _positive(spatial_tuple(stride, dims, "stride", caller), "stride", caller)
    dilation = _positive(spatial_tuple(dilation, dims, "dilation", caller), "dilation", caller)
    pads = spatial_tuple(padding, dims, "padding", caller)
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{caller}: padding must be non-negative; got {pads}.")
    for p, k, d in zip(pads, kernel, dilation):
        # PyTorch checks both: half of the effective kernel, and half of the kernel itself.
        if p > (d * (k - 1) + 1) // 2 or p > k // 2:
            raise RuntimeError(
                f"{caller}: pad should be at most half of the kernel size (and of the "
                f"effective kernel size, with dilation), but got pad={p}, kernel_size={k} and "
                f"dilation={d}."
            )
    pairs, out = [], []
    for s, k, st, p, d in zip(size, kernel, stride, pads, dilation):
        span = s + 2 * p - d * (k - 1) - 1
        count = (-(-span // st) if ceil_mode else span // st) + 1
        if ceil_mode and (count - 1) * st >= s + p:
            count -= 1  # the last window would start in the padding after: drop it
        if count <= 0:
            raise RuntimeError(
                f"{caller}: given input size {tuple(size)}, the output size would be "
                f"{count} along a dim: the window (kernel {k}, dilation {d}) is larger than "
                f"the padded input."
            )
        needed = (count - 1) * st + d * (k - 1) + 1
        pairs.append((p, max(p, needed - s - p)))
        out.append(count)
    return kernel, Geometry(stride, tuple(pairs), dilation), pads


def _max_pool(
    x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
    return_indices: bool, dims: int, caller: str,
) -> Any:
    batched, unbatched = _batched(x, dims, caller)
    if batched.dtype.kind == "b":
        raise NotImplementedError(
            f'"{caller}" not implemented for bool inputs; convert first: x.float().'
        )
    kernel, geometry, _ = _pool_geometry(
        batched.shape[2:], kernel_size, stride, padding, dilation, ceil_mode, dims, caller
    )
    values, indices = MaxPool.apply(batched, geometry, kernel)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


@checked_function
def max_pool1d(
    x: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False,
) -> Any:
    """The largest value of each window: x (N, C, L) → (N, C, L_out), and with
    return_indices the position in L each came from."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d"
    )


@checked_function
def max_pool2d(
    x: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False,
) -> Any:
    """The largest value of each window: x (N, C, H, W) → (N, C, H_out, W_out), and with
    return_indices each one's flat position h·W + w in its channel."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d"
    )


def _avg_pool(
    x: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any, dims: int, caller: str,
) -> Variable:
    batched, unbatched = _batched(x, dims, caller)
    _floating(batched, "input", caller)
    kernel, geometry, pads = _pool_geometry(
        batched.shape[2:], kernel_size, stride, padding, 1, ceil_mode, dims, caller
    )
    size = batched.shape[2:]
    out = geometry.output_size(size, kernel)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int) or (
            divisor_override <= 0
        ):
            raise RuntimeError(
                f"{caller}: divisor must be a positive int; got {divisor_override!r}."
            )
        divisor = np.full(out, float(divisor_override))
    else:
        divisor = pool_divisor(size, out, geometry, kernel, pads, bool(count_include_pad))
    y = AvgPool.apply(batched, geometry, kernel, divisor.astype(batched.dtype))
    return y.squeeze(0) if unbatched else y


@checked_function
def avg_pool1d(
    x: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True,
) -> Variable:
    """The mean of each window: x (N, C, L) → (N, C, L_out)."""
    return _avg_pool(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d"
    )


@checked_function
def avg_pool2d(
    x: Variable, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None,
) -> Variable:
    """The mean of each window: x (N, C, H, W) → (N, C, H_out, W_out)."""
    return _avg_pool(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
        "avg_pool2d",
    )


def _adaptive_avg_pool(x: Any, output_size: Any, dims: int, caller: str) -> Variable:
    batched, unbatched = _batched(x, dims, caller)
    _floating(batched, "input", caller)
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * dims
    if len(sizes) != dims:
        raise RuntimeError(
            f"{caller}: output_size must be an int or a tuple of {dims} ints (None keeps a "
            f"dim's size); got {output_size!r}."
        )
    out = []
    for given, size in zip(sizes, batched.shape[2:]):
        if given is None:
            given = size
        if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given <= 0:
            raise RuntimeError(
                f"{caller}: output_size must hold positive ints (or None); got {output_size!r}."
            )
        out.append(int(given))
    matrices = tuple(
        adaptive_bins(size, o, batched.dtype) for size, o in zip(batched.shape[2:], out)
    )
    y = AdaptiveAvgPool.apply(batched, matrices)
    return y.squeeze(0) if unbatched else y


@checked_function
def adaptive_avg_pool1d(x: Variable, output_size: Any) -> Variable:
    """The mean over output_size adaptive bins: x (N, C, L) → (N, C, output_size)."""
    return _adaptive_avg_pool(x, output_size, 1, "adaptive_avg_pool1d")


@checked_function
def adaptive_avg_pool2d(x: Variable, output_size: Any) -> Variable:
    """The mean over adaptive bins: x (N, C, H, W) → (N, C, *output_size); each bin runs
    from ⌊i·H/out⌋ to ⌈(i+1)·H/out⌉."""
    return _adaptive_avg_pool(x, output_size, 2, "adaptive_avg_pool2d")
