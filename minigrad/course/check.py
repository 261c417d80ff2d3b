"""What every exercise check is built from: CheckError and comparisons that explain.

A check cell calls one function of minigrad.course.lessonNN. It prints a line when the
answer is right and otherwise raises CheckError with the mistake it most likely is, e.g.
"the gradient for `w` has shape (3, 4), expected (4, 3): did you forget a transpose?".
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from minigrad.variable import Variable


class CheckError(Exception):
    """An exercise's answer is not right yet; the message says what to look at."""


def passed(exercise: str) -> None:
    """Report a correct answer."""
    print(f"Exercise {exercise}: correct.")


def fail(exercise: str, message: str) -> NoReturn:
    """Raise CheckError for `exercise` with a hint."""
    raise CheckError(f"Exercise {exercise}: {message}")


def as_array(exercise: str, what: str, value: Any) -> np.ndarray:
    """The numbers inside `value` (a Variable, an array or a number), or a CheckError."""
    if isinstance(value, Variable):
        if isinstance(value.data, str):
            fail(exercise, f"{what} should hold numbers; it is a text Variable.")
        return np.asarray(value.data)
    if value is None:
        fail(exercise, f"{what} is None: did you forget to `return` it, or to run backward()?")
    if isinstance(value, (int, float, np.ndarray, np.generic, list, tuple)):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    fail(exercise, f"{what} should be a Variable or numbers; got {type(value).__name__}.")


def expect_shape(exercise: str, what: str, got: np.ndarray, expected: tuple) -> None:
    """Compare shapes; a reversed shape suggests a missing transpose, a missing axis a sum."""
    got_shape, expected = tuple(np.shape(got)), tuple(expected)
    if got_shape == expected:
        return
    hint = ""
    if got_shape == expected[::-1] and len(expected) == 2:
        hint = ": did you forget a transpose?"
    elif np.size(got) > int(np.prod(expected)):
        hint = ": a gradient must have its input's shape; did you forget to sum over the batch?"
    elif np.size(got) == int(np.prod(expected)):
        hint = ": the right number of entries in the wrong arrangement; check the reshape."
    fail(exercise, f"{what} has shape {got_shape}, expected {expected}{hint}")


def expect_close(
    exercise: str,
    what: str,
    got: Any,
    expected: Any,
    mistakes: dict[str, Any] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
) -> None:
    """Compare values. `mistakes` maps a hint to the value a known mistake would give, so
    a wrong answer that equals one of them gets that hint instead of a plain "wrong"."""
    got_array = as_array(exercise, what, got)
    expected_array = np.asarray(expected, dtype=np.float64)
    expect_shape(exercise, what, got_array, expected_array.shape)
    if np.allclose(got_array, expected_array, rtol=rtol, atol=atol):
        return
    for hint, wrong in (mistakes or {}).items():
        wrong_array = np.asarray(wrong, dtype=np.float64)
        same_shape = wrong_array.shape == got_array.shape
        if same_shape and np.allclose(got_array, wrong_array, rtol=rtol, atol=atol):
            fail(
                exercise,
                f"{what} is {_short(got_array)}, expected {_short(expected_array)}: {hint}",
            )
    fail(exercise, f"{what} is {_short(got_array)}, expected {_short(expected_array)}.")


def _short(array: np.ndarray) -> str:
    """Numbers with 4 significant digits, a long array cut short."""
    array = np.asarray(array)
    if array.ndim == 0:
        return format(array.item(), ".4g")
    text = np.array2string(
        array, threshold=8, edgeitems=2, formatter={"float_kind": lambda v: format(v, ".4g")}
    )
    return text.replace("\n", " ")
