"""Checks of lesson 00: the reference answers pass, the usual mistakes get their hint."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.course import CheckError, check, lesson00


def test_0_1_reference_passes(capsys: pytest.CaptureFixture) -> None:
    x = minigrad.Variable(2.0, requires_grad=True)
    (x**3 - x).backward()
    lesson00.check_0_1(x.grad.item())
    assert "Exercise 0.1: correct." in capsys.readouterr().out


def test_0_1_accepts_an_int_as_0_2_does(capsys: pytest.CaptureFixture) -> None:
    lesson00.check_0_1(11)
    lesson00.check_0_2(3, 8)
    assert "Exercise 0.1: correct." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (6.0, "that is f\\(2\\) itself"),
        (12.0, "derivative of -x adds -1"),
        (22.0, "backward\\(\\) twice"),
        (minigrad.Variable(11.0), "slope is a Variable; .* float with .item\\(\\)"),
        (np.array([11.0]), "slope is an ndarray; .* float with .item\\(\\)"),
        (np.int64(11), "slope is an int64; .* float with .item\\(\\)"),
        ("11", "should be a float; got a str"),
        (12, "derivative of -x adds -1"),
        (True, "should be a float; got a bool"),
        (10.0, "slope is 10, expected 11\\."),
    ],
)
def test_0_1_mistakes_get_a_hint(answer: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_1(answer)


def test_0_2_reference_passes(capsys: pytest.CaptureFixture) -> None:
    a = minigrad.Variable(2.0, requires_grad=True)
    b = minigrad.Variable(3.0, requires_grad=True)
    (a * b + b**2).backward()
    lesson00.check_0_2(a.grad.item(), b.grad.item())
    lesson00.check_0_2(a.grad, b.grad)  # Variables are accepted too
    assert capsys.readouterr().out.count("Exercise 0.2: correct.") == 2


@pytest.mark.parametrize(
    ("grad_a", "grad_b", "hint"),
    [
        (8.0, 3.0, "swapped"),
        (2.0, 8.0, "with respect to a is b"),
        (3.0, 2.0, "the b\\*\\*2 term adds 2b"),
        (3.0, 6.0, "a \\* b adds a"),
        (3.0, 16.0, "twice the answer"),
        (6.0, 16.0, "grad_a is 6, expected 3: .*twice without zeroing .grad"),
        (6.0, 8.0, "grad_a is 6, expected 3: .*twice without zeroing .grad"),
        (None, 8.0, "grad_a is None"),
        (3.0, np.array([8.0, 8.0]), "grad_b has shape \\(2,\\), expected \\(\\)"),
    ],
)
def test_0_2_mistakes_get_a_hint(grad_a: object, grad_b: object, hint: str) -> None:
    with pytest.raises(CheckError, match=hint):
        lesson00.check_0_2(grad_a, grad_b)


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
    def broken(value: float) -> float:
        raise ValueError(f"bad value {value}")

    with pytest.raises(
        CheckError, match=r"^Exercise 7\.1: broken\(2\) raised ValueError: bad value 2\.$"
    ):
        check.call("7.1", "broken(2)", broken, 2)
    rules = [
        (TypeError, "bad", "Never this one."),
        (ValueError, "other text", "Nor this one."),
        lambda error: "From a function: it matched." if "value" in str(error) else None,
        (ValueError, "bad", "Not reached."),
    ]
    with pytest.raises(CheckError, match=r"bad value 2\. From a function: it matched\.$"):
        check.call("7.1", "broken(2)", broken, 2, hints=rules)
    with pytest.raises(CheckError, match=r"raised ValueError: bad value 2\. Use a number\.$"):
        check.call("7.1", "broken(2)", broken, 2, hints=[(ValueError, "bad", "Use a number.")])


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
