"""Checks for lesson 00 (welcome)."""

from __future__ import annotations

from typing import Any

from minigrad.course import check


def check_0_1(slope: Any) -> None:
    """slope = f'(2) for f(x) = x**3 - x, as a Python number (a float; an int is accepted)."""
    exercise = "0.1"
    if isinstance(slope, bool) or not isinstance(slope, (int, float)):
        if hasattr(slope, "item"):
            check.fail(
                exercise,
                f"slope is {check.with_article(slope)}; turn it into a Python float with .item().",
            )
        check.fail(exercise, f"slope should be a float; got {check.with_article(slope)}.")
    mistakes = {
        "that is f(2) itself, the value, not its slope; call backward() and read x.grad.": 6.0,
        "that is the slope of x**3 alone: the derivative of -x adds -1.": 12.0,
        "that is twice the slope: did you call backward() twice without resetting x.grad?": 22.0,
    }
    check.expect_close(exercise, "slope", slope, 11.0, mistakes)
    check.passed(exercise)


def check_0_2(grad_a: Any, grad_b: Any) -> None:
    """df/da and df/db for f(a, b) = a * b + b**2 at a = 2, b = 3."""
    exercise = "0.2"
    expected = (3.0, 8.0)
    got = (check.as_array(exercise, "grad_a", grad_a), check.as_array(exercise, "grad_b", grad_b))
    if all(g.shape == () for g in got) and (float(got[0]), float(got[1])) == (8.0, 3.0):
        check.fail(exercise, "grad_a and grad_b are swapped: df/da = b, df/db = a + 2b.")
    twice = "that is twice the answer: did you call backward() twice without zeroing .grad?"
    check.expect_close(
        exercise,
        "grad_a",
        got[0],
        expected[0],
        {
            "that is a: the derivative of a * b with respect to a is b.": 2.0,
            twice: 2 * expected[0],
        },
    )
    check.expect_close(
        exercise,
        "grad_b",
        got[1],
        expected[1],
        {
            "that is only a, the part from a * b: the b**2 term adds 2b.": 2.0,
            "that is only 2b, the part from b**2: a * b adds a.": 6.0,
            twice: 2 * expected[1],
        },
    )
    check.passed(exercise)
