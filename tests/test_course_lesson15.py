"""Tests of lesson 15's exercise checks and references: the references agree with the engine
(and with PyTorch where it is installed), right answers written several ways pass, each named
mistake gets its own hint, and the first case of each check tells the mistakes apart."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import minigrad
import minigrad.nn.functional as F
from minigrad.course import CheckError, lesson15
from minigrad.course.lesson15 import Layer

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "15_convolutions.ipynb"

# --------------------------------------------------------------------------- references


def _conv_case(case, seed=0):
    batch, channels, out_channels, size, kernel, stride, padding = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels, *size))
    w = rng.standard_normal((out_channels, channels, *kernel))
    return x, w, stride, padding


@pytest.mark.parametrize("case", lesson15._CONV_CASES + [(2, 3, 2, (6, 5), (3, 3), 1, 0)])
def test_conv2d_input_grad_is_the_engines_gradient(case) -> None:
    x, w, stride, padding = _conv_case(case)
    x_var = minigrad.Variable(x, requires_grad=True)
    y = F.conv2d(x_var, minigrad.Variable(w), stride=stride, padding=padding)
    dy = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(minigrad.Variable(dy))
    got = lesson15.conv2d_input_grad(dy, w, x.shape[2:], stride, padding)
    np.testing.assert_allclose(got, x_var.grad.data, rtol=1e-10, atol=1e-12)
    # the lesson's derivation, the other algorithm, gives the same
    np.testing.assert_allclose(
        lesson15._by_correlation(dy, w, x.shape[2:], stride, padding), got, atol=1e-12
    )


def test_conv2d_input_grad_agrees_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for case in lesson15._CONV_CASES:
        x, w, stride, padding = _conv_case(case, seed=2)
        out = lesson15.conv_output_size(x.shape[2:], w.shape[2:], stride, padding)
        dy = np.random.default_rng(3).standard_normal((x.shape[0], w.shape[0], *out))
        expected = torch.nn.grad.conv2d_input(
            x.shape, torch.tensor(w), torch.tensor(dy), stride=stride, padding=padding
        )
        got = lesson15.conv2d_input_grad(dy, w, x.shape[2:], stride, padding)
        np.testing.assert_allclose(got, expected.numpy(), atol=1e-10)


def test_batch_norm_backward_is_the_engines_and_pytorchs() -> None:
    rng = np.random.default_rng(4)
    for shape, eps, centre, spread in lesson15._BN_CASES:
        x = centre + spread * rng.standard_normal(shape)
        dy = rng.standard_normal(shape)
        x_var = minigrad.Variable(x, requires_grad=True)
        F.batch_norm(x_var, None, None, training=True, eps=eps).backward(minigrad.Variable(dy))
        got = lesson15.batch_norm_backward(dy, x, eps)
        np.testing.assert_allclose(got, x_var.grad.data, rtol=1e-9, atol=1e-12)
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((7, 3))
    dy = rng.standard_normal((7, 3))
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.batch_norm(t, None, None, training=True, eps=0.5).backward(
        torch.tensor(dy)
    )
    np.testing.assert_allclose(lesson15.batch_norm_backward(dy, x, 0.5), t.grad.numpy(), atol=1e-12)


def test_output_sizes_are_the_engines() -> None:
    for size, layers in lesson15._SIZE_CASES:
        h = minigrad.zeros(1, 1, size, size)
        measured = []
        for kernel, stride, padding, dilation in layers:
            h = F.conv2d(h, minigrad.zeros(1, 1, kernel, kernel), stride=stride,
                         padding=padding, dilation=dilation)  # fmt: skip
            measured.append(h.shape[-1])
        assert lesson15.output_sizes(size, layers) == measured


def _rows_reached(layers: list[Layer], size: int = 64) -> int:
    """How many input rows reach one middle output of the stack, by its gradient."""
    probe = minigrad.Variable(np.ones((1, 1, size, size)), requires_grad=True)
    h = probe
    for kernel, stride, padding, dilation in layers:
        h = F.conv2d(h, minigrad.ones(1, 1, kernel, kernel), stride=stride, padding=padding,
                     dilation=dilation)  # fmt: skip
    middle = h.shape[-1] // 2
    h[0, 0, middle, middle].backward()
    rows = np.flatnonzero(probe.grad.data[0, 0].any(axis=1))
    return int(rows.max() - rows.min() + 1)


@pytest.mark.parametrize("layers", lesson15._FIELD_CASES)
def test_receptive_field_is_what_the_gradient_reaches(layers) -> None:
    assert lesson15.receptive_field(layers) == _rows_reached(layers)


# --------------------------------------------------------------------------- Exercise 15.1


def input_grad_by_flip(grad_output, weight, input_size, stride=1, padding=0):
    """The lesson's solution: spread, full correlation with the flipped kernel, crop."""
    n, out_channels, rows, cols = grad_output.shape
    k, kw = weight.shape[2:]
    height, width = input_size
    spread = np.zeros((n, out_channels, (rows - 1) * stride + 1, (cols - 1) * stride + 1))
    spread[:, :, ::stride, ::stride] = grad_output
    extra_rows = height + 2 * padding - ((rows - 1) * stride + k)
    extra_cols = width + 2 * padding - ((cols - 1) * stride + kw)
    full = np.pad(
        spread, ((0, 0), (0, 0), (k - 1, k - 1 + extra_rows), (kw - 1, kw - 1 + extra_cols))
    )
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
    return padded[:, :, padding : padding + height, padding : padding + width]


def input_grad_by_loops(grad_output, weight, input_size, stride=1, padding=0):
    """Written differently: plain loops over every output and tap."""
    n, out_channels, rows, cols = grad_output.shape
    _, channels, k, kw = weight.shape
    height, width = input_size
    padded = np.zeros((n, channels, height + 2 * padding, width + 2 * padding))
    for i in range(rows):
        for j in range(cols):
            window = np.einsum("no,ockl->nckl", grad_output[:, :, i, j], weight)
            padded[:, :, i * stride : i * stride + k, j * stride : j * stride + kw] += window
    return padded[:, :, padding : padding + height, padding : padding + width]


@pytest.mark.parametrize(
    "answer", [input_grad_by_flip, input_grad_by_loops, lesson15.conv2d_input_grad]
)
def test_15_1_right_answers_pass(answer, capsys) -> None:
    lesson15.check_15_1(answer)
    assert capsys.readouterr().out == "Exercise 15.1: correct.\n"


def _flip_variant(**knobs):
    def answer(grad_output, weight, input_size, stride=1, padding=0):
        return lesson15._by_correlation(
            grad_output, weight, input_size, stride, padding, **knobs
        )

    return answer


def _not_cropped(grad_output, weight, input_size, stride=1, padding=0):
    padded = (input_size[0] + 2 * padding, input_size[1] + 2 * padding)
    return lesson15._by_correlation(grad_output, weight, padded, stride, 0)


def _not_spread(grad_output, weight, input_size, stride=1, padding=0):
    k, kw = weight.shape[2:]
    full = np.pad(grad_output, ((0, 0), (0, 0), (k - 1, k - 1), (kw - 1, kw - 1)))
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
    return padded[:, :, padding:-padding or None, padding:-padding or None]


def _no_extra_rows(grad_output, weight, input_size, stride=1, padding=0):
    n, out_channels, rows, cols = grad_output.shape
    k, kw = weight.shape[2:]
    spread = np.zeros((n, out_channels, (rows - 1) * stride + 1, (cols - 1) * stride + 1))
    spread[:, :, ::stride, ::stride] = grad_output
    full = np.pad(spread, ((0, 0), (0, 0), (k - 1, k - 1), (kw - 1, kw - 1)))
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
    return padded[:, :, padding : padded.shape[2] - padding, padding : padded.shape[3] - padding]


def _unreached_rows_dropped(grad_output, weight, input_size, stride=1, padding=0):
    """Loops over a plane only as big as the windows reach, cut to x with [p : p + H]: right
    while the unreached rows are all padding (the cut drops them anyway), short when some
    are x's own."""
    n, out_channels, rows, cols = grad_output.shape
    _, channels, k, kw = weight.shape
    height, width = input_size
    padded = np.zeros((n, channels, (rows - 1) * stride + k, (cols - 1) * stride + kw))
    for i in range(rows):
        for j in range(cols):
            window = np.einsum("no,ockl->nckl", grad_output[:, :, i, j], weight)
            padded[:, :, i * stride : i * stride + k, j * stride : j * stride + kw] += window
    return padded[:, :, padding : padding + height, padding : padding + width]


def _unreached_rows_dropped_by_flip(grad_output, weight, input_size, stride=1, padding=0):
    """The lesson's recipe without the extra rows and columns, cut with [p : p + H]."""
    n, out_channels, rows, cols = grad_output.shape
    k, kw = weight.shape[2:]
    height, width = input_size
    spread = np.zeros((n, out_channels, (rows - 1) * stride + 1, (cols - 1) * stride + 1))
    spread[:, :, ::stride, ::stride] = grad_output
    full = np.pad(spread, ((0, 0), (0, 0), (k - 1, k - 1), (kw - 1, kw - 1)))
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
    return padded[:, :, padding : padding + height, padding : padding + width]


def _windows_one_apart_by_loops(grad_output, weight, input_size, stride=1, padding=0):
    """The scatter loop with `i : i + k` where `i * stride : i * stride + k` belongs: the
    shape is right, the windows land in the wrong place."""
    n, out_channels, rows, cols = grad_output.shape
    _, channels, k, kw = weight.shape
    height, width = input_size
    padded = np.zeros((n, channels, height + 2 * padding, width + 2 * padding))
    for i in range(rows):
        for j in range(cols):
            window = np.einsum("no,ockl->nckl", grad_output[:, :, i, j], weight)
            padded[:, :, i : i + k, j : j + kw] += window
    return padded[:, :, padding : padding + height, padding : padding + width]


def _windows_one_apart_by_flip(grad_output, weight, input_size, stride=1, padding=0):
    """The correlation without spreading dy, padded at the end to x's size."""
    n, out_channels, rows, cols = grad_output.shape
    k, kw = weight.shape[2:]
    height, width = input_size
    extra_rows = height + 2 * padding - (rows + k - 1)
    extra_cols = width + 2 * padding - (cols + kw - 1)
    full = np.pad(
        grad_output,
        ((0, 0), (0, 0), (k - 1, k - 1 + extra_rows), (kw - 1, kw - 1 + extra_cols)),
    )
    windows = sliding_window_view(full, (k, kw), axis=(2, 3))
    padded = np.einsum("nohwkl,ockl->nchw", windows, weight[:, :, ::-1, ::-1])
    return padded[:, :, padding : padding + height, padding : padding + width]


def _output_channels(grad_output, weight, input_size, stride=1, padding=0):
    """Contracts over the input channels: (N, C_out, H, W) for square channel counts only,
    so the check's cases with C_in != C_out make it raise or come out C_out wide."""
    swapped = np.ascontiguousarray(weight.transpose(1, 0, 2, 3))
    return input_grad_by_loops(grad_output, swapped, input_size, stride, padding)


def _empty_grad(grad_output, weight, input_size, stride=1, padding=0):
    return None


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_flip_variant(flip=(False, False)), "the kernel is not flipped"),
        (_flip_variant(flip=(True, False)), "flipped top to bottom only"),
        (_flip_variant(flip=(False, True)), "flipped left to right only"),
        (_flip_variant(crop="start"), "cut off at the end only"),
        (_flip_variant(crop="end"), "cut off at the start only"),
        (_flip_variant(spread="repeat"), "spread by repeating each value"),
        (_not_cropped, "the gradient of the padded input"),
        (_not_spread, "the stride is missing"),
        (_no_extra_rows, "no window reached the last"),
        (_unreached_rows_dropped, "the last rows or columns are missing: no window reached "
         r"the last 2 row\(s\) and 2 column\(s\) of the padded input, 1 row\(s\) and 1 "
         r"column\(s\) of them x's own"),
        (_unreached_rows_dropped_by_flip, "the last rows or columns are missing"),
        (_windows_one_apart_by_loops, "the windows start every `stride` positions: "
         r"out\[\.\.\., i\*stride : i\*stride \+ k"),
        (_windows_one_apart_by_flip, "the windows start every `stride` positions"),
        (_output_channels, "Follow the shapes|the output's: sum over the output channels"),
        (_empty_grad, "is None: did you forget to `return` dx"),
        ("not a function", "should be a function; got a str"),
    ],
)  # fmt: skip
def test_15_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson15.check_15_1(answer)


def test_15_1_transposed_kernel_is_named() -> None:
    """The first case's kernel is not square; the second's is, where a transpose is a
    mistake of its own."""

    def transposed(grad_output, weight, input_size, stride=1, padding=0):
        if weight.shape[2] != weight.shape[3]:
            return lesson15.conv2d_input_grad(grad_output, weight, input_size, stride, padding)
        swapped = np.ascontiguousarray(weight.transpose(0, 1, 3, 2))
        return lesson15._by_correlation(
            grad_output, swapped, input_size, stride, padding, flip=(False, False)
        )

    with pytest.raises(CheckError, match="kernel transposed"):
        lesson15.check_15_1(transposed)


def test_15_1_unreached_rows_of_x_are_named_where_padding_hid_them() -> None:
    """The answer that drops the unreached rows passes the cases whose unreached rows are
    all padding; the case whose unreached rows are x's own names it, and so does the check
    cell as nbgrader runs it (the hidden tests rerun the visible check first, before their
    (7, 8), kernel (2, 3), stride 2, padding 0 case)."""
    hidden_by_padding = [
        case for case in lesson15._CONV_CASES if (case[3][0] + 2 * case[6] - case[4][0])
        % case[5] in range(1, case[6] + 1)
    ]  # fmt: skip
    assert hidden_by_padding
    for case in hidden_by_padding:
        x, w, stride, padding = _conv_case(case)
        out = lesson15.conv_output_size(x.shape[2:], w.shape[2:], stride, padding)
        dy = np.random.default_rng(7).standard_normal((x.shape[0], w.shape[0], *out))
        got = _unreached_rows_dropped(dy, w, x.shape[2:], stride, padding)
        np.testing.assert_allclose(got, lesson15.conv2d_input_grad(dy, w, x.shape[2:], stride,
                                                                   padding))  # fmt: skip
    hint = "the last rows or columns are missing"
    with pytest.raises(Exception, match=hint) as raised:
        exec(_check_cell("15.1"), {"conv2d_input_grad": _unreached_rows_dropped})
    assert type(raised.value).__name__ == "CheckError"
    # the hidden case on its own gets the same hint from the shape alone
    rng = np.random.default_rng(8)
    dy, w = rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 3, 2, 3))
    got = _unreached_rows_dropped(dy, w, (7, 8), 2, 0)
    assert got.shape == (1, 3, 6, 7)
    assert lesson15._conv_shape_hint(got.shape, dy, w, (7, 8), 2, 0).startswith(hint)


def test_15_1_first_case_tells_the_mistakes_apart() -> None:
    """Every case with a stride tells the named mistakes apart (with stride 1, spreading by
    repeating is right)."""
    strided = [case for case in lesson15._CONV_CASES if case[5] > 1]
    for number, case in enumerate(strided):
        x, w, stride, padding = _conv_case(case)
        out = lesson15.conv_output_size(x.shape[2:], w.shape[2:], stride, padding)
        dy = np.random.default_rng(5).standard_normal((x.shape[0], w.shape[0], *out))
        values = list(lesson15._conv_mistakes(dy, w, x.shape[2:], stride, padding).values())
        values.append(lesson15.conv2d_input_grad(dy, w, x.shape[2:], stride, padding))
        for first, second in itertools.combinations(values, 2):
            assert not np.allclose(first, second), f"case {number}"


def test_15_1_cases_have_what_the_hints_need() -> None:
    cases = lesson15._CONV_CASES
    assert all(padding >= 1 for *_, padding in cases)  # padding 0 is graded apart (hidden)
    assert any(channels != out for _, channels, out, *_ in cases)
    assert any(k[0] != k[1] for *_, k, _, _ in cases[:1])
    assert any(k[0] < stride for *_, k, stride, _ in cases)
    assert any((s[0] + 2 * p - k[0]) % st for *_, s, k, st, p in cases)  # unreached rows
    # unreached rows of x itself, not only of the padding (cutting the padding off with
    # [p : p + H] cannot hide them), in both dimensions
    assert any(
        (s[0] + 2 * p - k[0]) % st > p and (s[1] + 2 * p - k[1]) % st > p
        for *_, s, k, st, p in cases
    )
    assert any(stride == 1 for *_, stride, _ in cases)


# --------------------------------------------------------------------------- Exercise 15.2


def batch_norm_by_steps(grad_output, x, eps=1e-5):
    """Written differently: backward through the forward's steps, one node at a time."""
    m = len(x)
    mu = x.mean(axis=0)
    centered = x - mu
    variance = (centered**2).mean(axis=0)
    inverse = 1 / np.sqrt(variance + eps)
    d_centered = grad_output * inverse
    d_inverse = (grad_output * centered).sum(axis=0)
    d_variance = d_inverse * -0.5 * (variance + eps) ** -1.5
    d_centered += d_variance * 2 * centered / m
    d_mu = -d_centered.sum(axis=0)
    return d_centered + d_mu / m


def batch_norm_by_jacobian(grad_output, x, eps=1e-5):
    """Written differently again: the Jacobian of each column, times dy."""
    m = len(x)
    out = np.zeros_like(x)
    for c in range(x.shape[1]):
        sigma = np.sqrt(x[:, c].var() + eps)
        normalized = (x[:, c] - x[:, c].mean()) / sigma
        jacobian = (np.eye(m) - 1 / m - np.outer(normalized, normalized) / m) / sigma
        out[:, c] = jacobian.T @ grad_output[:, c]
    return out


@pytest.mark.parametrize(
    "answer", [batch_norm_by_steps, batch_norm_by_jacobian, lesson15.batch_norm_backward]
)
def test_15_2_right_answers_pass(answer, capsys) -> None:
    lesson15.check_15_2(answer)
    assert capsys.readouterr().out == "Exercise 15.2: correct.\n"


def batch_norm_by_steps_without_the_2(grad_output, x, eps=1e-5):
    """batch_norm_by_steps with dσ²/dx_i written (x_i - μ)/m: the 2 of the square lost."""
    m = len(x)
    centered = x - x.mean(axis=0)
    variance = (centered**2).mean(axis=0)
    inverse = 1 / np.sqrt(variance + eps)
    d_centered = grad_output * inverse
    d_variance = (grad_output * centered).sum(axis=0) * -0.5 * (variance + eps) ** -1.5
    d_centered += d_variance * centered / m
    return d_centered - d_centered.sum(axis=0) / m


def batch_norm_by_steps_without_the_half(grad_output, x, eps=1e-5):
    """batch_norm_by_steps with d(σ² + eps)^(-1/2) written -(σ² + eps)^(-3/2): the 1/2 lost."""
    m = len(x)
    centered = x - x.mean(axis=0)
    variance = (centered**2).mean(axis=0)
    inverse = 1 / np.sqrt(variance + eps)
    d_centered = grad_output * inverse
    d_variance = (grad_output * centered).sum(axis=0) * -1.0 * (variance + eps) ** -1.5
    d_centered += d_variance * 2 * centered / m
    return d_centered - d_centered.sum(axis=0) / m


def _bn_model(hint):
    def answer(grad_output, x, eps=1e-5):
        return lesson15._bn_mistakes(grad_output, x, eps)[hint]

    return answer


@pytest.mark.parametrize("hint", list(lesson15._bn_mistakes(np.ones((3, 2)), np.eye(3, 2), 1.0)))
def test_15_2_every_named_mistake_gets_its_hint(hint) -> None:
    with pytest.raises(CheckError) as raised:
        lesson15.check_15_2(_bn_model(hint))
    assert hint in str(raised.value)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # μ held fixed, written as a learner would
        (lambda dy, x, eps=1e-5: (dy - ((x - x.mean(0)) / np.sqrt(x.var(0) + eps))
                                  * (dy * (x - x.mean(0)) / np.sqrt(x.var(0) + eps)).mean(0))
         / np.sqrt(x.var(0) + eps), "path through the mean is missing"),
        (lambda dy, x, eps=1e-5: (dy - dy.mean(0)) / np.sqrt(x.var(0) + eps),
         "path through the variance is missing"),
        (lambda dy, x, eps=1e-5: lesson15.batch_norm_backward(dy * 1, x, eps) * (len(x) - 1)
         / len(x), "expected"),
        (lambda dy, x, eps=1e-5: lesson15.batch_norm_backward(dy, x, 0.0), "eps is left out"),
        (lambda dy, x, eps=1e-5: lesson15.batch_norm_backward(dy, x), "whatever eps is passed"),
        (batch_norm_by_steps_without_the_2, "the term along x̂ is half what it should be"),
        (batch_norm_by_steps_without_the_half, "the term along x̂ is twice what it should be"),
        (lambda dy, x, eps=1e-5: dy.sum(0), "one number per feature"),
        (lambda dy, x, eps=1e-5: None, "is None: did you forget to `return` dx"),
        ("not a function", "should be a function; got a str"),
    ],
)  # fmt: skip
def test_15_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson15.check_15_2(answer)


def test_15_2_first_case_tells_the_mistakes_apart() -> None:
    rng = np.random.default_rng(6)
    shape, eps, centre, spread = lesson15._BN_CASES[0]
    x = centre + spread * rng.standard_normal(shape)
    dy = 0.5 + rng.standard_normal(shape)
    values = [*lesson15._bn_mistakes(dy, x, eps).values(), lesson15.batch_norm_backward(dy, x, eps)]
    for first, second in itertools.combinations(values, 2):
        assert not np.allclose(first, second, rtol=1e-6, atol=1e-8)
    # the large-eps case tells apart what only it can (a fixed eps among them)
    for shape, eps, centre, spread in lesson15._BN_CASES:
        if eps == lesson15._DEFAULT_EPS:
            continue
        x = centre + spread * rng.standard_normal(shape)
        dy = 0.5 + rng.standard_normal(shape)
        mistakes = lesson15._bn_mistakes(dy, x, eps)
        assert lesson15.EPS_FIXED in mistakes
        values = [*mistakes.values(), lesson15.batch_norm_backward(dy, x, eps)]
        for first, second in itertools.combinations(values, 2):
            assert not np.allclose(first, second, rtol=1e-6, atol=1e-8)


def test_15_2_an_eps_outside_the_root_shows_in_the_large_eps_case() -> None:
    def eps_outside(dy, x, eps=1e-5):
        sigma = x.std(axis=0) + eps
        normalized = (x - x.mean(axis=0)) / sigma
        return (dy - dy.mean(axis=0) - normalized * (dy * normalized).mean(axis=0)) / sigma

    assert any(eps >= 0.1 for _, eps, _, _ in lesson15._BN_CASES)
    with pytest.raises(CheckError, match="eps is outside the square root") as raised:
        lesson15.check_15_2(eps_outside)
    # It is named on the first case, eps=1e-05, where the printed digits agree: the hint
    # says so, and does not send the learner to a case that did not run.
    message = str(raised.value)
    assert "eps=1e-05" in message and "past the 4 printed here" in message
    assert "eps=0.5 shows" not in message


def test_15_2_eps_left_out_says_the_difference_is_past_the_digits_shown() -> None:
    with pytest.raises(CheckError, match="eps is left out") as raised:
        lesson15.check_15_2(lambda dy, x, eps=1e-5: lesson15.batch_norm_backward(dy, x, 0.0))
    assert "eps=1e-05" in str(raised.value) and "past the 4 printed here" in str(raised.value)


def test_15_2_a_fixed_eps_is_named_on_the_large_eps_case() -> None:
    def fixed_eps(dy, x, eps=1e-5):
        return batch_norm_by_steps(dy, x)  # the default eps, whatever is passed

    with pytest.raises(CheckError, match="whatever eps is passed") as raised:
        lesson15.check_15_2(fixed_eps)
    assert "eps=0.5" in str(raised.value)


# --------------------------------------------------------------------------- Exercises 15.3, 15.4


def output_sizes_by_attributes(size, layers):
    sizes = []
    for layer in layers:
        span = layer.dilation * (layer.kernel - 1) + 1
        size = (size + 2 * layer.padding - span) // layer.stride + 1
        sizes.append(size)
    return sizes


def output_sizes_without_the_ones(size, layers):
    """(S + 2p - d(k - 1)) // s: right for stride 1, one short when s does not divide."""
    sizes = []
    for kernel, stride, padding, dilation in layers:
        size = (size + 2 * padding - dilation * (kernel - 1)) // stride
        sizes.append(size)
    return sizes


@pytest.mark.parametrize("answer", [output_sizes_by_attributes, lesson15.output_sizes])
def test_15_3_right_answers_pass(answer, capsys) -> None:
    lesson15.check_15_3(answer)
    assert capsys.readouterr().out == "Exercise 15.3: correct.\n"


@pytest.mark.parametrize("hint", [*lesson15._SIZE_MISTAKES, lesson15.NOT_CHAINED])
def test_15_3_every_named_mistake_gets_its_hint(hint) -> None:
    rule = lesson15._SIZE_MISTAKES.get(hint, lesson15._not_chained)
    with pytest.raises(CheckError) as raised:
        lesson15.check_15_3(rule)
    assert hint in str(raised.value)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda size, layers: lesson15.output_sizes(size, layers)[-1], "a single number"),
        (lambda size, layers: [size, *lesson15.output_sizes(size, layers)],
         "starts with the input's size"),
        (lambda size, layers: [(size + 2 * p - d * (k - 1) - 1) / s + 1
                               for k, s, p, d in layers], "whole numbers"),
        (lambda size, layers: lesson15.output_sizes(size, layers)[:-1], "one size per layer"),
        (output_sizes_without_the_ones, "the -1 inside and the \\+1 outside are both left out"),
        (lambda size, layers: None, "is None"),
    ],
)  # fmt: skip
def test_15_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson15.check_15_3(answer)


def test_15_3_and_15_4_first_cases_tell_the_mistakes_apart() -> None:
    size, layers = lesson15._SIZE_CASES[0]
    sizes = [rule(size, layers) for rule in lesson15._SIZE_MISTAKES.values()]
    sizes += [lesson15._not_chained(size, layers), lesson15.output_sizes(size, layers)]
    assert len({tuple(s) for s in sizes}) == len(sizes)
    layers = lesson15._FIELD_CASES[0]
    fields = [rule(layers) for rule in lesson15._FIELD_MISTAKES.values()]
    fields.append(lesson15.receptive_field(layers))
    assert len(set(fields)) == len(fields)


def receptive_field_from_the_output(layers):
    field = 1
    for kernel, stride, _, dilation in reversed(layers):
        field = stride * (field - 1) + dilation * (kernel - 1) + 1
    return field


@pytest.mark.parametrize("answer", [receptive_field_from_the_output, lesson15.receptive_field])
def test_15_4_right_answers_pass(answer, capsys) -> None:
    lesson15.check_15_4(answer)
    assert capsys.readouterr().out == "Exercise 15.4: correct.\n"


@pytest.mark.parametrize("hint", list(lesson15._FIELD_MISTAKES))
def test_15_4_every_named_mistake_gets_its_hint(hint) -> None:
    with pytest.raises(CheckError) as raised:
        lesson15.check_15_4(lesson15._FIELD_MISTAKES[hint])
    assert hint in str(raised.value)


def test_15_4_k_taps_for_k_minus_one_gaps_is_named() -> None:
    def with_k(layers):
        field, jump = 1, 1
        for kernel, stride, _, dilation in layers:
            field += dilation * kernel * jump
            jump *= stride
        return field

    with pytest.raises(CheckError, match=r"each layer adds d·\(k - 1\)·jump inputs, not d·k·jump"):
        lesson15.check_15_4(with_k)


def test_15_4_other_mistakes() -> None:
    with pytest.raises(CheckError, match="return one number"):
        lesson15.check_15_4(lambda layers: [lesson15.receptive_field(layers)] * 2)

    def stub(layers):
        raise NotImplementedError("Exercise 15.4: write receptive_field(layers)")

    with pytest.raises(CheckError, match="not written yet"):
        lesson15.check_15_4(stub)


# --------------------------------------------------------------------------- the notebook


def _check_cell(exercise: str) -> str:
    notebook = nbformat.read(LESSON, as_version=4)
    first_line = f"# Check Exercise {exercise}"
    return next(c.source for c in notebook.cells if c.source.startswith(first_line))


@pytest.mark.parametrize(
    ("exercise", "answer"),
    [
        ("15.1", input_grad_by_loops),
        ("15.2", batch_norm_by_steps),
        ("15.3", output_sizes_by_attributes),
        ("15.4", receptive_field_from_the_output),
    ],
)
def test_hidden_tests_pass_right_answers(exercise, answer, capsys) -> None:
    """The check cell as nbgrader grades it (hidden tests included), on another right answer."""
    name = {"15.1": "conv2d_input_grad", "15.2": "batch_norm_backward",
            "15.3": "output_sizes", "15.4": "receptive_field"}[exercise]  # fmt: skip
    exec(_check_cell(exercise), {name: answer})
    assert capsys.readouterr().out == f"Exercise {exercise}: correct.\n"


def test_hidden_tests_catch_a_list_changed_in_place() -> None:
    def reversing(layers):
        layers.reverse()
        return receptive_field_from_the_output(list(reversed(layers)))

    lesson15.check_15_4(reversing)  # the visible check passes fresh lists
    with pytest.raises(Exception, match="reversed it") as raised:
        exec(_check_cell("15.4"), {"receptive_field": reversing})
    assert type(raised.value).__name__ == "CheckError"  # the hidden tests' fresh copy's


def test_the_lesson_says_what_it_prints() -> None:
    """The accuracies the lesson's prose describes: the CNN far ahead of the MLP on held-out
    images, the MLP under half, one image at a time in training mode well below eval."""
    notebook = nbformat.read(LESSON, as_version=4)
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    cnn = float(re.search(r"CNN: training images [\d.]+%, held-out images ([\d.]+)%", text)[1])
    mlp = float(re.search(r"MLP: training images [\d.]+%, held-out images ([\d.]+)%", text)[1])
    assert cnn > 85 and mlp < 50 and cnn - mlp > 30
    one = float(re.search(r"one held-out image a time: ([\d.]+)%", text)[1])
    evaluation = float(re.search(r"evaluation mode: +([\d.]+)%", text)[1])
    assert evaluation - one > 20
    assert "parameters: CNN 1364, MLP 1345" in text
