"""pad, as in torch.nn.functional (re-exported there): constant, reflect, replicate and
circular padding of the last dimensions.

pad = (before_last, after_last, before_2nd_last, after_2nd_last, ...), as in PyTorch.
Constant padding is the Function ConstantPad (nn/_functions/pad.py). The other modes only
copy existing values, so each padded dim is one index_select: position i of the output, for
i in [-before, size + after), reads

    reflect    x[|i|], mirrored back from the far end: x[2(size - 1) - i] for i >= size
    replicate  x[clamp(i, 0, size - 1)]
    circular   x[i mod size]

and the engine's index_select backward adds each output's gradient into the element it
read (an edge element collects several). A negative amount crops, as the same formula says,
except in circular mode, which (as PyTorch) crops first and wraps around what is left.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.nn._functions import ConstantPad
from minigrad.ops.tooling.arguments import checks

checked_function = checks("minigrad.nn.functional")

MODES = ("constant", "reflect", "replicate", "circular")
_SIZE_NAMES = ("W", "H", "D")  # PyTorch's names for the last, second-to-last, ... dims


@checked_function
def pad(x: Variable, pad: Any, mode: str = "constant", value: float | None = None) -> Variable:
    """Pad the last len(pad) // 2 dims of x by pad = (before_last, after_last, ...); negative
    amounts crop. mode: 'constant' (filled with value, default 0), 'reflect' (mirrored,
    the edge not repeated), 'replicate' (the edge repeated) or 'circular' (wrapped around)."""
    if not isinstance(x, Variable) or x.is_text:
        got = "a text Variable" if isinstance(x, Variable) else type(x).__name__
        raise TypeError(
            f"pad() expects a numeric Variable as input; got {got}. Make one with "
            f"minigrad.tensor(...)."
        )
    amounts = _amounts(pad)
    if len(amounts) % 2:
        raise RuntimeError(
            f"Padding length must be divisible by 2 (a before and an after amount per dim); "
            f"got {len(amounts)} amounts: {amounts}."
        )
    if len(amounts) // 2 > x.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(amounts)} and input of dimension {x.ndim} (shape "
            f"{list(x.shape)})."
        )
    if not isinstance(mode, str) or mode not in MODES:
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}; use one of {', '.join(MODES)}."
        )
    if mode == "constant":
        return _constant(x, amounts, value)
    if value is not None and value != 0:
        raise RuntimeError(
            f'Padding mode "{mode}" doesn\'t take in value argument; got value={value!r}. '
            f"Leave value out (only mode='constant' fills with it)."
        )
    _check_index_padding(x, amounts, mode)
    y = x
    for pair in range(len(amounts) // 2):
        dim = x.ndim - 1 - pair
        before, after = amounts[2 * pair], amounts[2 * pair + 1]
        if before or after:
            y = y.index_select(dim, _source_positions(x.shape[dim], before, after, mode))
    return y if y is not x else x.clone()  # nothing padded: a copy, as PyTorch's


def _amounts(pad: Any) -> tuple[int, ...]:
    """pad as a tuple of ints, else PyTorch's TypeError."""
    amounts = tuple(pad) if isinstance(pad, (tuple, list)) else None
    if amounts is None or any(
        isinstance(a, bool) or not isinstance(a, (int, np.integer)) for a in amounts
    ):
        raise TypeError(f"pad expects a tuple of ints (before, after, ...); got {pad!r}.")
    return tuple(int(a) for a in amounts)


def _constant(x: Variable, amounts: tuple[int, ...], value: float | None) -> Variable:
    for pair in range(len(amounts) // 2):
        dim = x.ndim - 1 - pair
        if x.shape[dim] + amounts[2 * pair] + amounts[2 * pair + 1] < 0:
            raise RuntimeError(
                f"pad {amounts} would give dim {dim} (size {x.shape[dim]}) a negative size; "
                f"crop by at most the dim's size."
            )
    if not amounts:
        return x.clone()  # nothing to pad: a copy, as PyTorch's
    return ConstantPad.apply(x, amounts, 0.0 if value is None else value)


def _check_index_padding(x: Variable, amounts: tuple[int, ...], mode: str) -> None:
    """PyTorch's limits for the modes that copy values: 1, 2 or 3 padded dims, with a channel
    dim and an optional batch dim in front; amounts the input can supply."""
    padded = len(amounts) // 2
    if padded not in (1, 2, 3) or x.ndim not in (padded + 1, padded + 2):
        raise NotImplementedError(
            f"Padding size {len(amounts)} is not supported for {x.ndim}D input tensor (mode "
            f"{mode!r}). Supported combinations for non-constant padding: a 2D or 3D input "
            f"with padding size 2 (pads the last dim), 3D or 4D with 4 (the last 2 dims), 4D "
            f"or 5D with 6 (the last 3 dims)."
        )
    shape = list(x.shape)
    if mode != "circular":
        batched = x.ndim == padded + 2
        others = shape[1:] if batched else shape
        if 0 in others:
            raise RuntimeError(
                f"Expected {padded + 1}D or {padded + 2}D (batch mode) tensor with possibly 0 "
                f"batch size and other non-zero dimensions for input, but got: {shape}."
            )
    for pair in range(padded):
        dim = x.ndim - 1 - pair
        size, before, after = shape[dim], amounts[2 * pair], amounts[2 * pair + 1]
        if mode == "reflect" and not (before < size and after < size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                f"{shape}. Reflection mirrors the values inside the dim, without its edge."
            )
        if mode == "circular":
            # What is left after cropping; each side wraps around it at most once.
            kept = size - max(-before, 0) - max(-after, 0)
            if not (before <= size and after <= size) or max(before, after) > kept:
                raise RuntimeError(
                    f"Padding value causes wrapping around more than once: padding ({before}, "
                    f"{after}) at dimension {dim} of input {shape} leaves {max(kept, 0)} "
                    f"values to wrap around; pad by at most that many."
                )
        if size + before + after < 1:
            name = _SIZE_NAMES[pair]
            raise RuntimeError(
                f"input ({name}: {size}) is too small. Calculated output {name}: "
                f"{size + before + after}. Crop less (negative amounts crop)."
            )


def _source_positions(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each output position along a dim, the input position it copies (see the module
    docstring)."""
    if mode == "circular":
        start = max(-before, 0)
        kept = size - start - max(-after, 0)
        return start + np.arange(-max(before, 0), kept + max(after, 0)) % kept
    positions = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(positions, 0, size - 1)
    mirrored = np.abs(positions)
    return np.where(mirrored >= size, 2 * (size - 1) - mirrored, mirrored)
