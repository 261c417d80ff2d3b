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


# --------------------------------------------------------------------------- Exercise 9.5


def _fixed_point(a, W):
    z = np.zeros_like(a)
    for _ in range(10_000):
        z_next = np.tanh(W @ z + a)
        if np.max(np.abs(z_next - z)) < 1e-12:
            return z_next
        z = z_next
    raise AssertionError("no convergence")


def _fixed_point_answer(adjoint):
    """A FixedPoint whose forward is right and whose backward returns adjoint(z, W, g)."""

    class Answer(minigrad.Function):
        @staticmethod
        def forward(ctx, a, W):
            ctx.z, ctx.W = _fixed_point(a.data, W), W
            return ctx.z

        @staticmethod
        def backward(ctx, grad):
            return adjoint(ctx.z, ctx.W, grad.data), None

    Answer.__name__ = Answer.__qualname__ = "FixedPoint"
    return Answer


def _solve(matrix, g):
    return np.linalg.solve(np.eye(len(g)) - matrix, g)


FixedPointSolve = _fixed_point_answer(
    lambda z, W, g: (1 - z**2) * _solve(((1 - z**2)[:, None] * W).T, g)
)
FixedPointNoTranspose = _fixed_point_answer(
    lambda z, W, g: (1 - z**2) * _solve((1 - z**2)[:, None] * W, g)
)
FixedPointOneStep = _fixed_point_answer(lambda z, W, g: (1 - z**2) * g)
FixedPointIgnoresGrad = _fixed_point_answer(
    lambda z, W, g: (1 - z**2) * _solve(((1 - z**2)[:, None] * W).T, np.ones_like(g))
)
FixedPointReturnsU = _fixed_point_answer(lambda z, W, g: _solve(((1 - z**2)[:, None] * W).T, g))
FixedPointPlus = _fixed_point_answer(
    lambda z, W, g: (1 - z**2) * _solve(-((1 - z**2)[:, None] * W).T, g)
)
FixedPointNoTanhPrime = _fixed_point_answer(lambda z, W, g: (1 - z**2) * _solve(W.T, g))


def _neumann_100(z, W, g):
    s, u = 1 - z**2, g.copy()
    for _ in range(100):  # a fixed number of steps: enough for ||W|| <= 0.8, not for 0.97
        u = g + W.T @ (s * u)
    return s * u


FixedPointNeumann100 = _fixed_point_answer(_neumann_100)


class FixedPointOneIteration(minigrad.Function):
    """forward takes a single step from z = 0 instead of iterating."""

    @staticmethod
    def forward(ctx, a, W):
        ctx.z, ctx.W = np.tanh(a.data), W
        return ctx.z

    @staticmethod
    def backward(ctx, grad):
        return (1 - ctx.z**2) * grad.data, None


class FixedPointOneGradient(minigrad.Function):
    """backward returns the gradient for a alone, forgetting W's None."""

    @staticmethod
    def forward(ctx, a, W):
        ctx.z, ctx.W = _fixed_point(a.data, W), W
        return ctx.z

    @staticmethod
    def backward(ctx, grad):
        s = 1 - ctx.z**2
        return s * _solve((s[:, None] * ctx.W).T, grad.data)


class FixedPointUnwritten(minigrad.Function):
    @staticmethod
    def forward(ctx, a, W):
        raise NotImplementedError("Exercise 9.5: write FixedPoint")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Exercise 9.5: write FixedPoint")


def test_9_5_reference_passes(capsys) -> None:
    lesson09.check_9_5(lesson09.FixedPoint)
    assert "Exercise 9.5: correct." in capsys.readouterr().out


def test_9_5_solve_and_a_variable_gradient_pass(capsys) -> None:
    """Written differently: np.linalg.solve for u; a Variable returned for a's gradient."""
    lesson09.check_9_5(FixedPointSolve)

    class AsVariable(FixedPointSolve):
        @staticmethod
        def backward(ctx, grad):
            grad_a, _ = FixedPointSolve.backward(ctx, grad)
            return minigrad.Variable(grad_a), None

    lesson09.check_9_5(AsVariable)
    assert capsys.readouterr().out.count("Exercise 9.5: correct.") == 2


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (FixedPointNoTranspose, "without the transpose"),
        (FixedPointOneStep, "one step through f only: the inverse"),
        (FixedPointIgnoresGrad, "the upstream gradient was ignored"),
        (FixedPointReturnsU, r"that is u itself"),
        (FixedPointPlus, r"\(I \+ \(∂f/∂z\)\^T\)\^\{-1\}"),
        (FixedPointNoTanhPrime, "∂f/∂z is missing tanh'"),
        (FixedPointOneIteration, "one step from z = 0"),
        (FixedPointOneGradient, "backward returns two values"),
        (FixedPointUnwritten, r"^Exercise 9.5 is not written yet"),
        (lesson09.FixedPoint.apply, r"not `FixedPoint.apply`"),
    ],
)
def test_9_5_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_5(answer)


def test_9_5_mistakes_are_told_apart_on_the_visible_cases() -> None:
    """Every named mistake differs from the right answer and from the others."""
    for n, norm, seed, a_values, upstream in lesson09.FIXED_POINT_CASES:
        W = lesson09.contraction(n, norm, seed)
        assert not np.allclose(W, W.T)
        assert not np.allclose(upstream, 1.0)
        right, mistakes = lesson09.fixed_point_gradients(np.array(a_values), W, np.array(upstream))
        values = [right, *mistakes.values()]
        for i, first in enumerate(values):
            for second in values[i + 1 :]:
                assert not np.allclose(first, second, rtol=1e-6, atol=1e-9)


def test_9_5_reference_matches_unrolled_backprop_and_keeps_no_iterates() -> None:
    W = lesson09.contraction(4, 0.9, 7)
    a_values, g = np.array([0.3, -0.2, 0.5, 0.1]), np.array([1.0, 0.5, -1.0, 2.0])
    unrolled = minigrad.Variable(a_values, requires_grad=True)
    z, iterations = lesson09.unrolled_fixed_point(unrolled, W)
    (z * minigrad.Variable(g)).sum().backward()
    implicit = minigrad.Variable(a_values, requires_grad=True)
    out = lesson09.FixedPoint.apply(implicit, W)
    (out * minigrad.Variable(g)).sum().backward()
    assert iterations > 20
    np.testing.assert_allclose(implicit.grad.data, unrolled.grad.data, rtol=1e-8)
    assert out.grad_fn.next_functions[0][0] is not None  # straight back to a's accumulator
    assert minigrad.gradcheck(lambda value: lesson09.FixedPoint.apply(value, W), (implicit,))


def test_9_5_a_fixed_number_of_adjoint_steps_is_left_to_the_hidden_tests(capsys) -> None:
    """The visible W contract fast enough for 100 steps; the hidden ||W|| = 0.97 does not
    (tests/hidden_catches/lesson09.py)."""
    lesson09.check_9_5(FixedPointNeumann100)
    assert "correct" in capsys.readouterr().out


# --------------------------------------------------------------------------- Exercise 9.6


def hook_prediction(x, w):
    received = w + x**2
    return received, 2 * x * np.clip(received, -1.0, 1.0) + 3.0


def _hook_answer(rule):
    def answer(x, w):
        return rule(x, w, x**2)

    return answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_hook_answer(lambda x, w, h: (np.clip(w + h, -1, 1), 2 * x * np.clip(w + h, -1, 1) + 3)),
         "that is what the hook returns"),
        (_hook_answer(lambda x, w, h: (w, 2 * x * np.clip(w, -1, 1) + 3)),
         "receives the sum of both uses"),
        (_hook_answer(lambda x, w, h: (w + 2 * h, 2 * x * np.clip(w + 2 * h, -1, 1) + 3)),
         "the 0.5 cancels the 2"),
        (_hook_answer(lambda x, w, h: (w + h + 3, 2 * x * np.clip(w + h, -1, 1) + 3)),
         "never reaches h's hook"),
        (_hook_answer(lambda x, w, h: (w + h, 2 * x * (w + h) + 3)),
         "the gradient without the hook"),
        (_hook_answer(lambda x, w, h: (w + h, np.clip(w + h, -1, 1) + 3)),
         "times ∂h/∂x = 2x"),
        (_hook_answer(lambda x, w, h: (w + h, x * np.clip(w + h, -1, 1) + 3)),
         "x \\* x uses x twice"),
        (_hook_answer(lambda x, w, h: (w + h, 2 * x * np.clip(w + h, -1, 1))),
         "the 3 from sum\\(3 \\* x\\) is missing"),
        (_hook_answer(lambda x, w, h: (w + h, 2 * x * (np.clip(w, -1, 1) + np.clip(h, -1, 1)) + 3)),
         "clipped on its own"),
        (_hook_answer(lambda x, w, h: (w + h, np.clip(2 * x * (w + h) + 3, -1, 1))),
         "clips x.grad at the end"),
        (_hook_answer(lambda x, w, h: (w + h, 2 * x * np.clip(w + h, -1, 1) + 1)),
         "the 3 was clipped too"),
        (_hook_answer(lambda x, w, h: 2 * x * np.clip(w + h, -1, 1) + 3), "return two arrays"),
        (_stub("9.6"), r"^Exercise 9.6 is not written yet"),
        (None, "should be a function"),
    ],
)
def test_9_6_mistakes(answer, hint) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson09.check_9_6(answer)


def test_9_6_reference_passes(capsys) -> None:
    lesson09.check_9_6(hook_prediction)
    lesson09.check_9_6(lesson09.hook_prediction)
    assert capsys.readouterr().out.count("Exercise 9.6: correct.") == 2


def test_9_6_a_list_answer_passes(capsys) -> None:
    """Written differently: lists, a loop over the entries."""

    def with_a_loop(x, w):
        received = [wi + xi * xi for xi, wi in zip(x, w)]
        x_grad = [2 * xi * min(max(r, -1.0), 1.0) + 3 for xi, r in zip(x, received)]
        return received, x_grad

    lesson09.check_9_6(with_a_loop)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("case", lesson09.HOOK_CASES)
def test_9_6_reference_is_what_the_engine_does(case) -> None:
    x, w = (np.array(values) for values in case)
    received, x_grad = lesson09.run_hook_graph(x, w)
    expected_received, expected_grad = lesson09.hook_prediction(x, w)
    np.testing.assert_allclose(received, expected_received)
    np.testing.assert_allclose(x_grad, expected_grad)
    assert (w + x**2 > 1).any() and (w + x**2 < -1).any()  # clipped above and below
    assert (np.abs(w + x**2) < 1).any()  # and not at all


def test_9_6_hook_mistakes_differ_from_the_answer_on_the_visible_cases() -> None:
    for case in lesson09.HOOK_CASES:
        x, w = (np.array(values) for values in case)
        right = lesson09.hook_prediction(x, w)
        for part, mistakes in zip(right, lesson09.hook_mistakes(x, w)):
            for value in mistakes.values():
                assert not np.allclose(part, value)


# --------------------------------------------------------------------------- in place, memory


def hook_prediction_in_place(x, w):
    """Right numbers, computed by writing into the caller's arrays."""
    x_original = x.copy()
    x **= 2
    x += w
    received = x
    return received, 2 * x_original * np.clip(received, -1.0, 1.0) + 3.0


def test_9_6_an_answer_that_changes_its_arguments_is_named() -> None:
    with pytest.raises(CheckError) as caught:
        lesson09.check_9_6(hook_prediction_in_place)
    message = str(caught.value)
    assert "changed the array x it was given, in place" in message
    assert "`x **= 2`, `x += w`" in message


def test_9_6_the_notebook_runs_on_whatever_the_answer_does_to_its_arguments() -> None:
    """The exercise cell's demo passes copies, and the cell that runs the graph defines its
    own arrays: with an answer that changes its arguments, that cell prints what it prints
    with the reference."""
    import contextlib
    import io
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parent.parent / "lessons" / "09_advanced_autodiff.ipynb"
    cells = ["".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]]
    (exercise,) = [c for c in cells if c.startswith("# Exercise 9.6")]
    after = cells[cells.index(exercise) + 3]  # the check, the markdown, then the graph
    assert "h.register_hook(clip_and_record)" in after
    demo = exercise[exercise.index("### END SOLUTION") + len("### END SOLUTION") :]

    def printed(answer):
        namespace = {"np": np, "minigrad": minigrad, "lesson09": lesson09,
                     "hook_prediction": answer}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(demo, namespace)  # noqa: S102 - the notebook's own cells
            exec(after, namespace)  # noqa: S102
        return out.getvalue()

    assert printed(hook_prediction_in_place) == printed(lesson09.hook_prediction)


def test_9_6_heading_is_styled_like_the_other_exercises() -> None:
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parent.parent / "lessons" / "09_advanced_autodiff.ipynb"
    text = "".join(
        "".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]
    )
    assert "\n## Exercise 9.6: predict what a hook receives\n" in text
    assert "· Exercise" not in text


class FixedPointKeepsIterates(minigrad.Function):
    """Right gradients; forward keeps every iterate on ctx."""

    @staticmethod
    def forward(ctx, a, W):
        z, zs = np.zeros_like(a.data), []
        while True:
            z_next = np.tanh(W @ z + a.data)
            zs.append(z_next)
            if np.max(np.abs(z_next - z)) < 1e-12:
                break
            z = z_next
        ctx.iterates, ctx.W = zs, W
        return z_next

    @staticmethod
    def backward(ctx, grad):
        z = ctx.iterates[-1]
        s = 1 - z**2
        return s * _solve((s[:, None] * ctx.W).T, grad.data), None


class FixedPointSavesIterates(FixedPointKeepsIterates):
    """The iterates as Variables through save_for_backward, as one stacked array."""

    @staticmethod
    def forward(ctx, a, W):
        out = FixedPointKeepsIterates.forward(ctx, a, W)
        ctx.save_for_backward(minigrad.Variable(np.stack(ctx.iterates)))
        del ctx.iterates
        ctx.z = out
        return out

    @staticmethod
    def backward(ctx, grad):
        s = 1 - ctx.z**2
        return s * _solve((s[:, None] * ctx.W).T, grad.data), None


class FixedPointKeepsWhatItNeeds(minigrad.Function):
    """z*, W, a, s and the Jacobian on ctx (more than needed, but no iterate)."""

    @staticmethod
    def forward(ctx, a, W):
        z = _fixed_point(a.data, W)
        ctx.z, ctx.W, ctx.a, ctx.s = z, W, a, 1 - z**2
        ctx.jacobian = ctx.s[:, None] * W
        ctx.save_for_backward(a)
        return z

    @staticmethod
    def backward(ctx, grad):
        return ctx.s * _solve(ctx.jacobian.T, grad.data), None


def test_9_5_forward_keeping_every_iterate_is_named() -> None:
    n, _, seed, a_values = lesson09.SLOW_CASE
    iterations = lesson09.solve_fixed_point(
        np.array(a_values), lesson09.slow_contraction(n, 0.97, seed)
    )[1]
    assert iterations > 200  # the memory would be an order of magnitude past the limit
    with pytest.raises(CheckError) as caught:
        lesson09.check_9_5(FixedPointKeepsIterates)
    message = str(caught.value)
    assert f"forward kept all {iterations} iterates on ctx (ctx.iterates holds" in message
    assert "Keep only z* (and W, a): the point of the implicit backward is memory that does " \
        "not grow with the iterations." in message
    with pytest.raises(CheckError, match=r"forward kept all \d+ iterates on ctx "
                       r"\(ctx.save_for_backward holds"):
        lesson09.check_9_5(FixedPointSavesIterates)


def test_9_5_forward_keeping_a_few_arrays_passes(capsys) -> None:
    lesson09.check_9_5(FixedPointKeepsWhatItNeeds)
    assert "Exercise 9.5: correct." in capsys.readouterr().out


def test_9_5_reference_keeps_little_on_ctx() -> None:
    n, norm, seed, a_values = lesson09.SLOW_CASE
    a = minigrad.Variable(np.array(a_values), requires_grad=True)
    out = lesson09.FixedPoint.apply(a, lesson09.slow_contraction(n, norm, seed))
    total, per_name = lesson09.ctx_bytes(out.grad_fn)
    assert total == 8 * (n + n * n) and set(per_name) >= {"z", "W"}


def _loose_adjoint(tol):
    def adjoint(z, W, g):
        s, u = 1 - z**2, g.copy()
        while True:
            u_next = g + W.T @ (s * u)
            if np.max(np.abs(u_next - u)) < tol:
                return s * u_next
            u = u_next

    return _fixed_point_answer(adjoint)


@pytest.mark.parametrize("tol", [1e-3, 1e-4, 1e-6])
def test_9_5_a_loosely_iterated_adjoint_shows_the_difference_and_the_fix(tol) -> None:
    with pytest.raises(CheckError) as caught:
        lesson09.check_9_5(_loose_adjoint(tol))
    message = str(caught.value)
    assert "close but not equal, the largest difference is" in message
    assert "iterate until u stops changing (solve_fixed_point uses 1e-12), or solve the " \
        "linear system" in message
    # 12 significant digits: the two vectors no longer look equal.
    got, expected = (part.split("]")[0] for part in message.split(" is [")[1].split(
        ", expected ["))
    assert got != expected and len(got.split(", ")[0]) > 10
