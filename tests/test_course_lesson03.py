"""Checks of lesson 03: the reference Functions pass, the usual mistakes get their hint."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, lesson03

# --------------------------------------------------------------------------- Exercise 3.1


def _cube(gradient: Callable, forward: Callable = lambda x: x**3, count: int = 1) -> type:
    """A Cube whose forward returns forward(x) and whose backward returns
    gradient(x, grad_output), repeated `count` times when count > 1."""

    class Cube(minigrad.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return forward(x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            grad = gradient(x, grad_output)
            return grad if count == 1 else (grad,) * count

    return Cube


class CubeSavesOutput(minigrad.Function):
    """Saves x**3 and uses it as if it were x."""

    @staticmethod
    def forward(ctx, x):
        out = x**3
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_output


class CubeNoReturn(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x**3  # noqa: B018 - the planted mistake: computed, never returned

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad_output


class CubeSummed(minigrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return (3 * x**2 * grad_output).sum()


class CubeOutputOverX(minigrad.Function):
    """3x² computed as 3 * x³ / x from the saved input and output: nan at x = 0."""

    @staticmethod
    def forward(ctx, x):
        out = x**3
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        with np.errstate(invalid="ignore", divide="ignore"):
            return 3 * out / x * grad_output


def test_3_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_1(_cube(lambda x, g: 3 * x**2 * g))
    assert "Exercise 3.1: correct." in capsys.readouterr().out


class CubeSetupStyle(minigrad.Function):
    """Another right answer: the second style, x * x * x, and the factors in another order."""

    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x * x * 3.0


def test_3_1_another_right_answer_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_1(CubeSetupStyle)
    assert "Exercise 3.1: correct." in capsys.readouterr().out


def test_3_1_hidden_data_has_a_zero_and_a_single_number() -> None:
    values = [np.asarray(case[0]) for case in lesson03.CUBE_CASES]
    assert any((v == 0).any() for v in values)
    assert any(v.shape == () for v in values)


def test_3_1_backward_on_raw_arrays_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_1(_cube(lambda x, g: 3 * x.data**2 * g.data, lambda x: x.data**3))
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cube", "hint"),
    [
        (_cube(lambda x, g: 3 * x**2), "without grad_output"),
        (_cube(lambda x, g: 3 * x * g), "not 3x"),
        (_cube(lambda x, g: x**2 * g), "the 3 is missing"),
        (_cube(lambda x, g: 6 * x * g), "second derivative"),
        (_cube(lambda x, g: x**3 * g), "backward used the output where the derivative"),
        (_cube(lambda x, g: 3 * x**2 * g, count=2), "returned 2 gradients, expected 1"),
        (_cube(lambda x, g: None), "did backward return None"),
        (_cube(lambda x, g: 3 * x**2 * g, lambda x: 3 * x**2), "that is 3x², the derivative"),
        (_cube(lambda x, g: 3 * x**2 * g, lambda x: x**2), "forward should cube x"),
        (CubeSavesOutput, "save x"),
        (CubeNoReturn, "forward returned None; did you forget `return`"),
        (CubeSummed, "wrong shape"),
        # Square's backward copied from the lesson: the derivative of x², not x³.
        (_cube(lambda x, g: 2 * x * g), r"that is 2x · grad_output, the derivative of x²"),
        # 3x² written from the output: 3 * out / x is nan at the hidden data's x = 0.
        (CubeOutputOverX, r"x.grad is nan where x = 0: did backward divide by x"),
    ],
)
def test_3_1_mistakes_get_a_hint(cube: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson03.check_3_1(cube)


def test_3_1_errors_are_matched_by_where_they_come_from_not_words() -> None:
    """A TypeError the learner's forward raises itself, whatever its words, is reported as
    it is: only apply's own refusal of a forward returning None gets the `return` hint."""

    class CubeRaises(minigrad.Function):
        @staticmethod
        def forward(ctx, x):
            raise TypeError("Cube.forward returned None; did you forget `return`?")

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(CheckError) as info:
        lesson03.check_3_1(CubeRaises)
    assert "raised TypeError: Cube.forward returned None" in str(info.value)
    assert "Cube.apply(x): forward returned None" not in str(info.value)


def test_3_1_wrong_kind_of_answer() -> None:
    cube = _cube(lambda x, g: 3 * x**2 * g)
    with pytest.raises(CheckError, match="not `Cube.apply`"):
        lesson03.check_3_1(cube.apply)
    with pytest.raises(CheckError, match="should subclass minigrad.Function"):
        lesson03.check_3_1(int)
    with pytest.raises(CheckError, match="should be a class"):
        lesson03.check_3_1(lambda x: x**3)


# --------------------------------------------------------------------------- Exercises 3.2 and 3.4


def _scaled_exp(gradients: Callable, save: str = "output", setup: bool = False) -> type:
    """A ScaledExp whose backward returns gradients(saved, x, k, grad_output); it saves the
    output, the input x, or nothing (and recomputes), in forward or in setup_context."""

    def remember(ctx, x, k, out):
        ctx.k = k
        ctx.x = x
        if save == "output":
            ctx.save_for_backward(out)
        elif save == "input":
            ctx.save_for_backward(x)

    def backward(ctx, grad_output):
        if save == "output":
            (saved,) = ctx.saved_tensors
        elif save == "input":
            (saved,) = ctx.saved_tensors
        else:
            saved = minigrad.exp(ctx.k * ctx.x)
        return gradients(saved, ctx.x, ctx.k, grad_output)

    if setup:

        class ScaledExpSetup(minigrad.Function):
            @staticmethod
            def forward(x, k):
                return minigrad.exp(k * x)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                remember(ctx, x, k, output)

        ScaledExpSetup.backward = staticmethod(backward)
        return ScaledExpSetup

    class ScaledExp(minigrad.Function):
        @staticmethod
        def forward(ctx, x, k):
            out = minigrad.exp(k * x)
            remember(ctx, x, k, out)
            return out

    ScaledExp.backward = staticmethod(backward)
    return ScaledExp


def _right(out, x, k, g):
    return k * out * g, None


class ScaledExpWithCtxInForward(minigrad.Function):
    """Second style asked for, but forward still takes ctx."""

    @staticmethod
    def forward(ctx, x, k):
        return minigrad.exp(k * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return ctx.k * out * grad_output, None


class ScaledExpUnpacksOne(minigrad.Function):
    @staticmethod
    def forward(x, k):
        return minigrad.exp(k * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return out * grad_output, None


SCALED_EXP_MISTAKES = [
    (lambda out, x, k, g: (k * out * g, (x * out * g).sum()), "output", "return None in its"),
    (lambda out, x, k, g: k * out * g, "output", "returned 1 gradient, expected 2"),
    (lambda out, x, k, g: (out * g, None), "output", "chain factor k"),
    (lambda out, x, k, g: (k * k * out * g, None), "output", r"that is k²·exp.*taken once"),
    (lambda out, x, k, g: (k * out, None), "output", "without grad_output"),
    (lambda out, x, k, g: (x * out * g, None), "output", "derivative with respect to k"),
    (lambda saved, x, k, g: (k * saved * g, None), "input", "save the output and use it"),
    (_right, "nothing", "did not save its output"),
]


def test_3_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_2(_scaled_exp(_right))
    assert "Exercise 3.2: correct." in capsys.readouterr().out


def test_3_2_forward_on_raw_arrays_passes(capsys: pytest.CaptureFixture) -> None:
    """forward may compute with NumPy and save the array it returns."""

    class ScaledExp(minigrad.Function):
        @staticmethod
        def forward(ctx, x, k):
            out = minigrad.exp(k * x).data
            ctx.save_for_backward(out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, grad_output):
            (out,) = ctx.saved_tensors
            return ctx.k * out * grad_output.data, None

    lesson03.check_3_2(ScaledExp)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize(("gradients", "save", "hint"), SCALED_EXP_MISTAKES)
def test_3_2_mistakes_get_a_hint(gradients: Callable, save: str, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson03.check_3_2(_scaled_exp(gradients, save))


def test_3_2_hidden_data_has_k_zero_on_one_entry() -> None:
    assert (lesson03.SCALED_EXP_CASES[-1][1], np.size(lesson03.SCALED_EXP_CASES[-1][0])) == (0.0, 1)

    def k_dropped_when_zero(out, x, k, g):  # `ctx.k or 1`: a zero k taken for "no k given"
        return (k or 1.0) * out * g, None

    with pytest.raises(CheckError, match=r"x\.grad with k = 0\.0 is \[2\], expected \[0\]"):
        lesson03.check_3_2(_scaled_exp(k_dropped_when_zero))


def test_3_2_forward_without_k() -> None:
    class ScaledExp(minigrad.Function):
        @staticmethod
        def forward(ctx, x, k):
            out = minigrad.exp(x)
            ctx.save_for_backward(out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, grad_output):
            (out,) = ctx.saved_tensors
            return ctx.k * out * grad_output, None

    with pytest.raises(CheckError, match="factor k is missing inside the exp"):
        lesson03.check_3_2(ScaledExp)


def test_3_4_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_4(_scaled_exp(_right, setup=True))
    assert "Exercise 3.4: correct." in capsys.readouterr().out


@pytest.mark.parametrize(("gradients", "save", "hint"), SCALED_EXP_MISTAKES)
def test_3_4_mistakes_get_a_hint(gradients: Callable, save: str, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson03.check_3_4(_scaled_exp(gradients, save, setup=True))


class ScaledExpSetupIndexed(minigrad.Function):
    """Another right answer: inputs read by index, the output saved under another name."""

    @staticmethod
    def forward(x, k):
        return (x * k).exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]
        result = output
        ctx.save_for_backward(result)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result * ctx.k, None


def test_3_4_another_right_answer_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_4(ScaledExpSetupIndexed)
    assert "Exercise 3.4: correct." in capsys.readouterr().out


class ScaledExpForwardUnpacks(minigrad.Function):
    """A ValueError from forward (not setup_context) gets no hint about `inputs`."""

    @staticmethod
    def forward(x, k):
        first, second = x.data  # x has more than two entries
        return (k * x).exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return ctx.k * out * grad_output, None


def test_3_4_a_value_error_outside_setup_context_is_reported_as_it_is() -> None:
    with pytest.raises(CheckError) as info:
        lesson03.check_3_4(ScaledExpForwardUnpacks)
    assert "raised ValueError: too many values to unpack" in str(info.value)
    assert "inputs` is the tuple" not in str(info.value)


@pytest.mark.parametrize(
    ("scaled_exp", "hint"),
    [
        (_scaled_exp(_right), "has no setup_context"),
        (ScaledExpWithCtxInForward, "forward takes ctx"),
        (ScaledExpUnpacksOne, "unpack every one of them"),
    ],
)
def test_3_4_style_mistakes_get_a_hint(scaled_exp: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson03.check_3_4(scaled_exp)


# --------------------------------------------------------------------------- Exercise 3.3


def _divide(grad_a: Callable, grad_b: Callable, skip: bool = True) -> type:
    """A Divide whose backward returns grad_a(a, b, g) and grad_b(a, b, g), each only when
    ctx.needs_input_grad asks for it (or always, with skip=False)."""

    class Divide(minigrad.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a / b

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            result_a = result_b = None
            if ctx.needs_input_grad[0] or not skip:
                result_a = grad_a(a, b, grad_output)
            if ctx.needs_input_grad[1] or not skip:
                result_b = grad_b(a, b, grad_output)
            return result_a, result_b

    return Divide


def _right_a(a, b, g):
    return g / b


def _right_b(a, b, g):
    return -g * a / b**2


class DivideIndicesSwapped(minigrad.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a = grad_output / b
        if ctx.needs_input_grad[0]:
            grad_b = -grad_output * a / b**2
        return grad_a, grad_b


class DivideOneGradient(minigrad.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output / b


def test_3_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson03.check_3_3(_divide(_right_a, _right_b))
    # Written differently: -(a / b) / b, and grad_output * b**-1.
    lesson03.check_3_3(_divide(lambda a, b, g: g * b**-1.0, lambda a, b, g: -(a / b) / b * g))
    assert capsys.readouterr().out.count("Exercise 3.3: correct.") == 2


def test_3_3_hidden_data_has_a_zero_numerator() -> None:
    """a holds 0 (where d(a/b)/db vanishes) and a negative entry, so a sign lost through
    abs() is caught on the check's own data, not only by gradcheck."""
    a, b, _ = lesson03.DIVIDE_CASE
    assert 0.0 in a and min(a) < 0.0

    def a_over_b_squared_abs(a, b, g):
        return -g * abs(a) / b**2

    with pytest.raises(CheckError, match=r"^Exercise 3\.3: b\.grad is "):
        lesson03.check_3_3(_divide(_right_a, a_over_b_squared_abs))


@pytest.mark.parametrize(
    ("divide", "hint"),
    [
        (_divide(_right_a, lambda a, b, g: g * a / b**2), "the sign is wrong"),
        (_divide(_right_a, lambda a, b, g: -g * a / b), "so b is squared"),
        (_divide(_right_a, lambda a, b, g: -a / b**2), "without grad_output"),
        (_divide(_right_a, lambda a, b, g: -g / b**2), "the factor a is missing"),
        (_divide(lambda a, b, g: g * b, _right_b), "divide by b"),
        (_divide(_right_b, _right_a), "swapped"),
        (_divide(_right_a, _right_b, skip=False), r"ctx.needs_input_grad\[1\] was False"),
        (DivideIndicesSwapped, "which index of ctx.needs_input_grad"),
        (DivideOneGradient, "returned 1 gradient, expected 2"),
    ],
)
def test_3_3_mistakes_get_a_hint(divide: type, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson03.check_3_3(divide)


def test_3_3_skips_a_when_only_b_needs_it() -> None:
    """A backward that skips b's gradient but always computes a's is caught on the second
    run, where only b requires grad."""

    class Divide(minigrad.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a / b

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_b = -grad_output * a / b**2 if ctx.needs_input_grad[1] else None
            return grad_output / b, grad_b

    with pytest.raises(CheckError, match=r"gradient for a, but ctx.needs_input_grad\[0\]"):
        lesson03.check_3_3(Divide)


# --------------------------------------------------------------------------- unwritten and lists


class CubeUnwritten(minigrad.Function):
    """The student version of Exercise 3.1 before any code is written."""

    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError("Exercise 3.1: write Cube")

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("Exercise 3.1: write Cube")


class DivideBackwardUnwritten(minigrad.Function):
    """Forward written, backward still the stub."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("Exercise 3.3: write Divide")


class ScaledExpSetupUnwritten(minigrad.Function):
    @staticmethod
    def forward(x, k):
        return (k * x).exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("Exercise 3.4: write setup_context")

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("Exercise 3.4: write setup_context")


class ScaledExpBackwardUnwritten(minigrad.Function):
    @staticmethod
    def forward(ctx, x, k):
        return (k * x).exp()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("Exercise 3.2: write ScaledExp")


@pytest.mark.parametrize(
    ("check", "answer", "exercise"),
    [
        (lesson03.check_3_1, CubeUnwritten, "3.1"),
        (lesson03.check_3_2, ScaledExpBackwardUnwritten, "3.2"),
        (lesson03.check_3_3, DivideBackwardUnwritten, "3.3"),
        (lesson03.check_3_4, ScaledExpSetupUnwritten, "3.4"),
    ],
)
def test_unwritten_exercises_say_so(check, answer: type, exercise: str) -> None:
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        check(answer)


class DivideReturnsList(minigrad.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return [grad_output / b, -grad_output * a / b**2]


def test_3_3_a_list_of_gradients_gets_a_hint() -> None:
    with pytest.raises(
        CheckError, match=r"returned a list of 2 values: return a tuple \(grad_a, grad_b\), not a"
    ):
        lesson03.check_3_3(DivideReturnsList)


def test_3_2_a_list_of_gradients_gets_a_hint() -> None:
    class ScaledExp(minigrad.Function):
        @staticmethod
        def forward(ctx, x, k):
            out = (k * x).exp()
            ctx.save_for_backward(out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, grad_output):
            (out,) = ctx.saved_tensors
            return [ctx.k * out * grad_output, None]

    with pytest.raises(CheckError, match=r"a list of 2 values: return a tuple \(grad_x, None\)"):
        lesson03.check_3_2(ScaledExp)


def test_3_1_a_list_gets_a_hint() -> None:
    listed = _cube(lambda x, g: [3 * x**2 * g, None])
    with pytest.raises(CheckError, match=r"a list of 2 values: return the gradient itself"):
        lesson03.check_3_1(listed)
