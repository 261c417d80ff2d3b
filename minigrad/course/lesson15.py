"""Checks for lesson 15 (convolutions and normalization), and the references the lesson uses.

Exercise 15.1 calls the learner's `conv2d_input_grad(grad_output, weight, input_size,
stride, padding)` on cases of its own (input and output channels that differ, a kernel that
is not square, strides that leave the last rows of the padded input to no window, padding
in one case and x's own rows in another, a kernel smaller than its stride) and compares
with `conv2d_input_grad` below, which adds each window's gradient back where the window was
taken from: another algorithm than the flipped-kernel correlation the lesson derives.
Exercise 15.2 calls `batch_norm_backward(grad_output, x, eps)` on batches of its own, one
with a large `eps` (where an eps in the wrong place, or a fixed one, shows plainly).
Exercises 15.3 and 15.4 call `output_sizes(size, layers)` and `receptive_field(layers)` on
stacks of layers whose first case tells every named mistake apart. A wrong shape or value
is matched against what each likely mistake gives, and the message names that mistake.

The references are what the lesson's cells use after each exercise, so the lesson runs on
whatever the learner wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minigrad.course import check


class Layer(NamedTuple):
    """A layer's window along one spatial dimension (a convolution's or a pooling's): what
    output sizes and receptive fields depend on."""

    kernel: int
    stride: int = 1
    padding: int = 0
    dilation: int = 1


# --------------------------------------------------------------------------- references


def conv2d_input_grad(
    grad_output: np.ndarray,
    weight: np.ndarray,
    input_size: tuple[int, int],
    stride: int = 1,
    padding: int = 0,
) -> np.ndarray:
    """dx for y = conv2d(x, weight, stride=stride, padding=padding), x of spatial size
    `input_size`: window (i, j) read x_pad at rows i·s + a, columns j·s + b (a, b the
    kernel's taps), so its gradient Σ_o dy[n, o, i, j] · w[o, c, a, b] is added back
    there, one strided slice per tap; then the padding is cut off (PyTorch's
    torch.nn.grad.conv2d_input)."""
    dy = np.asarray(grad_output, dtype=float)
    w = np.asarray(weight, dtype=float)
    batch, _, rows, cols = dy.shape
    _, channels, kernel_rows, kernel_cols = w.shape
    height, width = input_size
    padded = np.zeros((batch, channels, height + 2 * padding, width + 2 * padding))
    for a in range(kernel_rows):
        for b in range(kernel_cols):
            where = (
                slice(None),
                slice(None),
                slice(a, a + stride * (rows - 1) + 1, stride),
                slice(b, b + stride * (cols - 1) + 1, stride),
            )
            padded[where] += np.einsum("nopq,oc->ncpq", dy, w[:, :, a, b])
    return padded[:, :, padding : padding + height, padding : padding + width]


def batch_norm_backward(
    grad_output: np.ndarray, x: np.ndarray, eps: float = 1e-5
) -> np.ndarray:
    """dx for x̂ = (x - μ) / √(σ² + eps), μ and the biased σ² of each column of x (N, C)
    over the batch: the compact form dx = (dy - mean(dy) - x̂ · mean(dy · x̂)) / σ."""
    dy = np.asarray(grad_output, dtype=float)
    x = np.asarray(x, dtype=float)
    sigma = np.sqrt(x.var(axis=0) + eps)
    normalized = (x - x.mean(axis=0)) / sigma
    return (dy - dy.mean(axis=0) - normalized * (dy * normalized).mean(axis=0)) / sigma


def output_size(size: int, layer: Layer) -> int:
    """⌊(S + 2p - d(k - 1) - 1) / s⌋ + 1: how many windows fit."""
    kernel, stride, padding, dilation = layer
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def output_sizes(size: int, layers: Sequence[Layer]) -> list[int]:
    """The spatial size after each layer of a stack, for an input of `size`."""
    sizes = []
    for layer in layers:
        size = output_size(size, layer)
        sizes.append(size)
    return sizes


def receptive_field(layers: Sequence[Layer]) -> int:
    """How many inputs (along one dimension) one output of the stack depends on.

    Walking from the input: a layer's taps lie d·jump apart in the input, where jump is the
    product of the strides of the layers before it; its k taps widen the field by
    d·(k - 1)·jump. Padding moves where a window sits, not how wide it is."""
    field, jump = 1, 1
    for kernel, stride, _, dilation in layers:
        field += dilation * (kernel - 1) * jump
        jump *= stride
    return field


# The references under names the checks' arguments (named as the learner's functions) do not
# hide.
_reference_input_grad = conv2d_input_grad
_reference_batch_norm_backward = batch_norm_backward
_reference_output_sizes = output_sizes
_reference_receptive_field = receptive_field


# --------------------------------------------------------------------------- Exercise 15.1

# (batch, channels in, channels out, input size, kernel, stride, padding). The first case
# tells the named mistakes apart (a kernel that is not square, stride 2, padding 1); then a
# square kernel (where a transposed kernel is a mistake of its own), a stride that leaves
# the last padded row to no window, a kernel smaller than its stride (inputs between the
# windows), a stride that leaves the last row and column of x itself to no window (there
# cutting the padding off cannot hide them), and stride 1. Every case has padding: padding
# 0 is graded apart.
_CONV_CASES: list[tuple[int, int, int, tuple[int, int], tuple[int, int], int, int]] = [
    (2, 2, 3, (5, 6), (3, 2), 2, 1),
    (1, 3, 2, (5, 5), (3, 3), 2, 1),
    (2, 1, 2, (6, 7), (3, 3), 2, 1),
    (1, 2, 2, (7, 7), (2, 2), 3, 2),
    (1, 2, 3, (8, 9), (2, 3), 3, 1),
    (1, 1, 2, (4, 4), (3, 3), 1, 1),
]


def conv_output_size(
    size: tuple[int, int], kernel: tuple[int, int], stride: int, padding: int
) -> tuple[int, int]:
    """The output's spatial size, per dimension (dilation 1)."""
    return tuple(output_size(s, Layer(k, stride, padding)) for s, k in zip(size, kernel))


def _by_correlation(
    dy: np.ndarray,
    w: np.ndarray,
    size: tuple[int, int],
    stride: int,
    padding: int,
    flip: tuple[bool, bool] = (True, True),
    crop: str = "centre",
    spread: str = "zeros",
) -> np.ndarray:
    """dx as the lesson derives it (dy spread by the stride, a full correlation with the
    flipped kernel over the output channels, the padding cut off), with knobs that make
    each likely mistake: which axes are flipped, where the padding is cut, how dy is
    spread."""
    batch, out_channels, rows, cols = dy.shape
    k, kw = w.shape[2:]
    height, width = size
    spread_rows, spread_cols = (rows - 1) * stride + 1, (cols - 1) * stride + 1
    if spread == "zeros":
        spreaded = np.zeros((batch, out_channels, spread_rows, spread_cols))
        spreaded[:, :, ::stride, ::stride] = dy
    else:  # each value repeated stride times
        repeated = np.repeat(np.repeat(dy, stride, axis=2), stride, axis=3)
        spreaded = repeated[:, :, :spread_rows, :spread_cols]
    extra_rows = height + 2 * padding - (spread_rows - 1 + k)
    extra_cols = width + 2 * padding - (spread_cols - 1 + kw)
    full = np.pad(
        spreaded, ((0, 0), (0, 0), (k - 1, k - 1 + extra_rows), (kw - 1, kw - 1 + extra_cols))
    )
    kernel = w[:, :, :: -1 if flip[0] else 1, :: -1 if flip[1] else 1]
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, kernel)
    if crop == "start":
        return padded[:, :, :height, :width]
    if crop == "end":
        return padded[:, :, 2 * padding :, 2 * padding :]
    return padded[:, :, padding : padding + height, padding : padding + width]


NOT_FLIPPED = (
    "the kernel is not flipped. Output (i, j) read x at (i·s + a, j·s + b), so input "
    "position u gets w[a] from the output a taps before it: going along u, the kernel's "
    "taps come in reverse order. Correlate with w[:, :, ::-1, ::-1]."
)
ROWS_ONLY = (
    "the kernel is flipped top to bottom only: flipping reverses both of its axes, "
    "w[:, :, ::-1, ::-1] (a 180° turn)."
)
COLUMNS_ONLY = (
    "the kernel is flipped left to right only: flipping reverses both of its axes, "
    "w[:, :, ::-1, ::-1] (a 180° turn)."
)
TRANSPOSED = (
    "that is the kernel transposed (rows and columns swapped, w.transpose(0, 1, 3, 2)), "
    "not flipped: flipping reverses both axes, w[:, :, ::-1, ::-1] (a 180° turn)."
)
CROPPED_AT_START = (
    "the padding was cut off at the end only (the first H rows and W columns of the padded "
    "gradient were kept): x sits in the middle of the padded plane, rows p to p + H - 1, so "
    "cut `padding` rows and columns off each side."
)
CROPPED_AT_END = (
    "the padding was cut off at the start only (the last H rows and W columns were kept): "
    "x sits in the middle of the padded plane, rows p to p + H - 1, so cut `padding` rows "
    "and columns off each side."
)
REPEATED = (
    "dy was spread by repeating each value: window i starts at row i·s, so the rows between "
    "two starts are at this tap of no window. Put s - 1 zeros between dy's entries "
    "(spread[:, :, ::s, ::s] = dy)."
)
STRIDE_IN_PLACE = (
    "the windows start every `stride` positions: out[..., i*stride : i*stride + k, "
    "j*stride : j*stride + l] is where window (i, j) was read from, so that is where its "
    "gradient goes back, not out[..., i : i + k, j : j + l]. (Correlating with the flipped "
    "kernel instead? Spread dy first, with stride - 1 zeros between its entries.)"
)


def _windows_one_apart(
    dy: np.ndarray, w: np.ndarray, size: tuple[int, int], stride: int, padding: int
) -> np.ndarray:
    """dx with the stride left out of where the windows go: window (i, j)'s gradient added
    at rows i to i + k - 1 of the padded input instead of i·s to i·s + k - 1 (the loop
    written with `i : i + k`, or the correlation without spreading dy, padded to x's size).
    The shape is right; only the values show it."""
    rows, cols = dy.shape[2:]
    k, kw = w.shape[2:]
    block = conv2d_input_grad(dy, w, (rows + k - 1, cols + kw - 1))
    height, width = size
    padded = np.zeros((dy.shape[0], w.shape[1], height + 2 * padding, width + 2 * padding))
    padded[:, :, : rows + k - 1, : cols + kw - 1] = block
    return padded[:, :, padding : padding + height, padding : padding + width]


def _conv_mistakes(
    dy: np.ndarray, w: np.ndarray, size: tuple[int, int], stride: int, padding: int
) -> dict[str, np.ndarray]:
    """Hint -> the dx a likely mistake gives (mistakes that change the shape are named by
    _conv_shape_hint instead)."""
    mistakes = {
        NOT_FLIPPED: _by_correlation(dy, w, size, stride, padding, flip=(False, False)),
        ROWS_ONLY: _by_correlation(dy, w, size, stride, padding, flip=(True, False)),
        COLUMNS_ONLY: _by_correlation(dy, w, size, stride, padding, flip=(False, True)),
        CROPPED_AT_START: _by_correlation(dy, w, size, stride, padding, crop="start"),
        CROPPED_AT_END: _by_correlation(dy, w, size, stride, padding, crop="end"),
        REPEATED: _by_correlation(dy, w, size, stride, padding, spread="repeat"),
    }
    if stride > 1:
        mistakes[STRIDE_IN_PLACE] = _windows_one_apart(dy, w, size, stride, padding)
    if w.shape[2] == w.shape[3]:
        transposed = np.ascontiguousarray(w.transpose(0, 1, 3, 2))
        mistakes[TRANSPOSED] = _by_correlation(
            dy, transposed, size, stride, padding, flip=(False, False)
        )
    return mistakes


def _cropped_shapes(
    uncropped: tuple[int, int], size: tuple[int, int], padding: int
) -> list[tuple[int, int]]:
    """The spatial shapes a gradient of the padded plane `uncropped` big comes out with,
    cut the ways an answer cuts the padding off: not at all, `padding` off each side
    ([p : X - p] or [p:-p]), or [p : p + H] (which keeps fewer than H rows when X < p + H)."""
    return [
        uncropped,
        (uncropped[0] - 2 * padding, uncropped[1] - 2 * padding),
        (
            min(uncropped[0], padding + size[0]) - padding,
            min(uncropped[1], padding + size[1]) - padding,
        ),
    ]


def _conv_shape_hint(
    got: tuple[int, ...], dy: np.ndarray, w: np.ndarray, size: tuple[int, int], stride: int,
    padding: int,
) -> str | None:
    """What a dx of the wrong shape most likely means."""
    out_channels, channels = w.shape[:2]
    k, kw = w.shape[2:]
    rows, cols = dy.shape[2:]
    padded = (size[0] + 2 * padding, size[1] + 2 * padding)
    reached = ((rows - 1) * stride + k, (cols - 1) * stride + kw)
    unspread = (rows + k - 1, cols + kw - 1)
    spatial = tuple(got[2:])
    if len(got) != 4:
        return None
    if spatial == padded and padding:
        return (
            f"that is the gradient of the padded input ({padded[0]}×{padded[1]}): the "
            f"padding is not part of x, so cut `padding` rows and columns off each side."
        )
    if stride > 1 and spatial in _cropped_shapes(unspread, size, padding):
        return (
            "the stride is missing: a window starts every s rows, so dy's neighbouring "
            "entries belong s rows apart in x. Put s - 1 zeros between them "
            "(spread[:, :, ::s, ::s] = dy) before the full correlation."
        )
    if reached != padded and spatial in _cropped_shapes(reached, size, padding):
        missing = (padded[0] - reached[0], padded[1] - reached[1])
        own = (max(missing[0] - padding, 0), max(missing[1] - padding, 0))
        of_x = (
            f", {own[0]} row(s) and {own[1]} column(s) of them x's own, not padding"
            if any(own)
            else ""
        )
        return (
            f"the last rows or columns are missing: no window reached the last "
            f"{missing[0]} row(s) and {missing[1]} column(s) of the padded input{of_x} "
            f"(S + 2p - k is not a multiple of the stride). Their gradient is 0, but dx "
            f"still has x's shape: pad the full correlation with them too."
        )
    if got[1] == out_channels != channels:
        return (
            f"dx has {out_channels} channels, the output's: sum over the output channels o "
            f"(dy[n, o] · w[o, c]) and keep x's {channels} channels, e.g. with "
            f"np.einsum('nohwkl,ockl->nchw', windows, flipped)."
        )
    return None


_CONV_HINTS: list[check.HintRule] = [
    (
        (ValueError, IndexError),
        "Follow the shapes step by step: dy is (N, C_out, P, Q), weight (C_out, C_in, K, L), "
        "and dx must come out (N, C_in, H, W), summed over the output channels.",
    ),
]


def check_15_1(conv2d_input_grad: Callable[..., Any]) -> None:
    """conv2d_input_grad(grad_output, weight, input_size, stride, padding): dx of a 2-D
    convolution, in NumPy, for any stride and padding."""
    exercise = "15.1"
    if not callable(conv2d_input_grad):
        check.fail(
            exercise,
            f"conv2d_input_grad should be a function; got "
            f"{check.with_article(conv2d_input_grad)}.",
        )
    rng = np.random.default_rng(151)
    for batch, channels, out_channels, size, kernel, stride, padding in _CONV_CASES:
        out = conv_output_size(size, kernel, stride, padding)
        dy = rng.standard_normal((batch, out_channels, *out))
        w = rng.standard_normal((out_channels, channels, *kernel))
        what = (
            f"conv2d_input_grad(grad_output, weight, {size}, stride={stride}, "
            f"padding={padding}) for x of shape {(batch, channels, *size)} and weight of "
            f"shape {w.shape}"
        )
        got = check.call(
            exercise, what, conv2d_input_grad, dy.copy(), w.copy(), size, stride, padding,
            hints=_CONV_HINTS,
        )
        if got is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` dx?")
        got = check.as_array(exercise, what, got)
        check.expect_close(
            exercise,
            what,
            got,
            _reference_input_grad(dy, w, size, stride, padding),
            _conv_mistakes(dy, w, size, stride, padding),
            shape_hint=_conv_shape_hint(got.shape, dy, w, size, stride, padding),
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 15.2

# (shape of x, eps, mean and spread of x). The first case tells the named mistakes apart;
# a large eps (so that where eps goes shows), then a batch of two.
_BN_CASES: list[tuple[tuple[int, int], float, float, float]] = [
    ((5, 3), 1e-5, 0.5, 1.5),
    ((6, 2), 0.5, -1.0, 0.8),
    ((8, 4), 1e-5, 3.0, 0.2),
    ((2, 3), 1e-5, 0.0, 1.0),
]

MEAN_PATH = (
    "the path through the mean is missing: every x_i moves μ by 1/m, and μ is in every "
    "x̂_j of its column; that path adds -mean(dy)/σ to each entry."
)
VARIANCE_PATH = (
    "the path through the variance is missing: every x_i moves σ² by 2(x_i - μ)/m, and σ is "
    "in every x̂_j, which adds a term along x̂: -x̂ · mean(dy · x̂)/σ."
)
BOTH_PATHS = (
    "that is dy/σ, the gradient with the batch's μ and σ held fixed: every x_i also moves μ "
    "and σ, and through them every x̂_j of its column. Follow the two paths, through μ and "
    "through σ², and add their terms."
)
UNBIASED = (
    "that uses the unbiased variance (divided by m - 1, np.var(..., ddof=1)): BatchNorm "
    "normalizes with the biased one, divided by m (np.var's default, ddof=0); m - 1 is "
    "only for the running variance."
)
UNBIASED_EXACT = (
    "that is the exact gradient of a BatchNorm with the unbiased variance (divided by "
    "m - 1): BatchNorm normalizes with the biased one, divided by m (np.var's default, "
    "ddof=0); m - 1 is only for the running variance."
)
NO_EPS = (
    "eps is left out: σ = √(σ² + eps), with eps inside the square root, in the forward and "
    "so in the backward. With a small eps such as 1e-05 that changes dx only around its "
    "6th digit, past the 4 printed here but more than the check allows."
)
EPS_OUTSIDE = (
    "eps is outside the square root: σ = √(σ² + eps), not √σ² + eps. With a small eps "
    "such as 1e-05 the two differ only around dx's 6th digit, past the 4 printed here but "
    "more than the check allows; with a large one (the check also tries eps=0.5) the gap "
    "is plain."
)
EPS_FIXED = (
    "that is dx for eps=1e-05 whatever eps is passed: use the `eps` argument, "
    "σ = √(σ² + eps)."
)
SIGN = (
    "the term along x̂ has the wrong sign: raising x_i raises σ when x_i is above the mean, "
    "which pulls every x̂_j towards 0, so the term is -x̂ · mean(dy · x̂)/σ."
)
VARIANCE_TERM_HALVED = (
    "the term along x̂ is half what it should be: σ² = mean((x - μ)²), so "
    "∂σ²/∂x_i = 2(x_i - μ)/m, the 2 coming down from the square. It cancels the 1/2 of "
    "∂σ/∂σ² = 1/(2σ), which leaves -x̂ · mean(dy · x̂)/σ."
)
VARIANCE_TERM_DOUBLED = (
    "the term along x̂ is twice what it should be: σ = √(σ² + eps), so ∂σ/∂σ² = 1/(2σ), "
    "and that 1/2 cancels the 2 of ∂σ²/∂x_i = 2(x_i - μ)/m, which leaves "
    "-x̂ · mean(dy · x̂)/σ."
)
SUMS = (
    "those are sums where means belong: μ = (1/m)Σx, so each x_i moves μ by 1/m, and the "
    "terms are mean(dy) and mean(dy · x̂), not the sums."
)
DIVIDED_BY_VARIANCE = (
    "that is divided by σ² (σ² + eps): x̂ = (x - μ)/σ divides by σ once, so dx does too."
)
NOT_DIVIDED = "the factor 1/σ is missing: x̂ = (x - μ)/σ, so every term is divided by σ."
PER_SAMPLE = (
    "those statistics are per sample (over axis 1, each row), as LayerNorm takes them: "
    "BatchNorm's μ and σ are per feature, over the batch (axis 0, each column)."
)
GRAD_OUTPUT = (
    "that is grad_output itself: x̂ = (x - μ)/σ, so at least the factor 1/σ, and the paths "
    "through μ and σ, come in."
)


_DEFAULT_EPS = 1e-5  # the exercise's default eps, which an answer may use whatever eps is


def _compact(dy: np.ndarray, normalized: np.ndarray, sigma: np.ndarray, axis: int = 0) -> Any:
    def mean(v: np.ndarray) -> np.ndarray:
        return v.mean(axis=axis, keepdims=True)

    return (dy - mean(dy) - normalized * mean(dy * normalized)) / sigma


def _bn_mistakes(dy: np.ndarray, x: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """Hint -> the dx a likely mistake gives, for x (N, C) normalized over axis 0."""
    m = len(x)
    centered = x - x.mean(axis=0)
    sigma = np.sqrt(x.var(axis=0) + eps)
    normalized = centered / sigma
    right_terms = dy - dy.mean(axis=0) - normalized * (dy * normalized).mean(axis=0)
    sigma_unbiased = np.sqrt(x.var(axis=0, ddof=1) + eps)
    normalized_unbiased = centered / sigma_unbiased
    sigma_no_eps = np.sqrt(x.var(axis=0))
    sigma_eps_outside = np.sqrt(x.var(axis=0)) + eps
    row_sigma = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    row_normalized = (x - x.mean(axis=1, keepdims=True)) / row_sigma
    mistakes = {
        GRAD_OUTPUT: dy,
        BOTH_PATHS: dy / sigma,
        MEAN_PATH: (dy - normalized * (dy * normalized).mean(axis=0)) / sigma,
        VARIANCE_PATH: (dy - dy.mean(axis=0)) / sigma,
        UNBIASED: _compact(dy, normalized_unbiased, sigma_unbiased),
        UNBIASED_EXACT: (
            dy - dy.mean(axis=0) - normalized_unbiased * (dy * normalized_unbiased).sum(axis=0)
            / (m - 1)
        ) / sigma_unbiased,
        NO_EPS: _compact(dy, centered / sigma_no_eps, sigma_no_eps),
        EPS_OUTSIDE: _compact(dy, centered / sigma_eps_outside, sigma_eps_outside),
        SIGN: (dy - dy.mean(axis=0) + normalized * (dy * normalized).mean(axis=0)) / sigma,
        VARIANCE_TERM_HALVED: (
            dy - dy.mean(axis=0) - normalized * (dy * normalized).mean(axis=0) / 2
        ) / sigma,
        VARIANCE_TERM_DOUBLED: (
            dy - dy.mean(axis=0) - 2 * normalized * (dy * normalized).mean(axis=0)
        ) / sigma,
        SUMS: (dy - dy.sum(axis=0) - normalized * (dy * normalized).sum(axis=0)) / sigma,
        DIVIDED_BY_VARIANCE: right_terms / sigma**2,
        NOT_DIVIDED: right_terms,
        PER_SAMPLE: _compact(dy, row_normalized, row_sigma, axis=1),
    }
    if eps != _DEFAULT_EPS:
        mistakes[EPS_FIXED] = _reference_batch_norm_backward(dy, x, _DEFAULT_EPS)
    return mistakes


def _bn_shape_hint(got: tuple[int, ...], shape: tuple[int, int]) -> str | None:
    if got in ((shape[1],), (1, shape[1])):
        return (
            "that is one number per feature, the shape of γ's gradient Σ dy·x̂: dx has one "
            "entry per entry of x. Keep the batch axis (keepdims=True where you take means)."
        )
    return None


def check_15_2(batch_norm_backward: Callable[..., Any]) -> None:
    """batch_norm_backward(grad_output, x, eps): dx of x̂ = (x - μ)/√(σ² + eps), the
    statistics per column of x (N, C), over the batch, in NumPy."""
    exercise = "15.2"
    if not callable(batch_norm_backward):
        check.fail(
            exercise,
            f"batch_norm_backward should be a function; got "
            f"{check.with_article(batch_norm_backward)}.",
        )
    rng = np.random.default_rng(152)
    for shape, eps, centre, spread in _BN_CASES:
        x = centre + spread * rng.standard_normal(shape)
        dy = 0.5 + rng.standard_normal(shape)  # a mean that is not 0: the mean's path shows
        what = f"batch_norm_backward(grad_output, x, eps={eps}) for x of shape {shape}"
        got = check.call(exercise, what, batch_norm_backward, dy.copy(), x.copy(), eps)
        if got is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` dx?")
        got = check.as_array(exercise, what, got)
        check.expect_close(
            exercise,
            what,
            got,
            _reference_batch_norm_backward(dy, x, eps),
            _bn_mistakes(dy, x, eps),
            shape_hint=_bn_shape_hint(got.shape, shape),
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 15.3


def _layers_text(layers: Sequence[Layer]) -> str:
    return "[" + ", ".join(f"Layer({', '.join(map(str, layer))})" for layer in layers) + "]"


# (input size, layers). The first case tells every named mistake apart; then a stack whose
# divisions are exact, a single dilated layer, and a stack that ends at size 1.
_SIZE_CASES: list[tuple[int, list[Layer]]] = [
    (29, [Layer(3, 2, 1), Layer(3, 1, 1, 2), Layer(2, 2), Layer(3, 1, 1)]),
    (28, [Layer(5, 1, 2), Layer(2, 2), Layer(5, 1, 0), Layer(2, 2)]),
    (13, [Layer(3, 1, 2, 2)]),
    (12, [Layer(3, 1, 1), Layer(2, 2), Layer(3, 1, 1), Layer(6, 6)]),
]

PADDING_FORGOTTEN = (
    "the padding is left out: p zeros on each side make the input S + 2p long before the "
    "windows are laid."
)
PADDING_ONCE = (
    "the padding is counted once: p zeros go on each side, so the padded input is S + 2p "
    "long."
)
STRIDE_IGNORED = (
    "the stride is ignored: a window starts every s positions, so the number of windows is "
    "the room for their starts divided by s (rounded down), plus one."
)
ROUNDED_UP = (
    "the division is rounded up: a window that would run past the end of the padded input "
    "is dropped, so round down (//; PyTorch's ceil_mode=False)."
)
NO_PLUS_ONE = (
    "off by one, one short: ⌊(S + 2p - d(k - 1) - 1)/s⌋ counts the steps between the first "
    "window and the last; the windows are one more (the first window sits at 0)."
)
NO_MINUS_ONE = (
    "off by one: the last window must start at S + 2p - d(k - 1) - 1 or earlier, since it "
    "ends d(k - 1) positions later, at S + 2p - 1, the last index; so "
    "⌊(S + 2p - d(k - 1) - 1)/s⌋ + 1 (the -1 inside matters when s > 1)."
)
NO_ONES = (
    "the -1 inside and the +1 outside are both left out: ⌊(S + 2p - d(k - 1))/s⌋. They "
    "cancel when s = 1, not otherwise: when s does not divide S + 2p - d(k - 1), that "
    "count is one window short. The last window must start at S + 2p - d(k - 1) - 1 or "
    "earlier, so ⌊(S + 2p - d(k - 1) - 1)/s⌋ + 1 windows fit."
)
DILATION_IGNORED = (
    "the dilation is ignored: a kernel of k taps, d apart, spans d(k - 1) + 1 inputs."
)
DILATION_TIMES_K = (
    "the dilated kernel spans d(k - 1) + 1 inputs (k taps, d apart), not d·k."
)
NOT_CHAINED = (
    "each layer was applied to the input's size: a layer's input is the previous layer's "
    "output, so carry the size from one layer to the next."
)


def _size_rule(rule: Callable[[int, int, int, int, int], int]) -> Callable[..., list[int]]:
    def sizes(size: int, layers: Sequence[Layer]) -> list[int]:
        found = []
        for kernel, stride, padding, dilation in layers:
            size = rule(size, kernel, stride, padding, dilation)
            found.append(size)
        return found

    return sizes


_SIZE_MISTAKES: dict[str, Callable[..., list[int]]] = {
    PADDING_FORGOTTEN: _size_rule(lambda s, k, st, p, d: (s - d * (k - 1) - 1) // st + 1),
    PADDING_ONCE: _size_rule(lambda s, k, st, p, d: (s + p - d * (k - 1) - 1) // st + 1),
    STRIDE_IGNORED: _size_rule(lambda s, k, st, p, d: s + 2 * p - d * (k - 1)),
    ROUNDED_UP: _size_rule(lambda s, k, st, p, d: -(-(s + 2 * p - d * (k - 1) - 1) // st) + 1),
    NO_PLUS_ONE: _size_rule(lambda s, k, st, p, d: (s + 2 * p - d * (k - 1) - 1) // st),
    NO_MINUS_ONE: _size_rule(lambda s, k, st, p, d: (s + 2 * p - d * (k - 1)) // st + 1),
    NO_ONES: _size_rule(lambda s, k, st, p, d: (s + 2 * p - d * (k - 1)) // st),
    DILATION_IGNORED: _size_rule(lambda s, k, st, p, d: (s + 2 * p - (k - 1) - 1) // st + 1),
    DILATION_TIMES_K: _size_rule(lambda s, k, st, p, d: (s + 2 * p - d * k) // st + 1),
}


def _not_chained(size: int, layers: Sequence[Layer]) -> list[int]:
    return [output_size(size, layer) for layer in layers]


def _as_layers(layers: Sequence[Layer]) -> list[Layer]:
    """Fresh Layer tuples, so an answer that changes its argument changes nothing here."""
    return [Layer(*layer) for layer in layers]


def check_15_3(output_sizes: Callable[[int, Sequence[Layer]], Any]) -> None:
    """output_sizes(size, layers): the spatial size after each layer of a stack."""
    exercise = "15.3"
    if not callable(output_sizes):
        check.fail(
            exercise,
            f"output_sizes should be a function; got {check.with_article(output_sizes)}.",
        )
    for size, layers in _SIZE_CASES:
        what = f"output_sizes({size}, {_layers_text(layers)})"
        got = check.call(exercise, what, output_sizes, size, _as_layers(layers))
        expected = _reference_output_sizes(size, layers)
        if got is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` the list?")
        if isinstance(got, (int, np.integer)) and len(layers) > 1:
            check.fail(
                exercise,
                f"{what} is a single number, {got}: return a list with the size after each "
                f"layer ({len(layers)} sizes here; the last one is {expected[-1]}).",
            )
        values = check.as_array(exercise, what, got)
        if values.ndim == 1 and len(values) == len(layers) + 1 and values[0] == size:
            check.fail(
                exercise,
                f"{what} starts with the input's size, {size}: return only the size after "
                f"each layer, {len(layers)} sizes here.",
            )
        if values.shape == (len(layers),) and not np.allclose(values, np.round(values)):
            check.fail(
                exercise,
                f"{what} is {values.tolist()}: sizes are whole numbers (a window either "
                f"fits or it does not). Round the division down with //.",
            )
        mistakes = {hint: rule(size, layers) for hint, rule in _SIZE_MISTAKES.items()}
        mistakes[NOT_CHAINED] = _not_chained(size, layers)
        check.expect_close(
            exercise,
            what,
            values,
            expected,
            mistakes,
            shape_hint=f"return one size per layer, {len(layers)} here.",
        )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 15.4

# Layers. The first case tells every named mistake apart; then the lesson's CNN, a single
# layer, a 1×1 convolution between two strided layers (it adds nothing), and a stack
# whose dilations grow (as in WaveNet).
_FIELD_CASES: list[list[Layer]] = [
    [Layer(3, 2, 1, 1), Layer(3, 1, 2, 2), Layer(2, 3, 0, 1), Layer(5, 1, 1, 1)],
    [Layer(3, 1, 1), Layer(2, 2), Layer(3, 1, 1), Layer(6, 6)],
    [Layer(7, 2, 3)],
    [Layer(3, 2, 1), Layer(1, 1, 0), Layer(3, 2, 1)],
    [Layer(2, 1, 0, 1), Layer(2, 1, 0, 2), Layer(2, 1, 0, 4), Layer(2, 1, 0, 8)],
]

FIELD_STRIDES_IGNORED = (
    "the strides are ignored: after a layer with stride s, neighbouring positions are s "
    "inputs apart, so each later tap reaches s times further. Multiply (k - 1)·d by the "
    "product of the strides of the layers before it."
)
FIELD_DILATION_IGNORED = (
    "the dilation is ignored: a layer's k taps lie d positions apart, so it widens the "
    "field by d·(k - 1) positions of its input."
)
FIELD_OWN_STRIDE = (
    "each layer's own stride was counted in its jump: a layer's taps are spaced by the "
    "strides of the layers *before* it; its own stride spaces the next layer's taps."
)
FIELD_NO_ONE = (
    "off by one: a stack of 1×1 layers still sees 1 input, so start from 1 and add "
    "d·(k - 1)·jump per layer."
)
FIELD_WHOLE_SPAN = (
    "off by one per layer: each layer adds d·(k - 1)·jump inputs, not its whole span "
    "(d·(k - 1) + 1)·jump; its centre input is already in the field."
)
FIELD_K_TAPS = (
    "each layer adds d·(k - 1)·jump inputs, not d·k·jump: its k taps, d·jump apart, span "
    "k - 1 gaps from the first to the last, and the first one is already in the field "
    "(one 3-tap layer sees 3 inputs, 1 + 2, not 1 + 3)."
)
FIELD_PADDING = (
    "padding does not widen what one output sees: it moves where the windows sit, and the "
    "zeros it adds are not inputs."
)
FIELD_PRODUCT = (
    "receptive fields add up, they do not multiply: each layer adds d·(k - 1)·jump to the "
    "field of the layers before it."
)
FIELD_REVERSED = (
    "the jumps came from the wrong end: a layer's taps are spaced by the product of the "
    "strides of the layers before it, nearer the input (walk from the input, or from the "
    "output with field = s·(field - 1) + d·(k - 1) + 1)."
)


def _field_rule(
    step: Callable[[int, int, Layer], tuple[int, int]], start: int = 1, reverse: bool = False
) -> Callable[[Sequence[Layer]], int]:
    def field_of(layers: Sequence[Layer]) -> int:
        field, jump = start, 1
        for layer in reversed(layers) if reverse else layers:
            field, jump = step(field, jump, Layer(*layer))
        return field

    return field_of


def _step(field: int, jump: int, layer: Layer) -> tuple[int, int]:
    return field + layer.dilation * (layer.kernel - 1) * jump, jump * layer.stride


_FIELD_MISTAKES: dict[str, Callable[[Sequence[Layer]], int]] = {
    FIELD_STRIDES_IGNORED: _field_rule(
        lambda f, j, L: (f + L.dilation * (L.kernel - 1), 1)
    ),
    FIELD_DILATION_IGNORED: _field_rule(
        lambda f, j, L: (f + (L.kernel - 1) * j, j * L.stride)
    ),
    FIELD_OWN_STRIDE: _field_rule(
        lambda f, j, L: (f + L.dilation * (L.kernel - 1) * j * L.stride, j * L.stride)
    ),
    FIELD_NO_ONE: _field_rule(_step, start=0),
    FIELD_WHOLE_SPAN: _field_rule(
        lambda f, j, L: (f + (L.dilation * (L.kernel - 1) + 1) * j, j * L.stride)
    ),
    FIELD_K_TAPS: _field_rule(
        lambda f, j, L: (f + L.dilation * L.kernel * j, j * L.stride)
    ),
    FIELD_PADDING: _field_rule(
        lambda f, j, L: (f + (L.dilation * (L.kernel - 1) + 2 * L.padding) * j, j * L.stride)
    ),
    FIELD_PRODUCT: _field_rule(
        lambda f, j, L: (f * (L.dilation * (L.kernel - 1) + 1), j)
    ),
    FIELD_REVERSED: _field_rule(_step, reverse=True),
}


def check_15_4(receptive_field: Callable[[Sequence[Layer]], Any]) -> None:
    """receptive_field(layers): how many inputs along one dimension one output sees."""
    exercise = "15.4"
    if not callable(receptive_field):
        check.fail(
            exercise,
            f"receptive_field should be a function; got {check.with_article(receptive_field)}.",
        )
    for layers in _FIELD_CASES:
        what = f"receptive_field({_layers_text(layers)})"
        got = check.call(exercise, what, receptive_field, _as_layers(layers))
        if got is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` the field?")
        value = check.as_array(exercise, what, got)
        if value.ndim:
            check.fail(
                exercise,
                f"{what} has shape {value.shape}: return one number, the field of one output "
                f"of the last layer.",
            )
        mistakes = {hint: rule(layers) for hint, rule in _FIELD_MISTAKES.items()}
        check.expect_close(exercise, what, value, _reference_receptive_field(layers), mistakes)
    check.passed(exercise)
