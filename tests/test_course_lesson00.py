"""Checks of lesson 00: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, check, lesson00

EXERCISES = Path(__file__).parent.parent / "lessons" / "exercises" / "00_welcome.ipynb"

# --------------------------------------------------------------------------- Exercise 0.1


def test_0_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson00.check_0_1(3 * 2.0**2 - 1)
    assert "Exercise 0.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer",
    [
        11,  # an int, as `3 * 2**2 - 1` gives
        np.float64(11.0),
        np.int64(11),
        2 * 2.0**3 - 5,  # another way to the same number
        11.0 + 1e-9,  # within the tolerance
    ],
)
def test_0_1_accepts_the_number_written_any_way(answer: object) -> None:
    lesson00.check_0_1(answer)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        # The named slip: a sign error in the derivative, 3x² + 1.
        (13.0, r"a sign error: that is 3x² \+ 1 at x = 2. The derivative of -x is -1"),
        (6.0, r"that is f\(2\) = 2³ - 2, the value of f itself: differentiate f first"),
        (12.0, "that is the slope of x³ alone.*the term -x has a derivative"),
        (5.0, "that is 3x - 1 at x = 2: .*x is still squared"),
        (3.0, "that is x² - 1 at x = 2: the power rule brings the exponent 3 down"),
        (7.0, "that is 2x² - 1 at x = 2"),
        # x² taken at the wrong point: (3x)² instead of 3·x².
        (35.0, r"that is \(3x\)² - 1 at x = 2: in 3x² only x is squared"),
        (26.0, r"that is the slope at x = 3 \(where the worked example was\)"),
        (-11.0, "the right size but the wrong sign"),
        (0.0, r"^Exercise 0.1: slope_by_hand is 0, expected 11\.$"),  # the edge: zero
        (10.0, r"that is 3x² - x at x = 2: the term -x was copied instead of differentiated"),
        (11.5, r"^Exercise 0.1: slope_by_hand is 11.5, expected 11\.$"),
    ],
)
def test_0_1_mistakes_get_a_hint(answer: float, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_1(answer)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (minigrad.Variable(11.0), "slope_by_hand is a Variable; work this one out by hand"),
        (np.array(11.0), "slope_by_hand is an ndarray; work this one out by hand"),
        ("11", "should be a number such as 2.5; got a str"),
        (True, "should be a number such as 2.5; got a bool"),
    ],
)
def test_0_1_answers_that_are_not_numbers(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_1(answer)


# --------------------------------------------------------------------------- Exercise 0.2


def test_0_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    x = minigrad.Variable(2.0, requires_grad=True)
    (x**3 - x).backward()
    lesson00.check_0_2(x.grad.item())
    assert "Exercise 0.2: correct." in capsys.readouterr().out


def test_0_2_accepts_another_way_and_an_int(capsys: pytest.CaptureFixture) -> None:
    # Written differently: minigrad.grad instead of backward, and the product form x(x² - 1).
    x = minigrad.Variable(2.0, requires_grad=True)
    (slope,) = minigrad.grad(x * (x * x - 1.0), x)
    lesson00.check_0_2(float(slope.item()))
    lesson00.check_0_2(11)
    assert capsys.readouterr().out.count("Exercise 0.2: correct.") == 2


def _slope_of(f: object, at: float = 2.0, start: minigrad.Variable | None = None) -> float:
    x = start if start is not None else minigrad.Variable(at, requires_grad=True)
    f(x).backward()
    return x.grad.item()


def test_0_2_reusing_the_worked_examples_x_is_named() -> None:
    x = minigrad.Variable(3.0, requires_grad=True)
    (x * x + 2 * x).backward()  # the worked example: x.grad = 8
    with pytest.raises(CheckError, match=r"that is 8 \+ 26: the worked example's x"):
        lesson00.check_0_2(_slope_of(lambda v: v**3 - v, start=x))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (_slope_of(lambda x: x**3 + x), r"slope of x\*\*3 \+ x: check the sign"),  # sign
        (6.0, r"that is f\(2\) itself"),
        (_slope_of(lambda x: x**3), "derivative of -x adds -1"),
        (22.0, r"backward\(\) twice"),
        (_slope_of(lambda x: x**3 - x, at=3.0), "slope at x = 3: did you reuse"),
        (minigrad.Variable(11.0), r"slope is a Variable; .* float with .item\(\)"),
        (np.array([11.0]), r"slope is an ndarray; .* float with .item\(\)"),
        (np.int64(11), r"slope is an int64; .* float with .item\(\)"),
        ("11", "should be a number such as 2.5; got a str"),
        (12, "derivative of -x adds -1"),
        (True, "should be a number such as 2.5; got a bool"),
        (10.0, r"^Exercise 0.2: slope is 10, expected 11\.$"),
        (0.0, r"^Exercise 0.2: slope is 0, expected 11\.$"),  # the edge: zero
    ],
)
def test_0_2_mistakes_get_a_hint(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_2(answer)


# --------------------------------------------------------------------------- Exercise 0.3


def test_0_3_reference_passes(capsys: pytest.CaptureFixture) -> None:
    a = minigrad.Variable(2.0, requires_grad=True)
    b = minigrad.Variable(3.0, requires_grad=True)
    (a * b + b**2).backward()
    lesson00.check_0_3(a.grad.item(), b.grad.item())
    lesson00.check_0_3(a.grad, b.grad)  # Variables are accepted too
    assert capsys.readouterr().out.count("Exercise 0.3: correct.") == 2


def test_0_3_accepts_another_way(capsys: pytest.CaptureFixture) -> None:
    # Written differently: b * (a + b) is the same f, and minigrad.grad returns both at once.
    a = minigrad.Variable(2.0, requires_grad=True)
    b = minigrad.Variable(3.0, requires_grad=True)
    grad_a, grad_b = minigrad.grad(b * (a + b), [a, b])
    lesson00.check_0_3(grad_a.item(), grad_b.item())
    lesson00.check_0_3(3, 8)  # ints, 0-d arrays: the same numbers
    lesson00.check_0_3(np.array(3.0), np.array(8.0))
    assert capsys.readouterr().out.count("Exercise 0.3: correct.") == 3


@pytest.mark.parametrize(
    ("grad_a", "grad_b", "hint"),
    [
        (8.0, 3.0, "swapped"),
        (2.0, 8.0, "with respect to a is b"),
        (3.0, 2.0, r"the b\*\*2 term adds 2b"),
        (3.0, 6.0, r"a \* b adds a"),
        (3.0, 5.0, r"the derivative of b\*\*2 is 2b, not b"),
        # b + 2a = 7: the roles of a and b swapped in the derivative.
        (3.0, 7.0, r"grad_b is 7, expected 8: that is b \+ 2a: a and b swapped places"),
        (3.0, 16.0, "twice the answer"),
        (6.0, 16.0, "grad_a is 6, expected 3: .*twice without zeroing .grad"),
        (6.0, 8.0, "grad_a is 6, expected 3: .*twice without zeroing .grad"),
        (None, 8.0, r"grad_a is None: assign it the gradient of a, `grad_a = a.grad.item\(\)`"),
        (3.0, None, r"If b.grad itself is None, make b with requires_grad=True\.$"),
        (15.0, 8.0, r"grad_a is 15, expected 3: that is f\(2, 3\) itself, the value of f"),
        (3.0, np.array([8.0, 8.0]), r"grad_b has shape \(2,\), expected \(\)"),
        (0.0, 0.0, r"^Exercise 0.3: grad_a is 0, expected 3\.$"),  # the edge: zeros
        (3.0, 3.0, r"^Exercise 0.3: grad_b is 3, expected 8\.$"),  # equal values, not swapped
    ],
)
def test_0_3_mistakes_get_a_hint(grad_a: object, grad_b: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_3(grad_a, grad_b)


# --------------------------------------------------------------------------- Exercise 0.4


def _slope_of_g(x):
    return (x**2 + 1) ** 2 + x * 2 * (x**2 + 1) * 2 * x


def test_0_4_reference_passes(capsys: pytest.CaptureFixture) -> None:
    lesson00.check_0_4(_slope_of_g)
    assert "Exercise 0.4: correct." in capsys.readouterr().out
    lesson00.check_0_4(lesson00.g_prime)


@pytest.mark.parametrize(
    "answer",
    [
        lambda x: (x * x + 1) * (5 * x * x + 1),  # factored
        lambda x: 5 * x**4 + 6 * x**2 + 1,  # the brackets multiplied out first
        lambda x: np.float64(5 * x**4 + 6 * x**2 + 1),
    ],
    ids=["factored", "expanded", "numpy-float"],
)
def test_0_4_accepts_the_derivative_written_any_way(answer) -> None:
    lesson00.check_0_4(answer)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            lambda x: x * (x * x + 1) ** 2,
            r"slope_of_g\(2\) is 50, expected 105: that is g\(x\) itself",
        ),
        (lambda x: (x * x + 1) ** 2, "only the first half of the product rule"),
        (lambda x: 4 * x * x * (x * x + 1), "only the second half of the product rule"),
        # The named slip for a chain: its inner derivative forgotten.
        (
            lambda x: (x * x + 1) ** 2 + 2 * x * (x * x + 1),
            "the chain rule's inner derivative is missing",
        ),
        (lambda x: 4 * x * (x * x + 1), "the two derivatives multiplied"),
        (
            lambda x: (x * x + 1) ** 2 + 2 * x * x * (x * x + 1),
            "the power rule's factor 2 is missing",
        ),
        # Found by a learner-reviewer: the product rule's halves subtracted, and the chain
        # rule's outer factor dropped (only the inner derivative 2x left).
        (
            lambda x: (x**2 + 1) ** 2 - x * 2 * (x**2 + 1) * 2 * x,
            r"slope_of_g\(2\) is -55, expected 105: the product rule's two halves are "
            r"subtracted: they add",
        ),
        (
            lambda x: (x**2 + 1) ** 2 + x * 2 * x,
            r"slope_of_g\(2\) is 33, expected 105: the chain rule's outer factor 2\(x² \+ 1\) "
            r"is missing",
        ),
        # Right at x = 2, wrong at the second point: the check tries both.
        (lambda x: 105.0, r"slope_of_g\(-1.5\) is 105, expected 39.81\.$"),
        (lambda x: 104.0, r"^Exercise 0.4: slope_of_g\(2\) is 104, expected 105\.$"),
    ],
    ids=["value", "first-half", "second-half", "no-inner", "multiplied", "no-power-2",
         "halves-subtracted", "no-outer", "constant", "unknown"],
)
def test_0_4_mistakes_get_a_hint(answer, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_4(answer)


def test_0_4_slips_give_different_numbers_at_both_points() -> None:
    """Each named slip differs from g' and from every other slip at both points the check
    uses, so a hint never names the wrong slip."""
    for x in lesson00.G_POINTS:
        values = [lesson00.g_prime(x)] + [slip(x) for slip in lesson00.G_SLIPS.values()]
        assert len({round(value, 9) for value in values}) == len(values)


def test_0_4_cell_after_the_check_does_not_write_the_derivative() -> None:
    """Found by a learner-reviewer: the cell that runs g with minigrad had g'(x) in a
    comment; it compares with the number 105 only (in the student version too)."""
    notebook = json.loads(EXERCISES.read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in notebook["cells"]
                if c["cell_type"] == "code" and "minigrad's g'(2)" in "".join(c["source"]))
    assert "5x²" not in cell and "5 *" not in cell
    assert "105.0" in cell


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (105.0, r"slope_of_g is the number 105; write a function of x"),
        ("x", "slope_of_g should be a function, `def slope_of_g"),
        (lambda x: minigrad.Variable(105.0), r"slope_of_g\(2\) is a Variable; work g'\(x\) out"),
        (lambda x: None, r"slope_of_g\(2\) returned None: did you forget the `return`\?"),
        (lambda x: 1 / 0, r"slope_of_g\(2\) raised ZeroDivisionError"),
    ],
    ids=["number", "text", "variable", "none", "error"],
)
def test_0_4_answers_that_are_not_functions_of_numbers(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_4(answer)


def test_0_4_hidden_tests_try_more_points() -> None:
    """The graded hidden tests (0, 3 as an int, -0.5) in the check cell are checked by
    tests/test_lessons_run_on.py; the check itself takes other points too."""
    lesson00.check_0_4(_slope_of_g, points=(0.0, 3, -0.5))
    with pytest.raises(CheckError, match=r"slope_of_g\(0\) is 0, expected 1: that is g\(x\)"):
        lesson00.check_0_4(lambda x: 4 * x * x * (x * x + 1) if x == 0 else _slope_of_g(x),
                           points=(0.0,))


# --------------------------------------------------------------------------- unwritten exercises


@pytest.mark.parametrize(
    ("exercise", "run_check"),
    [
        ("0.1", lambda: lesson00.check_0_1(None)),
        ("0.2", lambda: lesson00.check_0_2(None)),
        ("0.3", lambda: lesson00.check_0_3(None, None)),
        ("0.4", lambda: lesson00.check_0_4(None)),
    ],
)
def test_the_cells_placeholder_none_means_not_written(exercise: str, run_check: object) -> None:
    """Each exercise cell assigns its names None before the solution region, so the check
    of an unfinished exercise says so (it was a NameError)."""
    pattern = rf"^Exercise {exercise} is not written yet: replace the `raise NotImplementedError"
    with pytest.raises(CheckError, match=pattern):
        run_check()


@pytest.mark.parametrize("exercise", ["0.1", "0.2", "0.3", "0.4"])
def test_student_cells_unwritten_say_so(exercise: str) -> None:
    """As a learner: run the student version's exercise cell (it stops at the stub), then
    its check cell, in one namespace."""
    notebook = json.loads(EXERCISES.read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    namespace: dict = {}
    exec(sources[0].replace("lesson00.environment()", ""), namespace)  # the imports
    exercise_cell = next(s for s in sources if s.startswith(f"# Exercise {exercise}:"))
    check_cell = next(s for s in sources if s.startswith(f"# Check Exercise {exercise}"))
    with pytest.raises(NotImplementedError, match=f"^Exercise {exercise}"):
        exec(exercise_cell, namespace)
    with pytest.raises(CheckError, match=f"^Exercise {exercise} is not written yet"):
        exec(check_cell, namespace)


# --------------------------------------------------------------------------- check.py helpers
# The helpers every lesson's checks are built from (minigrad.course.check).


def test_call_says_an_unwritten_exercise_is_not_written() -> None:
    def stub() -> None:
        raise NotImplementedError("Exercise 7.3: write it")

    message = (
        "Exercise 7.3 is not written yet: replace the `raise NotImplementedError(...)` "
        "line with your code."
    )
    with pytest.raises(CheckError) as caught:
        check.call("7.3", "stub()", stub)
    assert str(caught.value) == message


def test_call_reports_other_errors_with_the_first_matching_hint() -> None:
    class BadValueError(ValueError):
        def __init__(self, value: float) -> None:
            self.value = value
            super().__init__(f"bad value {value}")

    def broken(value: float) -> float:
        raise BadValueError(value)

    with pytest.raises(
        CheckError, match=r"^Exercise 7\.1: broken\(2\) raised BadValueError: bad value 2\.$"
    ):
        check.call("7.1", "broken(2)", broken, 2)
    rules = [
        (TypeError, "Never this one."),
        (ValueError, lambda error: error.value == 3, "Nor this one."),
        lambda error: "From a function: it matched." if isinstance(error, BadValueError) else None,
        (ValueError, "Not reached."),
    ]
    with pytest.raises(CheckError, match=r"bad value 2\. From a function: it matched\.$"):
        check.call("7.1", "broken(2)", broken, 2, hints=rules)
    with pytest.raises(CheckError, match=r"raised BadValueError: bad value 2\. Use a number\.$"):
        check.call(
            "7.1",
            "broken(2)",
            broken,
            2,
            hints=[(BadValueError, lambda e: e.value == 2, "Use a number.")],
        )


def test_a_hint_rule_that_matches_words_is_refused() -> None:
    def broken() -> None:
        raise ValueError("bad value")

    with pytest.raises(TypeError, match="by its type and fields, not by text"):
        check.call("7.1", "broken()", broken, hints=[(ValueError, "bad", "Use a number.")])


def test_call_reports_a_not_implemented_error_of_the_engine_as_an_error() -> None:
    def unsupported() -> None:
        raise NotImplementedError("Variables on 'cuda' need kernels")

    with pytest.raises(CheckError, match="raised NotImplementedError: Variables on 'cuda'"):
        check.call("7.1", "unsupported()", unsupported)


def test_call_returns_the_result_and_lets_check_errors_through() -> None:
    assert check.call("7.1", "add", lambda a, b: a + b, 2, 3) == 5

    def inner_check() -> None:
        check.fail("7.2", "from inside")

    with pytest.raises(CheckError, match=r"^Exercise 7\.2: from inside$"):
        check.call("7.1", "inner_check()", inner_check)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "a float"),
        (1, "an int"),
        (np.zeros(2), "an ndarray"),
        (np.uint8(1), "a uint8"),
        ("text", "a str"),
        (object(), "an object"),
        (None, "None"),
    ],
)
def test_with_article(value: object, text: str) -> None:
    assert check.with_article(value) == text


@pytest.mark.parametrize(
    ("got", "expected", "hint"),
    [
        (np.zeros((3, 2)), (2, 3), "did you forget a transpose\\?"),
        (np.zeros(6), (), "it has more entries than expected; did you forget to sum or average"),
        (np.zeros(6), (2, 3), "the right number of entries in the wrong arrangement"),
        (np.zeros(()), (3,), "it has fewer entries than expected; did you sum or average"),
    ],
)
def test_expect_shape_default_hints_are_neutral(
    got: np.ndarray, expected: tuple, hint: str
) -> None:
    with pytest.raises(CheckError, match=f"the answer has shape .*: {hint}") as caught:
        check.expect_shape("7.1", "the answer", got, expected)
    assert "gradient" not in str(caught.value)


def test_expect_shape_and_expect_close_take_the_checks_own_hint() -> None:
    with pytest.raises(CheckError, match=r"loss has shape \(6,\), expected \(\): forget \.mean"):
        check.expect_shape("7.1", "loss", np.zeros(6), (), hint="forget .mean()?")
    with pytest.raises(CheckError, match=r"grad has shape \(4, 3\), expected \(3,\): sum it\.$"):
        check.expect_close("7.1", "grad", np.zeros((4, 3)), np.zeros(3), shape_hint="sum it.")
