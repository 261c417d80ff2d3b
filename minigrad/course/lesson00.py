"""Checks for lesson 00 (welcome), and its environment report."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad
from minigrad.course import check


def environment() -> None:
    """Print the versions in use, whether Graphviz's `dot` is installed, and where the CUDA
    kernels of lesson 08 will run. Every answer is a set-up that works."""
    dot = shutil.which("dot")
    lines = [
        f"Python    {platform.python_version()}",
        f"NumPy     {np.__version__}",
        f"minigrad  {minigrad.__version__}",
        f"Graphviz  {f'dot found at {dot}' if dot else 'dot not found: graphs are shown as text'}",
        f"CUDA      {cuda_status(os.environ.get('NUMBA_ENABLE_CUDASIM'), _gpu_name)}",
    ]
    # One write: print() per line lets Jupyter store the report as several outputs.
    sys.stdout.write("\n".join(lines) + "\n")


def cuda_status(simulator: str | None, gpu_name: Any) -> str:
    """Where kernels run, given NUMBA_ENABLE_CUDASIM (None when unset) and a function that
    returns the GPU's name, or None without one (asked only when it matters: it imports
    numba, which takes a moment)."""
    if simulator == "1":
        return "Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): kernels run on the CPU"
    gpu = gpu_name()
    if simulator == "0":
        if gpu:
            return f"GPU {gpu} (NUMBA_ENABLE_CUDASIM=0): kernels run on it"
        return (
            "no GPU found, and NUMBA_ENABLE_CUDASIM=0 asks for one: start Jupyter without it "
            "(make lab) to run the kernels in Numba's simulator"
        )
    if gpu:
        return (
            f"GPU {gpu} found; lesson 08 runs the kernels in Numba's simulator unless Jupyter "
            f"starts with NUMBA_ENABLE_CUDASIM=0"
        )
    return "no GPU: kernels will run in Numba's CUDA simulator, which lesson 08 turns on"


def _gpu_name() -> str | None:
    from numba import cuda

    if not cuda.is_available():
        return None
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def _number(exercise: str, name: str, value: Any, how: str) -> float:
    """`value` as a float when it is a plain number (an int too); otherwise a CheckError
    that says how to make one (`how`: what to do with a Variable or an array). None, the
    cell's placeholder, means the exercise is not written yet."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    ):
        return float(value)
    if isinstance(value, (minigrad.Variable, np.ndarray)):
        check.fail(exercise, f"{name} is {check.with_article(value)}; {how}")
    if value is None:  # the cell assigns None before the learner's answer
        check.not_written(exercise)
    check.fail(exercise, f"{name} should be a number such as 2.5; got {check.with_article(value)}.")


def check_0_1(slope_by_hand: Any) -> None:
    """slope_by_hand = f'(2) for f(x) = x**3 - x, worked out by hand (a number)."""
    exercise = "0.1"
    value = _number(
        exercise,
        "slope_by_hand",
        slope_by_hand,
        "work this one out by hand and write the number itself, e.g. `slope_by_hand = 4.0`.",
    )
    mistakes = {
        "a sign error: that is 3x² + 1 at x = 2. The derivative of -x is -1, so the "
        "constant in f'(x) is negative.": 13.0,
        "that is f(2) = 2³ - 2, the value of f itself: differentiate f first, then put in "
        "x = 2.": 6.0,
        "that is the slope of x³ alone (3x² at x = 2): the term -x has a derivative of its "
        "own, and it counts too.": 12.0,
        "that is 3x - 1 at x = 2: the power rule turns x³ into 3x², so x is still squared.": 5.0,
        "that is x² - 1 at x = 2: the power rule brings the exponent 3 down as a factor.": 3.0,
        "that is 2x² - 1 at x = 2: the power rule gives n·x^(n-1), so x³ becomes 3x², not "
        "2x².": 7.0,
        "that is (3x)² - 1 at x = 2: in 3x² only x is squared, so it is 3 · 2² = 3 · 4.": 35.0,
        "that is the slope at x = 3 (where the worked example was): the exercise asks for "
        "x = 2.": 26.0,
        "that has the right size but the wrong sign: x³ grows faster than x at x = 2, so "
        "f rises there.": -11.0,
        "that is 3x² - x at x = 2: the term -x was copied instead of differentiated; its "
        "derivative is -1.": 10.0,
    }
    check.expect_close(exercise, "slope_by_hand", value, 11.0, mistakes)
    check.passed(exercise)


def check_0_2(slope: Any) -> None:
    """slope = f'(2) for f(x) = x**3 - x found with minigrad, as a Python number (a float;
    an int is accepted)."""
    exercise = "0.2"
    if isinstance(slope, minigrad.Variable) or (
        hasattr(slope, "item") and not isinstance(slope, (float, np.floating))
    ):
        check.fail(
            exercise,
            f"slope is {check.with_article(slope)}; turn it into a Python float with .item().",
        )
    value = _number(exercise, "slope", slope, "turn it into a Python float with .item().")
    mistakes = {
        "that is f(2) itself, the value, not its slope; call backward() and read x.grad.": 6.0,
        "that is the slope of x**3 alone: the derivative of -x adds -1.": 12.0,
        "that is the slope of x**3 + x: check the sign of the x term in f, f = x**3 - x.": 13.0,
        "that is twice the slope: did you call backward() twice without resetting x.grad?": 22.0,
        "that is the slope at x = 3: did you reuse the worked example's x? Make a new "
        "Variable, x = minigrad.Variable(2.0, requires_grad=True).": 26.0,
        "that is 8 + 26: the worked example's x (at 3, with x.grad = 8 already) was reused, "
        "and backward() added the new slope to its old gradient. Make a new Variable at "
        "2.0.": 34.0,
    }
    check.expect_close(exercise, "slope", value, 11.0, mistakes)
    check.passed(exercise)


def check_0_3(grad_a: Any, grad_b: Any) -> None:
    """df/da and df/db for f(a, b) = a * b + b**2 at a = 2, b = 3."""
    exercise = "0.3"
    expected = (3.0, 8.0)
    if grad_a is None and grad_b is None:  # the cell's placeholders, still unchanged
        check.not_written(exercise)
    for name, value in (("grad_a", grad_a), ("grad_b", grad_b)):
        if value is None:
            leaf = name[-1]
            check.fail(
                exercise,
                f"{name} is None: assign it the gradient of {leaf}, `{name} = "
                f"{leaf}.grad.item()`. If {leaf}.grad itself is None, make {leaf} with "
                f"requires_grad=True.",
            )
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
            "that is f(2, 3) itself, the value of f: call backward() and read a.grad.": 15.0,
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
            "that is a + b: the derivative of b**2 is 2b, not b.": 5.0,
            "that is b + 2a: a and b swapped places; b**2 differentiates to 2b (b = 3) and "
            "a * b to a (a = 2).": 7.0,
            twice: 2 * expected[1],
        },
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 0.4
# g(x) = x (x² + 1)², so g'(x) = (x² + 1)² + x · 2(x² + 1) · 2x = (x² + 1)(5x² + 1). Each
# entry below is a slip in that derivation, as a function of x; at the points the check
# uses (x = 2 and x = -1.5) all of them give different numbers, and none gives g'(x).
G_SLIPS: dict[str, Callable[[float], float]] = {
    "that is g(x) itself, x(x² + 1)², the value of g: differentiate first, then put in x.": (
        lambda x: x * (x * x + 1) ** 2
    ),
    "that is only the first half of the product rule, (x)' · (x² + 1)² = (x² + 1)²: add the "
    "second half, x times the derivative of (x² + 1)².": lambda x: (x * x + 1) ** 2,
    "that is only the second half of the product rule, x · 4x(x² + 1): add the first half, "
    "the derivative of x (which is 1) times (x² + 1)².": lambda x: 4 * x * x * (x * x + 1),
    "the chain rule's inner derivative is missing: (x² + 1)² differentiates to "
    "2(x² + 1) · 2x, the outer derivative times the derivative of the inside, x² + 1.": (
        lambda x: (x * x + 1) ** 2 + 2 * x * (x * x + 1)
    ),
    "that is the two derivatives multiplied, 1 · 4x(x² + 1): the product rule adds two "
    "terms, u'v + uv'.": lambda x: 4 * x * (x * x + 1),
    "the power rule's factor 2 is missing: (x² + 1)² differentiates to 2(x² + 1) · 2x, so "
    "the second term is x · 4x(x² + 1).": lambda x: (x * x + 1) ** 2 + 2 * x * x * (x * x + 1),
    "the product rule's two halves are subtracted: they add, (u v)' = u'v + u v'.": (
        lambda x: (x * x + 1) ** 2 - 4 * x * x * (x * x + 1)
    ),
    "the chain rule's outer factor 2(x² + 1) is missing: the derivative of (x² + 1)² is the "
    "outer derivative, taken at the inside, times the inner derivative 2x, not 2x alone.": (
        lambda x: (x * x + 1) ** 2 + 2 * x * x
    ),
}
G_POINTS = (2.0, -1.5)  # g'(2) = 105, g'(-1.5) = 39.8125


def g_prime(x: float) -> float:
    """g'(x) for g(x) = x (x² + 1)²: (x² + 1)(5x² + 1), by the product and chain rules."""
    return (x * x + 1) * (5 * x * x + 1)


def check_0_4(slope_of_g: Any, points: tuple[float, ...] = G_POINTS) -> None:
    """slope_of_g(x) = g'(x) for g(x) = x (x² + 1)², written by hand as plain arithmetic on a
    number x (a float or an int); checked at `points`."""
    exercise = "0.4"
    if isinstance(slope_of_g, (int, float, np.number)) and not isinstance(slope_of_g, bool):
        check.fail(
            exercise,
            f"slope_of_g is the number {slope_of_g:g}; write a function of x instead, "
            f"`def slope_of_g(x): return ...`, so that it gives g'(x) at any x.",
        )
    if slope_of_g is None:
        check.not_written(exercise)
    if not callable(slope_of_g):
        check.fail(
            exercise,
            f"slope_of_g should be a function, `def slope_of_g(x): return ...`; got "
            f"{check.with_article(slope_of_g)}.",
        )
    for point in points:
        call = f"slope_of_g({point:g})"
        result = check.call(exercise, call, slope_of_g, float(point))
        if result is None:
            check.fail(exercise, f"{call} returned None: did you forget the `return`?")
        value = _number(
            exercise,
            call,
            result,
            "work g'(x) out by hand and return plain arithmetic on x, such as `return 3 * x`.",
        )
        mistakes = {hint: slip(float(point)) for hint, slip in G_SLIPS.items()}
        check.expect_close(exercise, call, value, g_prime(float(point)), mistakes)
    check.passed(exercise)
