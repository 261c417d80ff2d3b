"""interpolate, as in torch.nn.functional (re-exported there): resizing the spatial dims of
x (N, C, *spatial) to a new size, by PyTorch's formulas.

Every mode resizes one spatial dim at a time. Along a dim of size n → m, output position o
reads a few input positions near its source coordinate s(o) and weighs them:

    y[o] = Σ_k w_k(o) · x[i_k(o)]

- nearest: one position, ⌊o·scale⌋ (nearest-exact: ⌊(o + ½)·scale⌋), weight 1;
- linear: the two neighbours of s = scale·(o + ½) - ½ (clamped at 0), weights 1 - λ and λ;
- bicubic: the four neighbours, weights from the cubic convolution kernel (a = -0.75),
  positions past an edge reading the edge;
- with align_corners=True the corners of input and output line up: s = o·(n - 1)/(m - 1).

scale is n/m, or 1/scale_factor when a scale_factor is given (and not recomputed). Each
term is an index_select times a constant, so the engine differentiates it: the backward
adds w·dy into the positions each output read. 'area' is adaptive average pooling.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.nn.functional_conv import adaptive_avg_pool1d, adaptive_avg_pool2d
from minigrad.ops.tooling.arguments import checks

checked_function = checks("minigrad.nn.functional")

MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
# The number of spatial dims each interpolating mode works on (PyTorch names them by it).
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_SIZE_NAMES = ("D", "H", "W")
CUBIC_A = -0.75  # the cubic convolution kernel's parameter, as PyTorch (and OpenCV) use


@checked_function
def interpolate(
    x: Variable,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Variable:
    """x (N, C, *spatial) resized to `size`, or to ⌊spatial·scale_factor⌋, by `mode`:
    'nearest', 'nearest-exact', 'linear' (3-D x), 'bilinear' or 'bicubic' (4-D),
    'trilinear' (5-D) or 'area'. See the module docstring for the formulas."""
    if not isinstance(x, Variable) or x.is_text:
        got = "a text Variable" if isinstance(x, Variable) else type(x).__name__
        raise TypeError(
            f"interpolate() expects a numeric Variable as input; got {got}. Make one with "
            f"minigrad.tensor(...)."
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                f"bilinear | bicubic | trilinear; got align_corners={align_corners!r} with "
                f"mode={mode!r}. Leave it None."
            )
    elif align_corners is None:
        align_corners = False
    dims = x.ndim - 2
    out_sizes, scales = _sizes_and_scales(x, dims, size, scale_factor, recompute_scale_factor)
    if mode == "area" and size is None:
        scales = None  # PyTorch recomputes area's scale from the sizes
    if antialias and not (mode in ("bilinear", "bicubic") and x.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            f"requires a 4-D tensor as input; got mode={mode!r} and a {x.ndim}-D input."
        )
    _check_mode(x, mode)
    if antialias:
        raise NotImplementedError(
            "interpolate: antialias=True is not supported by minigrad; leave it False."
        )
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"interpolate ({mode}) is not implemented for dtype {x.dtype}; convert the input "
            f"first: x.float() or x.double()."
        )
    if mode == "area":  # adaptive pooling, which allows an empty output, as PyTorch's
        return _area(x, out_sizes)
    _check_sizes(x, out_sizes)
    y = x
    # The last dim first: PyTorch's kernels weigh along W innermost, so its float32 roundings
    # come out the same.
    for axis in reversed(range(len(out_sizes))):
        out_size = out_sizes[axis]
        dim = 2 + axis
        scale = None if scales is None else scales[axis]
        y = _resize_dim(y, dim, out_size, scale, mode, bool(align_corners))
    return y


def _sizes_and_scales(
    x: Variable, dims: int, size: Any, scale_factor: Any, recompute: Any
) -> tuple[list[int], list[float] | None]:
    """The output's spatial sizes, and the scale factors the coordinates use (None: taken
    from the sizes), from size= or scale_factor= (exactly one), as PyTorch reads them."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined; pass one of them.")
    if size is None and scale_factor is None:
        raise ValueError(
            "either size or scale_factor should be defined: the output's spatial size, or "
            "the factor to multiply the input's by."
        )
    spatial = list(x.shape[2:])
    if size is not None:
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = _per_dim(size, dims, "size", spatial)
        if not all(_is_int(value) for value in sizes):
            raise TypeError(
                "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                f"Tuple[int, int, int], but got size with types {[type(v) for v in sizes]}."
            )
        return [int(value) for value in sizes], None
    factors = _per_dim(scale_factor, dims, "scale_factor", spatial)
    if not all(isinstance(f, numbers.Real) and not isinstance(f, bool) for f in factors):
        raise TypeError(
            f"interpolate: scale_factor must be a number or a tuple of numbers, one per "
            f"spatial dim; got {scale_factor!r}."
        )
    factors = [float(f) for f in factors]
    out_sizes = [math.floor(n * f) for n, f in zip(spatial, factors)]
    return out_sizes, (None if recompute else factors)


def _per_dim(value: Any, dims: int, name: str, spatial: list[int]) -> list:
    """value as one entry per spatial dim: a single one repeated, or a list of dims."""
    if not isinstance(value, (list, tuple)):
        return [value] * max(dims, 0)
    if len(value) != dims:
        given = "output size of" if name == "size" else "scale_factor of shape"
        raise ValueError(
            f"Input and {'output' if name == 'size' else 'scale_factor'} must have the same "
            f"number of spatial dimensions, but got input with spatial dimensions of "
            f"{spatial} and {given} {value}. Please provide input tensor in (N, C, d1, d2, "
            f"...,dK) format and {name} in (o1, o2, ...,oK) format."
        )
    return list(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_mode(x: Variable, mode: Any) -> None:
    """PyTorch's NotImplementedError for an unknown mode or a mode of another rank."""
    if mode in _MODE_DIMS and x.ndim in (3, 4, 5) and x.ndim - 2 != _MODE_DIMS[mode]:
        raise NotImplementedError(
            f"Got {x.ndim}D input, but {mode} mode needs {_MODE_DIMS[mode] + 2}D input."
        )
    if mode not in MODES or x.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: {' | '.join(MODES)} (got {mode})."
        )


def _check_sizes(x: Variable, out_sizes: list[int]) -> None:
    spatial = list(x.shape[2:])
    if all(n > 0 for n in spatial) and all(m > 0 for m in out_sizes):
        return
    names = _SIZE_NAMES[-len(spatial):]

    def described(sizes: list[int]) -> str:
        return ", ".join(f"{name}: {value}" for name, value in zip(names, sizes))

    raise RuntimeError(
        f"Input and output sizes should be greater than 0, but got input ({described(spatial)}) "
        f"and output ({described(out_sizes)})."
    )


def _area(x: Variable, out_sizes: list[int]) -> Variable:
    if 0 in out_sizes:
        # No element to average: an empty output of the right shape (adaptive pooling here
        # refuses a size of 0), still in the graph.
        empty = x
        for axis, out_size in enumerate(out_sizes):
            empty = empty.index_select(2 + axis, np.zeros(out_size, dtype=np.int64))
        return empty
    if x.ndim == 3:
        return adaptive_avg_pool1d(x, out_sizes[0])
    if x.ndim == 4:
        return adaptive_avg_pool2d(x, tuple(out_sizes))
    raise NotImplementedError(
        "interpolate: mode='area' on a 5-D input needs adaptive_avg_pool3d, which minigrad "
        "does not have; resize 3-D or 4-D inputs, or use mode='trilinear'."
    )


# --------------------------------------------------------------------------- one dim


def _resize_dim(
    x: Variable, dim: int, out_size: int, scale: float | None, mode: str, align_corners: bool
) -> Variable:
    """x resized along dim to out_size: y[o] = Σ_k w_k(o) · x[i_k(o)] (module docstring)."""
    in_size = x.shape[dim]
    if mode in ("nearest", "nearest-exact"):
        positions = _nearest_positions(in_size, out_size, scale, mode, x.dtype)
        return x.index_select(dim, positions)
    taps = _linear_taps if mode != "bicubic" else _cubic_taps
    y = None
    for positions, weights in taps(in_size, out_size, scale, align_corners, x.dtype):
        shaped = weights.reshape((-1,) + (1,) * (x.ndim - 1 - dim))  # broadcasts along dim
        term = x.index_select(dim, positions) * Variable._make(shaped)
        y = term if y is None else y + term
    return y


def _source_step(
    in_size: int, out_size: int, scale: float | None, align_corners: bool, dtype: np.dtype
) -> Any:
    """Input units per output unit: (n - 1)/(m - 1) with aligned corners, else 1/scale_factor
    when one is given, else n/m (in x's dtype, as PyTorch computes it)."""
    if align_corners:
        return dtype.type((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(in_size / out_size)


def _nearest_positions(
    in_size: int, out_size: int, scale: float | None, mode: str, dtype: np.dtype
) -> np.ndarray:
    step = _source_step(in_size, out_size, scale, False, dtype)
    outputs = np.arange(out_size, dtype=dtype)
    if mode == "nearest-exact":
        outputs = outputs + dtype.type(0.5)
    return np.minimum(np.floor(outputs * step).astype(np.int64), in_size - 1)


def _source_coordinates(
    in_size: int, out_size: int, scale: float | None, align_corners: bool, dtype: np.dtype,
    cubic: bool,
) -> np.ndarray:
    """s(o) for each output position o (module docstring); linear clamps it at 0."""
    step = _source_step(in_size, out_size, scale, align_corners, dtype)
    if align_corners:
        return step * np.arange(out_size, dtype=dtype)
    # In float64, rounded to x's dtype once at the end, as PyTorch's (o + 0.5) is a double.
    source = (np.float64(step) * (np.arange(out_size) + 0.5) - 0.5).astype(dtype)
    return source if cubic else np.maximum(source, 0)


def _linear_taps(
    in_size: int, out_size: int, scale: float | None, align_corners: bool, dtype: np.dtype
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The left and right neighbours of each s(o), with weights 1 - λ and λ."""
    source = _source_coordinates(in_size, out_size, scale, align_corners, dtype, cubic=False)
    left = source.astype(np.int64)  # s >= 0, so truncating floors it
    right = np.minimum(left + 1, in_size - 1)
    fraction = np.clip(source - left, 0, 1).astype(dtype)
    return [(left, 1 - fraction), (right, fraction)]


def _cubic_taps(
    in_size: int, out_size: int, scale: float | None, align_corners: bool, dtype: np.dtype
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The four neighbours i - 1 .. i + 2 of each s(o) (i = ⌊s⌋, read at the edge when past
    it), weighted by the cubic convolution kernel at their distances from s."""
    source = _source_coordinates(in_size, out_size, scale, align_corners, dtype, cubic=True)
    base = np.minimum(np.floor(source).astype(np.int64), in_size - 1)
    t = np.clip(source - base, 0, 1).astype(dtype)
    distances = (t + 1, t, 1 - t, 2 - t)
    taps = []
    for offset, distance in zip((-1, 0, 1, 2), distances):
        positions = np.clip(base + offset, 0, in_size - 1)
        taps.append((positions, _cubic_kernel(distance).astype(dtype)))
    return taps


def _cubic_kernel(distance: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution weight at |distance| < 2: ((a + 2)d - (a + 3))d² + 1 within 1,
    ((a·d - 5a)d + 8a)d - 4a between 1 and 2."""
    a = CUBIC_A
    near = ((a + 2) * distance - (a + 3)) * distance * distance + 1
    far = ((a * distance - 5 * a) * distance + 8 * a) * distance - 4 * a
    return np.where(distance <= 1, near, far)
