"""Tests of lesson 09's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson09

# --------------------------------------------------------------------------- Exercise 9.1


def second_derivative(f, x):
    (first,) = minigrad.grad(f(x), x, create_graph=True)
    (second,) = minigrad.grad(first, x)
    return second


def second_derivative_without_create_graph(f, x):
    (first,) = minigrad.grad(f(x), x)
    (second,) = minigrad.grad(first, x)
    return second


def first_derivative_only(f, x):
    (first,) = minigrad.grad(f(x), x, create_graph=True)
    return first


def second_derivative_as_float(f, x):
    return second_derivative(f, x).item()


def second_derivative_as_tuple(f, x):
    (first,) = minigrad.grad(f(x), x, create_graph=True)
    return minigrad.grad(first, x)


def second_derivative_accumulated(f, x):
    f(x).backward(create_graph=True)
    x.grad.backward()  # x.grad was not reset: it ends up holding f' + f''
    return x.grad


def test_9_1_reference_passes(capsys) -> None:
    lesson09.check_9_1(second_derivative)
    assert "Exercise 9.1: correct." in capsys.readouterr().out


def test_9_1_backward_with_reset_passes(capsys) -> None:
    def with_backward(f, x):
        f(x).backward(create_graph=True)
        first = x.grad
        x.grad = None
        first.backward()
        return x.grad

    lesson09.check_9_1(with_backward)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (second_derivative_without_create_graph, "create_graph=True"),
        (first_derivative_only, "first derivative: differentiate it once more"),
        (second_derivative_as_float, "not a Variable"),
        (second_derivative_as_tuple, "is a tuple: minigrad.grad returns one gradient per input"),
        (second_derivative_accumulated, r"f'\(x\) \+ f''\(x\): x.grad accumulated"),
        (lambda f, x: f(x), r"f\(x\) itself"),
        (lambda f, x: None, "forget to `return`"),
    ],
)
def test_9_1_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_1(answer)


# --------------------------------------------------------------------------- Exercise 9.2


def hvp(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    (result,) = minigrad.grad((g * v).sum(), w)
    return result


def hvp_without_create_graph(f, w, v):
    (g,) = minigrad.grad(f(w), w)
    (result,) = minigrad.grad((g * v).sum(), w)
    return result


def hvp_returns_gradient(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    return g


def hvp_multiplies_after(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    (h_ones,) = minigrad.grad(g.sum(), w)
    return h_ones * v


def hvp_forgets_v(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    (h_ones,) = minigrad.grad(g.sum(), w)
    return h_ones


def hvp_gradient_times_v(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    return g * v


def hvp_directional_derivative(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    return (g * v).sum()


def hvp_full_hessian(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    rows = []
    for i in range(w.shape[0]):
        (row,) = minigrad.grad(g[i], w, retain_graph=True)
        rows.append(row)
    return minigrad.stack(rows)


def hvp_as_tuple(f, w, v):
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    return minigrad.grad((g * v).sum(), w)


def test_9_2_reference_passes(capsys) -> None:
    lesson09.check_9_2(hvp)
    assert "Exercise 9.2: correct." in capsys.readouterr().out


def test_9_2_dot_product_form_passes(capsys) -> None:
    def with_matmul(f, w, v):
        (g,) = minigrad.grad(f(w), w, create_graph=True)
        return minigrad.grad(g @ v, w)[0]

    lesson09.check_9_2(with_matmul)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (hvp_without_create_graph, "create_graph=True"),
        (hvp_returns_gradient, "the gradient ∇f\\(w\\): take the gradient of"),
        (hvp_multiplies_after, r"\(H·1\) \* v: multiply the gradient by v before"),
        (hvp_forgets_v, "H·1, with v left out"),
        (hvp_gradient_times_v, r"∇f\(w\) \* v elementwise"),
        (hvp_directional_derivative, "single number.*It equals ∇f · v"),
        (hvp_full_hessian, "the shape of the whole Hessian"),
        (hvp_as_tuple, "is a tuple"),
    ],
)
def test_9_2_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_2(answer)


# --------------------------------------------------------------------------- Exercise 9.3


def clip_gradient(grad):
    return minigrad.Variable(np.clip(grad.data, -1.0, 1.0))


def clip_in_place_returns_none(grad):
    np.clip(grad.data, -1.0, 1.0, out=grad.data)


def clip_in_place_returns_it(grad):
    np.clip(grad.data, -1.0, 1.0, out=grad.data)
    return grad


def clip_forgets_return(grad):
    minigrad.Variable(np.clip(grad.data, -1.0, 1.0))


def test_9_3_reference_passes(capsys) -> None:
    lesson09.check_9_3(clip_gradient)
    assert "Exercise 9.3: correct." in capsys.readouterr().out


def test_9_3_array_answer_passes(capsys) -> None:
    lesson09.check_9_3(lambda grad: np.clip(grad.data, -1.0, 1.0))
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (clip_in_place_returns_none, "changed the gradient it was given in place"),
        (clip_in_place_returns_it, "changed the gradient it was given in place"),
        (clip_forgets_return, "returned None, so the gradient stays as it was"),
        (lambda g: minigrad.Variable(np.clip(g.data, 0.0, 1.0)), "the lower bound is -1"),
        (lambda g: minigrad.Variable(np.minimum(g.data, 1.0)), "entries below -1 are not"),
        (lambda g: minigrad.Variable(np.maximum(g.data, -1.0)), "entries above 1 are not"),
        (lambda g: minigrad.Variable(np.clip(g.data, 1.0, -1.0)), "the bounds are swapped"),
        (lambda g: minigrad.Variable(np.sign(g.data)), "the sign of each entry"),
        (lambda g: g / np.abs(g.data).max(), "rescales the whole gradient"),
    ],
)
def test_9_3_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_3(answer)


# --------------------------------------------------------------------------- Exercise 9.4


class ReluInPlace(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        np.maximum(x.data, 0, out=x.data)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (output,) = ctx.saved_tensors
        return grad * (output.data > 0)


class ReluForgotMarkDirty(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        np.maximum(x.data, 0, out=x.data)
        ctx.mask = x.data > 0
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask


class ReluOutOfPlaceMarked(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return np.maximum(x.data, 0)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ReluOutOfPlace(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mask = x.data > 0
        return np.maximum(x.data, 0)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask


class ReluUnmaskedBackward(ReluInPlace):
    @staticmethod
    def backward(ctx, grad):
        return grad


class ReluInvertedMask(ReluInPlace):
    @staticmethod
    def backward(ctx, grad):
        (output,) = ctx.saved_tensors
        return grad * (output.data <= 0)


class ReluTimesOutput(ReluInPlace):
    @staticmethod
    def backward(ctx, grad):
        (output,) = ctx.saved_tensors
        return grad * output.data


def test_9_4_reference_passes(capsys) -> None:
    lesson09.check_9_4(ReluInPlace)
    assert "Exercise 9.4: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (ReluForgotMarkDirty, r"_version is still 0 .*call ctx.mark_dirty\(x\)"),
        (ReluOutOfPlaceMarked, "returned something else"),
        (ReluOutOfPlace, "left y's own data unchanged"),
        (ReluUnmaskedBackward, "also flows where the input was negative"),
        (ReluInvertedMask, "the mask is inverted"),
        (ReluTimesOutput, "multiplied by the output itself"),
        (ReluInPlace.apply, "pass the Function class itself"),
    ],
)
def test_9_4_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_4(answer)


# --------------------------------------------------------------------------- errors in the answers


def _stub(exercise: str):
    def stub(*args):
        raise NotImplementedError(f"Exercise {exercise}: ...")

    return stub


class ReluInPlaceUnwritten(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError("Exercise 9.4: write ReluInPlace")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Exercise 9.4: write ReluInPlace")


class ReluInPlaceBackwardUnwritten(ReluInPlace):
    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Exercise 9.4: write ReluInPlace")


@pytest.mark.parametrize(
    ("check", "answer", "exercise"),
    [
        (lesson09.check_9_1, _stub("9.1"), "9.1"),
        (lesson09.check_9_2, _stub("9.2"), "9.2"),
        (lesson09.check_9_3, _stub("9.3"), "9.3"),
        (lesson09.check_9_4, ReluInPlaceUnwritten, "9.4"),
        (lesson09.check_9_4, ReluInPlaceBackwardUnwritten, "9.4"),
    ],
)
def test_unwritten_exercises_say_so(check, answer, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern) as info:
        check(answer)
    assert "RuntimeError" not in str(info.value)


def test_9_1_other_errors_are_reported_as_such() -> None:
    def forgets_x(f, x):
        (first,) = minigrad.grad(f(x), create_graph=True)
        return first

    with pytest.raises(CheckError, match=r"second_derivative\(f, x\) .* raised TypeError"):
        lesson09.check_9_1(forgets_x)


def test_9_3_a_hook_that_fails_during_backward() -> None:
    def clip_when_called_directly(grad):
        if grad.data.ndim == 1 and grad.data.size == 3:  # the hooked h of the check
            raise ValueError("shape (3,) not handled")
        return minigrad.Variable(np.clip(grad.data, -1.0, 1.0))

    with pytest.raises(
        CheckError, match=r"backward with clip_gradient hooked on h = 4 \* x raised ValueError"
    ):
        lesson09.check_9_3(clip_when_called_directly)


def test_9_4_backward_errors_are_reported_as_such() -> None:
    class ReluBadBackward(ReluInPlace):
        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.mask  # never stored

    with pytest.raises(CheckError, match=r"backward of ReluInPlace\.apply\(y\).* AttributeError"):
        lesson09.check_9_4(ReluBadBackward)
