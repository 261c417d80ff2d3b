"""Checks of lesson 05: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson05

# --------------------------------------------------------------------------- Exercise 5.1


def _backward(grad_x: Callable, grad_w: Callable, grad_b: Callable) -> Callable:
    """A linear_backward whose three gradients come from the three formulas."""

    def linear_backward(x, W, grad_output):
        return grad_x(x, W, grad_output), grad_w(x, W, grad_output), grad_b(x, W, grad_output)

    return linear_backward


RIGHT_X = lambda x, W, g: g @ W  # noqa: E731 - short formulas read best as lambdas
RIGHT_W = lambda x, W, g: g.T @ x  # noqa: E731
RIGHT_B = lambda x, W, g: g.sum(0)  # noqa: E731


def test_5_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_1(_backward(RIGHT_X, RIGHT_W, RIGHT_B))
    assert "Exercise 5.1: correct." in capsys.readouterr().out


def test_5_1_numpy_answer_passes(capsys: pytest.CaptureFixture) -> None:
    def linear_backward(x, W, grad_output):
        g = grad_output.data
        return g @ W.data, g.T @ x.data, g.sum(axis=0)

    lesson05.check_5_1(linear_backward)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("grad_x", "grad_w", "grad_b", "hint"),
    [
        # x.T @ g: the weight's gradient transposed
        (
            RIGHT_X,
            lambda x, W, g: x.T @ g,
            RIGHT_B,
            r"shape \(3, 4\), expected \(4, 3\): did you forget a transpose\?",
        ),
        # the bias gradient left per sample
        (RIGHT_X, RIGHT_W, lambda x, W, g: g, "forget to sum the bias gradient over the batch"),
        # x where grad_output belongs
        (RIGHT_X, RIGHT_W, lambda x, W, g: x.sum(0), "did you sum x instead of grad_output"),
        (lambda x, W, g: x @ W, RIGHT_W, RIGHT_B, "you used x where grad_output belongs"),
        # wrong order of a product: raises on rectangular inputs, named on square ones
        (lambda x, W, g: W @ g, RIGHT_W, RIGHT_B, r"raised ValueError.*wrong order of the product"),
        (lambda x, W, g: g @ W.T, RIGHT_W, RIGHT_B, "W needs no transpose here"),
        (
            RIGHT_X,
            lambda x, W, g: g @ x,
            RIGHT_B,
            r"raised ValueError.*grad_W: that is grad_output @ x: wrong order of the product",
        ),
        # averaged instead of summed
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.mean(0), "mean over the batch"),
        (RIGHT_X, lambda x, W, g: g.T @ x / x.shape[0], RIGHT_B, "mean over the batch"),
        # summed over the wrong axis, or over everything
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.sum(1), "you summed over dim 1"),
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.sum(), "summed over everything"),
        # per-sample weight gradients, never summed
        (
            RIGHT_X,
            lambda x, W, g: g.unsqueeze(-1) * x.unsqueeze(-2),
            RIGHT_B,
            "one gradient per sample",
        ),
    ],
)
def test_5_1_mistakes_get_their_hint(
    grad_x: Callable, grad_w: Callable, grad_b: Callable, hint: str
) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson05.check_5_1(_backward(grad_x, grad_w, grad_b))


def test_5_1_gradients_in_the_wrong_order() -> None:
    def linear_backward(x, W, grad_output):
        return grad_output.T @ x, grad_output @ W, grad_output.sum(0)

    with pytest.raises(CheckError, match=r"come in the order \(grad_W, grad_x, grad_b\)"):
        lesson05.check_5_1(linear_backward)


def test_5_1_two_gradients() -> None:
    def linear_backward(x, W, grad_output):
        return grad_output @ W, grad_output.T @ x

    with pytest.raises(CheckError, match="returned 2 values; return three"):
        lesson05.check_5_1(linear_backward)


def test_5_1_unsolved_and_not_a_function() -> None:
    def linear_backward(x, W, grad_output):
        raise NotImplementedError("Exercise 5.1: write linear_backward")

    with pytest.raises(CheckError, match="NotImplementedError"):
        lesson05.check_5_1(linear_backward)
    with pytest.raises(CheckError, match="should be a function"):
        lesson05.check_5_1(3)


# --------------------------------------------------------------------------- Exercise 5.2


def _norms(body: Callable) -> Callable:
    def per_sample_grad_norms(x, grad_output):
        return body(x, grad_output)

    return per_sample_grad_norms


def _per_sample(x, g):
    return g.unsqueeze(-1) * x.unsqueeze(-2)


def test_5_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_2(_norms(lambda x, g: (_per_sample(x, g) ** 2).sum((1, 2)).sqrt()))
    assert "Exercise 5.2: correct." in capsys.readouterr().out


def test_5_2_product_of_norms_passes(capsys: pytest.CaptureFixture) -> None:
    def per_sample_grad_norms(x, grad_output):
        return np.linalg.norm(grad_output.data, axis=1) * np.linalg.norm(x.data, axis=1)

    lesson05.check_5_2(per_sample_grad_norms)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        (_per_sample, "those are the per-sample gradients themselves"),
        (lambda x, g: (_per_sample(x, g) ** 2).sum((1, 2)), "squared norms: take the square root"),
        (lambda x, g: (_per_sample(x, g) ** 2).sum(-1).sqrt(), "you reduced over one dim only"),
        (lambda x, g: ((g.T @ x) ** 2).sum().sqrt(), "the batch's gradient, summed over"),
        (lambda x, g: (g * g).sum(1).sqrt(), "x's norm is a factor too"),
        (lambda x, g: _per_sample(x, g).abs().sum((1, 2)), "sum of absolute values"),
    ],
)
def test_5_2_mistakes_get_their_hint(body: Callable, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson05.check_5_2(_norms(body))


# --------------------------------------------------------------------------- Exercise 5.3


class Reference(minigrad.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        out = x.data @ weight.data.T
        if bias is not None:
            out = out + bias.data
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_bias = None if bias is None else grad_output.sum(0)
        return grad_output @ weight, grad_output.T @ x, grad_bias


class ZeroBiasWithGradient(minigrad.Function):
    """Replaces a missing bias by zeros and returns a gradient for it."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        if bias is None:
            bias = minigrad.zeros(weight.shape[0])
        ctx.save_for_backward(x, weight)
        return x.data @ weight.data.T + bias.data

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(0)


class ZeroBiasSaved(minigrad.Function):
    """Replaces a missing bias by zeros, saves them, and returns None where it must."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        if bias is None:
            bias = minigrad.zeros(weight.shape[0])
        ctx.save_for_backward(x, weight, bias)
        return x.data @ weight.data.T + bias.data

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if ctx.needs_input_grad[2] else None
        return grad_output @ weight, grad_output.T @ x, grad_bias


class CrashesInForward(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return x.data @ weight.data.T + bias.data


class GradientForNoneBias(Reference):
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, _ = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(0)


class CrashesInBackward(Reference):
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(0).reshape(bias.shape)


class TwoGradientsWithoutBias(Reference):
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        if bias is None:
            return grad_output @ weight, grad_output.T @ x
        return grad_output @ weight, grad_output.T @ x, grad_output.sum(0)


class NoBiasEver(Reference):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return x.data @ weight.data.T


def test_5_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_3(Reference)
    assert "Exercise 5.3: correct." in capsys.readouterr().out


def test_5_3_once_differentiable_with_needs_input_grad_passes(
    capsys: pytest.CaptureFixture,
) -> None:
    class Decorated(Reference):
        @staticmethod
        @minigrad.once_differentiable
        def backward(ctx, grad_output):
            x, weight, bias = ctx.saved_tensors
            grad = grad_output.data
            grad_bias = None
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad.sum(0)
            return grad @ weight.data, grad.T @ x.data, grad_bias

    lesson05.check_5_3(Decorated)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cls", "hint"),
    [
        (ZeroBiasWithGradient, "with bias=None, backward returned a gradient for bias"),
        (ZeroBiasSaved, "forward saved a vector of zeros in place of the missing bias"),
        (CrashesInForward, "Forward crashed on the missing bias.*if bias is not None"),
        (GradientForNoneBias, r"return None in its place \(`return grad_x, grad_weight, None`\)"),
        (CrashesInBackward, "backward with bias=None raised AttributeError"),
        (TwoGradientsWithoutBias, "backward returns three values, None for a bias that is None"),
        (NoBiasEver, "the bias is missing: with a bias, add it"),
    ],
)
def test_5_3_mistakes_get_their_hint(cls: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson05.check_5_3(cls)


def test_5_3_not_a_function_class() -> None:
    with pytest.raises(CheckError, match="not `LinearOptionalBias.apply`"):
        lesson05.check_5_3(Reference.apply)
    with pytest.raises(CheckError, match="subclasses minigrad.Function"):
        lesson05.check_5_3(lambda x, w, b: x)
