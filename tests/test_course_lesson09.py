"""Tests of lesson 09's exercise checks: the reference answers pass, known mistakes get hints."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson09

# --------------------------------------------------------------------------- Exercise 9.1


def _derivatives(f, x_value, create_graph=True):
    point = minigrad.Variable(x_value, requires_grad=True)
    (first,) = minigrad.grad(f(point), point, create_graph=create_graph)
    (second,) = minigrad.grad(first, point)
    return first.item(), second.item()


def newton_step(f, x, lr=0.1):
    first, second = _derivatives(f, x)
    if second > 0:
        return x - first / second
    return x - lr * first


def _step(rule):
    """A newton_step that computes f' and f'' correctly and then applies rule(x, f', f'', lr)."""

    def answer(f, x, lr=0.1):
        first, second = _derivatives(f, x)
        return rule(x, first, second, lr)

    return answer


def newton_step_without_create_graph(f, x, lr=0.1):
    first, second = _derivatives(f, x, create_graph=False)
    return x - first / second if second > 0 else x - lr * first


def newton_step_on_the_float(f, x, lr=0.1):
    (first,) = minigrad.grad(f(x), x, create_graph=True)  # x is a float here
    return x - first.item()


def newton_step_as_tuple(f, x, lr=0.1):
    point = minigrad.Variable(x, requires_grad=True)
    (first,) = minigrad.grad(f(point), point, create_graph=True)
    return minigrad.grad(first, point)


def test_9_1_reference_passes(capsys) -> None:
    lesson09.check_9_1(newton_step)
    assert "Exercise 9.1: correct." in capsys.readouterr().out


def test_9_1_library_reference_passes(capsys) -> None:
    lesson09.check_9_1(lesson09.newton_step)
    assert "Exercise 9.1: correct." in capsys.readouterr().out


def test_9_1_backward_and_a_variable_result_pass(capsys) -> None:
    """Written differently: backward(create_graph=True) with a reset, the step computed on
    Variables, a 0-d Variable returned."""

    def with_backward(f, x, lr=0.1):
        point = minigrad.Variable(x, requires_grad=True)
        f(point).backward(create_graph=True)
        first = point.grad
        point.grad = None
        first.backward()
        second = point.grad
        newton = second.item() > 0
        step = first / second if newton else lr * first
        return (point - step).detach()

    lesson09.check_9_1(with_backward)
    assert "correct" in capsys.readouterr().out


def test_9_1_hidden_data_has_a_zero_second_derivative() -> None:
    assert any(second(x) == 0 for _, _, _, second, x, _ in lesson09.NEWTON_CASES)
    assert any(second(x) < 0 for _, _, _, second, x, _ in lesson09.NEWTON_CASES)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            _step(lambda x, g, h, lr: x - g / h),
            r"a Newton step, but f''\(0.5\) = -3 < 0: there Newton heads for a maximum",
        ),
        (
            _step(lambda x, g, h, lr: x - g / h if h >= 0 else x - lr * g),
            r"divided by zero: f''\(0.0\) = 0 exactly.*f'' > 0 \(strictly\)",
        ),
        (
            _step(lambda x, g, h, lr: x - np.float64(g) / np.float64(h) if h >= 0 else x - lr * g),
            r"not a finite number: f''\(0.0\) = 0 exactly",
        ),
        (_step(lambda x, g, h, lr: x + g / h if h > 0 else x - lr * g), r"x \+ f'/f''"),
        (_step(lambda x, g, h, lr: x - g / h if h > 0 else x + lr * g), r"x \+ lr·f'\(x\)"),
        (_step(lambda x, g, h, lr: x - g / h if h > 0 else x - g), r"multiplies the slope by lr"),
        (_step(lambda x, g, h, lr: x - g / abs(h)), r"divides by \|f''\|"),
        (_step(lambda x, g, h, lr: x - lr * g), r"that is the gradient step x - lr·f'\(x\)"),
        (newton_step_without_create_graph, "create_graph=True"),
        (newton_step_on_the_float, "x arrives as a plain number: make a leaf"),
        (newton_step_as_tuple, "returned a tuple: minigrad.grad returns one gradient per input"),
        (lambda f, x, lr=0.1: None, "returned None"),
        (lambda f, x, lr=0.1: f(minigrad.Variable(x)), r"that is f\(x\), the function's value"),
    ],
    ids=[
        "no-guard",
        "guard-ge-float-division",
        "guard-ge-numpy-division",
        "newton-sign",
        "gradient-sign",
        "forgot-lr",
        "abs-second",
        "always-gradient",
        "no-create-graph",
        "float-x",
        "tuple",
        "none",
        "value-of-f",
    ],
)
def test_9_1_mistakes(answer, hint) -> None:
    with np.errstate(divide="ignore", invalid="ignore"):
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


def hvp_halved(f, w, v):  # a 1/2 as in the quadratic form ½ vᵀHv
    (g,) = minigrad.grad(f(w), w, create_graph=True)
    return minigrad.grad(0.5 * (g * v).sum(), w)[0]


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
        (hvp_halved, r"that is H v / 2, half the answer: .*drop the factor 1/2"),
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
        (ReluOutOfPlaceMarked, r"forward returned an ndarray after ctx.mark_dirty\(x\)"),
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
    def forgets_the_point(f, x, lr=0.1):
        point = minigrad.Variable(x, requires_grad=True)
        (first,) = minigrad.grad(f(point), create_graph=True)
        return x - first.item()

    with pytest.raises(CheckError, match=r"newton_step\(f, 2.0, lr=0.05\) .* raised TypeError"):
        lesson09.check_9_1(forgets_the_point)


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


def test_9_2_hidden_data_has_one_weight_and_a_zero_vector() -> None:
    cases = lesson09._HVP_CASES
    assert any(len(w) == 1 for _, _, _, w, _ in cases)
    assert any(not any(v) for _, _, _, _, v in cases)


def test_9_3_hidden_data_has_the_bounds_themselves() -> None:
    values = np.concatenate([sample.ravel() for sample in lesson09.CLIP_SAMPLES])
    assert {-1.0, 0.0, 1.0} <= set(values.tolist())


def test_9_3_where_answer_passes(capsys) -> None:
    """Written differently: np.where on the raw array, a new Variable."""

    def clip_gradient(grad):
        g = grad.data
        return minigrad.Variable(np.where(g > 1, 1.0, np.where(g < -1, -1.0, g)))

    lesson09.check_9_3(clip_gradient)
    assert "correct" in capsys.readouterr().out


class ReluMaskOnCtx(minigrad.Function):
    """Written differently: the mask kept on ctx, np.clip writing into x's array."""

    @staticmethod
    def forward(ctx, x):
        np.clip(x.data, 0.0, None, out=x.data)
        ctx.mark_dirty(x)
        ctx.mask = x.data > 0
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask


def test_9_4_mask_on_ctx_passes(capsys) -> None:
    lesson09.check_9_4(ReluMaskOnCtx)
    assert "correct" in capsys.readouterr().out


def test_9_4_mask_that_lets_zero_through_is_named() -> None:
    """`output >= 0` is true everywhere after the in-place ReLU (the negatives became 0)."""

    class ReluGreaterEqual(ReluInPlace):
        @staticmethod
        def backward(ctx, grad):
            (output,) = ctx.saved_tensors
            return grad * (output.data >= 0)

    with pytest.raises(CheckError, match="also flows where the input was negative"):
        lesson09.check_9_4(ReluGreaterEqual)


def test_9_1_a_newton_step_scaled_by_lr_is_named() -> None:
    """Found by the audit: x - lr·f'/f'' where f'' > 0 got numbers only."""

    def newton_step(f, x, lr=0.1):
        point = minigrad.Variable(x, requires_grad=True)
        (first,) = minigrad.grad(f(point), point, create_graph=True)
        (second,) = minigrad.grad(first, point)
        if second.item() > 0:
            return x - lr * first.item() / second.item()
        return x - lr * first.item()

    with pytest.raises(CheckError, match=r"the Newton step takes no learning rate"):
        lesson09.check_9_1(newton_step)


def test_9_1_a_one_element_variable_result_passes(capsys) -> None:
    """A step returned as a Variable of shape (1,) is one number too (it used to raise a raw
    TypeError from float())."""

    def as_shape_one(f, x, lr=0.1):
        return minigrad.Variable(np.array([newton_step(f, x, lr)]))

    lesson09.check_9_1(as_shape_one)
    assert "Exercise 9.1: correct." in capsys.readouterr().out
