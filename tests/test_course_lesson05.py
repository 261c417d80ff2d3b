"""Checks of lesson 05: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson05

# --------------------------------------------------------------------------- Exercise 5.1


def _backward(grad_x: Callable, grad_w: Callable, grad_b: Callable) -> Callable:
    """A dense_backward whose three gradients come from the three formulas."""

    def dense_backward(x, W, grad_output):
        return grad_x(x, W, grad_output), grad_w(x, W, grad_output), grad_b(x, W, grad_output)

    return dense_backward


RIGHT_X = lambda x, W, g: g @ W.T  # noqa: E731 - short formulas read best as lambdas
RIGHT_W = lambda x, W, g: x.T @ g  # noqa: E731
RIGHT_B = lambda x, W, g: g.sum(0)  # noqa: E731


def test_5_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_1(_backward(RIGHT_X, RIGHT_W, RIGHT_B))
    assert "Exercise 5.1: correct." in capsys.readouterr().out


def test_5_1_library_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_1(lesson05.dense_backward)
    assert "Exercise 5.1: correct." in capsys.readouterr().out


def test_5_1_numpy_answer_passes(capsys: pytest.CaptureFixture) -> None:
    def dense_backward(x, W, grad_output):
        g = grad_output.data
        return g @ W.data.T, x.data.T @ g, g.sum(axis=0)

    lesson05.check_5_1(dense_backward)
    assert "correct" in capsys.readouterr().out


def test_5_1_broadcast_sums_pass(capsys: pytest.CaptureFixture) -> None:
    """Written differently: the index formulas as broadcast products summed over an axis."""

    def dense_backward(x, W, grad_output):
        grad_x = (grad_output.unsqueeze(1) * W.unsqueeze(0)).sum(-1)  # (N, in, out) -> (N, in)
        grad_W = (x.unsqueeze(-1) * grad_output.unsqueeze(1)).sum(0)  # (N, in, out) -> (in, out)
        grad_b = (grad_output * 1.0).sum(dim=0)
        return grad_x, grad_W, grad_b

    lesson05.check_5_1(dense_backward)
    assert "correct" in capsys.readouterr().out


def test_5_1_hidden_data_has_a_batch_of_one() -> None:
    assert lesson05.ONE_SAMPLE[0] == 1


@pytest.mark.parametrize(
    ("grad_x", "grad_w", "grad_b", "hint"),
    [
        # The lesson's (out, in) formulas copied for the (in, out) layout.
        (
            RIGHT_X,
            lambda x, W, g: g.T @ x,
            RIGHT_B,
            r"grad_W has shape \(4, 3\), expected W's shape \(3, 4\): that is the gradient "
            r"for the \(out, in\) layout",
        ),
        (
            lambda x, W, g: g @ W,
            RIGHT_W,
            RIGHT_B,
            r"raised OpError.*With N = in = out, where every product fits, the function runs, "
            r"and its grad_x shows the slip: that is grad_output @ W, the formula "
            r"for the lesson's \(out, in\) layout",
        ),
        # the bias gradient left per sample
        (RIGHT_X, RIGHT_W, lambda x, W, g: g, "forget to sum the bias gradient over the batch"),
        # x where grad_output belongs
        (RIGHT_X, RIGHT_W, lambda x, W, g: x.sum(0), "did you sum x instead of grad_output"),
        (
            lambda x, W, g: x @ W,
            RIGHT_W,
            RIGHT_B,
            r"that is x @ W, the forward.s product; you used x where grad_output belongs",
        ),
        # wrong order of a product: raises on rectangular inputs, named on square ones
        (lambda x, W, g: W.T @ g, RIGHT_W, RIGHT_B, r"raised OpError"),
        (
            RIGHT_X,
            lambda x, W, g: g @ x,
            RIGHT_B,
            r"raised OpError.*its grad_W shows the slip: that is grad_output @ x: wrong order "
            r"of the product",
        ),
        # averaged instead of summed
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.mean(0), "mean over the batch"),
        (RIGHT_X, lambda x, W, g: x.T @ g / x.shape[0], RIGHT_B, "mean over the batch"),
        # summed over the wrong axis, or over everything
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.sum(1), "you summed over dim 1"),
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.sum(), "summed over everything"),
        # only the batch of one sample shows it: squeeze drops the batch axis, then the sum
        # over dim 0 takes the outputs
        (RIGHT_X, RIGHT_W, lambda x, W, g: g.squeeze().sum(0), "summed over everything"),
        # per-sample weight gradients, never summed
        (
            RIGHT_X,
            lambda x, W, g: x.unsqueeze(-1) * g.unsqueeze(-2),
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


def test_5_1_lesson_formulas_get_the_layout_hint() -> None:
    """The whole (out, in) backward of the lesson, copied: named as the other layout."""
    with pytest.raises(CheckError, match=r"formula for the lesson's \(out, in\) layout"):
        lesson05.check_5_1(lesson05.linear_backward)


def test_5_1_gradients_in_the_wrong_order() -> None:
    def dense_backward(x, W, grad_output):
        return x.T @ grad_output, grad_output @ W.T, grad_output.sum(0)

    with pytest.raises(CheckError, match=r"come in the order \(grad_W, grad_x, grad_b\)"):
        lesson05.check_5_1(dense_backward)


def test_5_1_two_gradients() -> None:
    def dense_backward(x, W, grad_output):
        return grad_output @ W.T, x.T @ grad_output

    with pytest.raises(CheckError, match="returned 2 values; return three"):
        lesson05.check_5_1(dense_backward)


def test_5_1_unsolved_and_not_a_function() -> None:
    def dense_backward(x, W, grad_output):
        raise NotImplementedError("Exercise 5.1: write dense_backward")

    with pytest.raises(CheckError, match="is not written yet"):
        lesson05.check_5_1(dense_backward)
    with pytest.raises(CheckError, match="should be a function"):
        lesson05.check_5_1(3)


def test_numpy_rule_matches_where_the_error_was_raised() -> None:
    """The .numpy() hint rule looks at the frame that raised, not at the message."""
    types, raised_by_numpy, _ = lesson05.NUMPY_IN_BACKWARD
    leaf = minigrad.Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as from_numpy:
        leaf.numpy()
    assert isinstance(from_numpy.value, types) and raised_by_numpy(from_numpy.value)
    # The same words raised anywhere else do not match.
    with pytest.raises(RuntimeError) as elsewhere:
        raise RuntimeError("Can't call numpy() on a Variable that requires grad.")
    assert not raised_by_numpy(elsewhere.value)


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


def test_5_2_einsum_answer_passes(capsys: pytest.CaptureFixture) -> None:
    """Written differently: NumPy's einsum on the raw arrays, a sum of squared products."""

    def per_sample_grad_norms(x, grad_output):
        g, xs = grad_output.data, x.data
        return np.sqrt(np.einsum("nj,ni,nj,ni->n", g, xs, g, xs))

    lesson05.check_5_2(per_sample_grad_norms)
    assert "correct" in capsys.readouterr().out


def test_5_2_hidden_data_has_a_zero_row_and_a_batch_of_one() -> None:
    assert any(case[0] == 1 for case in lesson05.NORM_CASES)
    assert lesson05.ZERO_ROW[0] in {case[3] for case in lesson05.NORM_CASES}


def test_5_2_summing_over_the_batch_of_one_is_named() -> None:
    """With one sample a norm of the summed gradient has the value but not the shape."""
    with pytest.raises(CheckError, match=r"the batch's gradient, summed over the samples"):
        lesson05.check_5_2(_norms(lambda x, g: ((g.T @ x) ** 2).sum().sqrt()))


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


class SkipsAZeroBias(Reference):
    """Treats a bias of zeros as no bias: tests the values instead of `is None`."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if bias is not None and bias.data.any() else None
        return grad_output @ weight, grad_output.T @ x, grad_bias


class KeepsTheBatchAxis(Reference):
    """A (1, out) bias gradient: b's shape (out,) broadcasts to it, so apply sums it back."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_bias = None if bias is None else grad_output.sum(0, keepdim=True)
        return grad_output @ weight, grad_output.T @ x, grad_bias


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
        (SkipsAZeroBias, r"a zero bias is still a bias.*Test `bias is None`"),
    ],
)
def test_5_3_mistakes_get_their_hint(cls: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson05.check_5_3(cls)


def test_5_3_flag_on_ctx_and_einsum_pass(capsys: pytest.CaptureFixture) -> None:
    """Written differently: a flag kept on ctx, NumPy's einsum for the products."""

    class Flagged(minigrad.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.has_bias = bias is not None
            ctx.save_for_backward(x, weight)
            out = np.einsum("ni,oi->no", x.data, weight.data)
            return out + bias.data if ctx.has_bias else out

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            g = grad_output.data
            grad_x = np.einsum("no,oi->ni", g, weight.data)
            grad_w = np.einsum("no,ni->oi", g, x.data)
            return grad_x, grad_w, (g.sum(axis=0) if ctx.has_bias else None)

    lesson05.check_5_3(Flagged)
    assert "correct" in capsys.readouterr().out


def test_5_3_kept_batch_axis_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_3(KeepsTheBatchAxis)
    assert "correct" in capsys.readouterr().out


def test_5_3_not_a_function_class() -> None:
    with pytest.raises(CheckError, match="not `LinearOptionalBias.apply`"):
        lesson05.check_5_3(Reference.apply)
    with pytest.raises(CheckError, match="subclasses minigrad.Function"):
        lesson05.check_5_3(lambda x, w, b: x)


class ZerosForEveryBias(Reference):
    """A learner who returns zeros as the bias gradient whenever there is a bias."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_bias = None if bias is None else np.zeros(weight.shape[0])
        return grad_output @ weight, grad_output.T @ x, grad_bias


def test_5_3_a_bias_gradient_of_zeros_is_named() -> None:
    """Found by the audit: zeros for an existing bias got numbers only."""
    with pytest.raises(CheckError, match=r"that is all zeros: the bias gets grad_output summed"):
        lesson05.check_5_3(ZerosForEveryBias)


# --------------------------------------------------------------------------- Exercise 5.4


def _bilinear(grad_x1: Callable, grad_w: Callable, grad_x2: Callable, grad_b: Callable) -> Callable:
    """A bilinear_backward whose four gradients come from the four formulas, each called
    as formula(x1, W, x2, G) with G = grad_output.unsqueeze(1), of shape (N, 1)."""

    def bilinear_backward(x1, W, x2, grad_output):
        g = grad_output.unsqueeze(1)
        return tuple(f(x1, W, x2, g) for f in (grad_x1, grad_w, grad_x2, grad_b))

    return bilinear_backward


B_X1 = lambda x1, W, x2, g: g * (x2 @ W.T)  # noqa: E731 - short formulas read best as lambdas
B_W = lambda x1, W, x2, g: x1.T @ (g * x2)  # noqa: E731
B_X2 = lambda x1, W, x2, g: g * (x1 @ W)  # noqa: E731
B_B = lambda x1, W, x2, g: g.sum()  # noqa: E731


def test_5_4_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson05.check_5_4(_bilinear(B_X1, B_W, B_X2, B_B))
    assert "Exercise 5.4: correct." in capsys.readouterr().out
    lesson05.check_5_4(lesson05.bilinear_backward)


def test_5_4_numpy_and_index_sums_pass(capsys: pytest.CaptureFixture) -> None:
    """Written on raw arrays with einsum, the index formulas as they stand."""

    def bilinear_backward(x1, W, x2, grad_output):
        a, w, b, g = x1.data, W.data, x2.data, grad_output.data
        return (
            np.einsum("n,ij,nj->ni", g, w, b),
            np.einsum("n,ni,nj->ij", g, a, b),
            np.einsum("n,ni,ij->nj", g, a, w),
            g.sum(),
        )

    lesson05.check_5_4(bilinear_backward)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("gradients", "hint"),
    [
        # The named slips: grad_output forgotten, a transpose missing or extra.
        ((lambda x1, W, x2, g: x2 @ W.T, B_W, B_X2, B_B), r"grad_x1 .*grad_output is missing"),
        ((B_X1, lambda x1, W, x2, g: x1.T @ x2, B_X2, B_B), r"grad_W .*grad_output is missing"),
        ((B_X1, B_W, lambda x1, W, x2, g: x1 @ W, B_B), r"grad_x2 .*grad_output is missing"),
        # Only fits with p = q: the rectangular case raises, the square case names it.
        (
            (lambda x1, W, x2, g: g * (x2 @ W), B_W, B_X2, B_B),
            r"raised OpError: .*With p = q, where every product fits, the function runs, and "
            r"its grad_x1 shows the slip: that is grad_output \* \(x2 @ W\)",
        ),
        (
            (B_X1, B_W, lambda x1, W, x2, g: g * (x1 @ W.T), B_B),
            r"With p = q, where every product fits, the function runs, and its grad_x2 shows "
            r"the slip: that is grad_output \* \(x1 @ W.T\)",
        ),
        ((B_X2, B_W, B_X1, B_B), r"grad_x1 has shape \(5, 4\), x2's shape"),
        ((B_X1, lambda x1, W, x2, g: (g * x2).T @ x1, B_X2, B_B), r"did you forget a transpose"),
        (
            (B_X1, lambda x1, W, x2, g: (x1.T @ x2) * g.sum(), B_X2, B_B),
            r"times the sum of grad_output: each sample's outer product is scaled by its own",
        ),
        (
            (B_X1, lambda x1, W, x2, g: x1.T @ (g * x2) / g.shape[0], B_X2, B_B),
            r"grad_W .*the mean over the batch",
        ),
        (
            (B_X1, lambda x1, W, x2, g: x1.unsqueeze(2) * (g * x2).unsqueeze(1), B_X2, B_B),
            r"grad_W has shape \(5, 3, 4\): one gradient per sample",
        ),
        ((B_X1, B_W, B_X2, lambda x1, W, x2, g: g.squeeze(1)), r"grad_b has shape \(5,\)"),
        ((B_X1, B_W, B_X2, lambda x1, W, x2, g: g.mean()), r"grad_b .*the mean of grad_output"),
        (
            (B_X1, B_W, B_X2, lambda x1, W, x2, g: minigrad.Variable(float(g.shape[0]))),
            r"grad_b .*that is N, the number of samples",
        ),
        ((B_X1, B_W, B_X2, lambda x1, W, x2, g: g.sum(0)), r"grad_b has shape \(1,\)"),
    ],
    ids=["x1-no-G", "W-no-G", "x2-no-G", "x1-W-not-WT", "x2-WT-not-W", "swapped-inputs",
         "W-transposed", "W-sum-of-G", "W-mean", "W-per-sample", "b-per-sample", "b-mean",
         "b-count", "b-keepdim"],
)
def test_5_4_mistakes_get_their_hint(gradients: tuple, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson05.check_5_4(_bilinear(*gradients))


@pytest.mark.parametrize("changed", ["x1", "W", "x2", "grad_output"])
@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_5_4_an_input_changed_in_place_is_named(changed: str, before: bool) -> None:
    """Found by a learner-reviewer: `x2.data *= G.data` after computing the gradients gave
    right values and failed only in gradcheck, with "check the backward formula"."""

    def bilinear_backward(x1, W, x2, grad_output):
        named = {"x1": x1, "W": W, "x2": x2, "grad_output": grad_output}[changed]
        if before:
            named.data *= 2.0
        grads = lesson05.bilinear_backward(x1, W, x2, grad_output)
        if not before:
            named.data *= 2.0
        return grads

    with pytest.raises(
        CheckError,
        match=rf"^Exercise 5.4: bilinear_backward changed {changed} in place: compute new "
        r"arrays, leave the inputs as they are\.",
    ):
        lesson05.check_5_4(bilinear_backward)


def test_5_4_x2_scaled_by_grad_output_in_place_is_named() -> None:
    """The reviewer's own answer: x2's rows scaled by G in place, once the gradients are
    computed (on raw arrays, so the results do not see the change)."""

    def bilinear_backward(x1, W, x2, grad_output):
        a, w, b, g = x1.data, W.data, x2.data, grad_output.data
        grads = (g[:, None] * (b @ w.T), a.T @ (g[:, None] * b), g[:, None] * (a @ w), g.sum())
        x2.data *= grad_output.data[:, None]
        return grads

    with pytest.raises(CheckError, match=r"changed x2 in place") as caught:
        lesson05.check_5_4(bilinear_backward)
    assert "Check the backward formula" not in str(caught.value)


def test_5_4_wrong_count_and_not_a_function() -> None:
    with pytest.raises(CheckError, match=r"returned 3 values; return four gradients"):
        lesson05.check_5_4(lambda x1, W, x2, grad_output: (x1, W, x2))
    with pytest.raises(CheckError, match="should be a function"):
        lesson05.check_5_4(3.0)


def test_5_4_unwritten_says_so() -> None:
    def stub(x1, W, x2, grad_output):
        raise NotImplementedError("Exercise 5.4: write bilinear_backward")

    with pytest.raises(CheckError, match=r"^Exercise 5.4 is not written yet"):
        lesson05.check_5_4(stub)


def test_5_4_gradcheck_catches_a_backward_right_only_on_the_check_cases() -> None:
    """Values right on the check's cases but not as a backward: gradcheck runs the answer
    as the backward of a Function on other inputs."""
    sizes = {case[0] for case in lesson05.BILINEAR_CASES}

    def bilinear_backward(x1, W, x2, grad_output):
        grads = lesson05.bilinear_backward(x1, W, x2, grad_output)
        return grads if x1.shape[0] in sizes else tuple(2 * grad for grad in grads)

    with pytest.raises(CheckError, match=r"minigrad.gradcheck\(a Function whose backward is "):
        lesson05.check_5_4(bilinear_backward)
