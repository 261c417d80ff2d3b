"""Checks for lesson 03 (custom Functions and ctx).

Each check receives the learner's Function class, calls it through `.apply` on inputs of
its own, compares forward values and gradients with NumPy, and runs `minigrad.gradcheck`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.errors import (
    GradientCountError,
    GradientForNonVariableError,
    GradientShapeError,
)
from minigrad.core.function import Function
from minigrad.core.variable import Variable
from minigrad.course import check, function_checks
from minigrad.course.raised import is_forward_returned_none, raised_in

# --------------------------------------------------------------------------- shared helpers


def _apply(
    exercise: str, cls: type[Function], args: tuple, call: str, returned: list | None = None
) -> Variable:
    """Run cls.apply(*args); explain the usual reasons it fails. With a list `returned`,
    what backward returns is appended to it (see _spy)."""
    if returned is not None:
        cls = _spy(cls, returned)
    try:
        output = cls.apply(*args)
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if is_forward_returned_none(error):
            check.fail(exercise, f"{call}: forward returned None; did you forget `return`?")
        setup = getattr(cls, "setup_context", None)
        if isinstance(error, ValueError) and setup is not None and raised_in(error, setup):
            # A ValueError raised by the learner's setup_context itself: `x, = inputs` on a
            # tuple of two, or `x, k, out = inputs`.
            check.fail(
                exercise,
                f"{call} raised ValueError in setup_context: {error}. `inputs` is the tuple "
                f"of all the arguments of forward; unpack every one of them (e.g. "
                f"`x, k = inputs`).",
            )
        # A forward (or setup_context) whose parameters do not fit gets its explanation
        # from apply itself ("... has no ctx parameter: ..."); any other goes on as it is.
        check.explain_error(exercise, call, error)
    return function_checks.one_output(exercise, output, call)


def _backward(
    exercise: str,
    output: Variable,
    upstream: np.ndarray,
    count_hint: str,
    number_hint: str,
    returned: list | None = None,
    returns: str = "grad_x",
) -> None:
    """output.backward(upstream); explain the engine's complaints about the gradients.
    `returned` holds what backward returned (from _apply), `returns` what it should return,
    e.g. "grad_a, grad_b"."""
    if output.grad_fn is None:
        check.fail(
            exercise,
            "the output has no grad_fn, so nothing was recorded: forward should return "
            "a floating-point result computed from its input.",
        )
    try:
        output.backward(Variable(upstream))
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        _explain_backward_error(exercise, error, count_hint, number_hint, returned, returns)


def _explain_backward_error(
    exercise: str,
    error: Exception,
    count_hint: str,
    number_hint: str,
    returned: list | None,
    returns: str,
) -> None:
    """The CheckError for an error raised while backward ran."""
    if check.is_stub(error):
        check.not_written(exercise)
    if returned and isinstance(returned[-1], list):
        listed = f"backward returned a list of {_count(len(returned[-1]), 'value')}"
        if "," not in returns:
            check.fail(exercise, f"{listed}: return the gradient itself, `return {returns}`.")
        check.fail(
            exercise,
            f"{listed}: return a tuple ({returns}), not a list; `return {returns}` makes one.",
        )
    text = str(error)
    if isinstance(error, GradientCountError):
        got, expected = error.got, error.expected
        check.fail(
            exercise,
            f"backward returned {_count(got, 'gradient')}, expected {expected}: {count_hint}",
        )
    if isinstance(error, GradientForNonVariableError):
        check.fail(exercise, number_hint)
    if isinstance(error, GradientShapeError):
        check.fail(
            exercise,
            f"a gradient has the wrong shape. {text} A gradient has its input's "
            f"shape: multiply elementwise and do not sum.",
        )
    check.explain_error(exercise, "backward", error)


def _count(number: int, noun: str) -> str:
    """'1 gradient', '2 gradients'."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _grad_of(exercise: str, leaf: Variable, name: str) -> np.ndarray:
    """The gradient stored on a leaf, or a hint when backward gave it none."""
    if leaf.grad is None:
        check.fail(
            exercise,
            f"{name}.grad is None after backward: did backward return None for {name}, "
            f"or forget `return`?",
        )
    return np.asarray(leaf.grad.data, dtype=np.float64)


def _gradcheck(exercise: str, fn: Callable[..., Any], inputs: tuple, call: str) -> None:
    """minigrad.gradcheck on float64 inputs; its report becomes the hint."""
    check.gradcheck_or_hint(exercise, fn, inputs, call)


def _leaf(values: Any, requires_grad: bool = True) -> Variable:
    return Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def _saved_arrays(output: Variable) -> list[np.ndarray]:
    """The arrays among what the output's node saved with save_for_backward (read before
    backward frees them)."""
    arrays = []
    for value in output.grad_fn.saved_tensors:
        if isinstance(value, Variable) and isinstance(value.data, np.ndarray):
            arrays.append(value.data)
        elif isinstance(value, np.ndarray):
            arrays.append(value)
    return arrays


# --------------------------------------------------------------------------- Exercise 3.1


CUBE_CASES = (
    # a matrix with a 0 entry (where 3x² and x³ are both 0), then a single number
    ([[0.5, -1.2, 2.0], [1.5, 0.0, 0.8]], [[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]]),
    (-1.7, 2.0),
)


def check_3_1(cube: Any) -> None:
    """Cube: forward x**3, backward 3x² · grad_output, as a minigrad.Function."""
    exercise = "3.1"
    cls = check.function_class(exercise, cube, "Cube")
    for values, upstream in CUBE_CASES:
        x_data, g = np.array(values), np.array(upstream)
        x = _leaf(x_data)
        returned: list = []
        y = _apply(exercise, cls, (x,), "Cube.apply(x)", returned)
        forward_mistakes = {
            "that is 3x², the derivative: forward returns x ** 3 itself.": 3 * x_data**2,
            "that is x ** 2: forward should cube x.": x_data**2,
            "that is 3 * x: write x ** 3 (x times itself three times).": 3 * x_data,
        }
        check.expect_close(exercise, "Cube.apply(x)", y, x_data**3, forward_mistakes)
        _backward(
            exercise,
            y,
            g,
            "Cube.forward has one input, x, so backward returns one gradient (not a tuple "
            "with extra entries).",
            "backward returned a gradient for an input that is not a Variable.",
            returned,
            "grad_x",
        )
        backward_mistakes = {
            "that is 3x² without grad_output: multiply by the gradient backward receives "
            "(the chain rule).": 3 * x_data**2,
            "that is 3x · grad_output: the derivative of x³ is 3x², not 3x.": 3 * x_data * g,
            "that is x² · grad_output: the derivative of x³ is 3x²; the 3 is missing.": (
                x_data**2 * g
            ),
            "that is 6x · grad_output, the second derivative; the first is 3x².": 6 * x_data * g,
            "that is 2x · grad_output, the derivative of x² (Square's backward above); the power "
            "rule brings down the exponent 3, so the derivative of x³ is 3x².": 2 * x_data * g,
            "that is x³ · grad_output: backward used the output where the derivative 3x² "
            "belongs.": x_data**3 * g,
            "that is 3(x³)² · grad_output: the saved value was the output x³, but the "
            "formula 3x² needs the input x; save x.": 3 * x_data**6 * g,
        }
        expected = 3 * x_data**2 * g
        grad = _grad_of(exercise, x, "x")
        got = check.as_array(exercise, "x.grad", grad)
        if got.shape == x_data.shape and np.isnan(got).any():
            at = ", ".join(f"{v:g}" for v in np.unique(x_data[np.isnan(got)]))
            check.fail(
                exercise,
                f"x.grad is nan where x = {at}: did backward divide by x, or take a root of "
                f"the saved output? 3x² needs neither: save the input x and compute it "
                f"directly.",
            )
        check.expect_close(exercise, "x.grad", grad, expected, backward_mistakes)
    _gradcheck(exercise, cls.apply, (_leaf([0.3, -2.1, 1.4, 0.9]),), "Cube.apply, x")
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercises 3.2 and 3.4


SCALED_EXP_CASES = (
    ([0.2, -0.5, 1.1, -1.3], 1.5, [1.0, -0.5, 2.0, 0.3]),
    ([[0.4, -1.0], [2.0, 0.7]], -0.8, [[0.5, 2.0], [-1.0, 1.5]]),
    # the edge: k = 0 on a single entry, where exp(k·x) is 1 and the gradient is 0
    ([0.7], 0.0, [2.0]),
)


def _check_scaled_exp(exercise: str, cls: type[Function], name: str, where_to_save: str) -> None:
    """Values, gradients, the None for k, the saved output and gradcheck of exp(k * x)."""
    call = f"{name}.apply(x, k)"
    saves_output = True
    for values, k, upstream in SCALED_EXP_CASES:
        x_data, g = np.array(values), np.array(upstream)
        x = _leaf(x_data)
        returned: list = []
        y = _apply(exercise, cls, (x, k), call, returned)
        out = np.exp(k * x_data)
        forward_mistakes = {
            "that is exp(x): the factor k is missing inside the exp.": np.exp(x_data),
            "that is k * exp(x): k multiplies x inside the exp, exp(k * x).": k * np.exp(x_data),
        }
        check.expect_close(exercise, f"{call} with k = {k}", y, out, forward_mistakes)
        if y.grad_fn is not None:
            saved = _saved_arrays(y)
            saves_output = saves_output and any(np.shares_memory(a, y.data) for a in saved)
        _backward(
            exercise,
            y,
            g,
            "forward has two inputs, x and k, so backward returns two values: the gradient "
            "for x, then None for k.",
            "backward returned a gradient for k, which is a plain number and not a Variable: "
            "return None in its place (`return grad_x, None`).",
            returned,
            "grad_x, None",
        )
        backward_mistakes = {
            "that is exp(k·x) · grad_output: the chain factor k (the derivative of k·x) is "
            "missing.": out * g,
            "that is k²·exp(k·x) · grad_output: the chain factor is k, the derivative of k·x "
            "with respect to x, taken once.": k * k * out * g,
            "that is k·exp(k·x) without grad_output: multiply by the gradient backward receives.": k
            * out,
            "that is x·exp(k·x) · grad_output, the derivative with respect to k; the "
            "gradient for x is k·exp(k·x) · grad_output.": x_data * out * g,
            "that is k·x · grad_output: backward used the input x where the output "
            "exp(k·x) belongs; save the output and use it.": k * x_data * g,
        }
        check.expect_close(
            exercise,
            f"x.grad with k = {k}",
            _grad_of(exercise, x, "x"),
            k * out * g,
            backward_mistakes,
        )
    x = _leaf([0.3, -1.1, 0.6])
    _gradcheck(exercise, lambda v: cls.apply(v, 0.7), (x,), f"lambda x: {name}.apply(x, 0.7), x")
    if not saves_output:
        check.fail(
            exercise,
            f"the values are right, but {name} did not save its output: call "
            f"ctx.save_for_backward(output) {where_to_save}. The output exp(k·x) is all "
            f"backward needs, so it never has to compute exp again.",
        )


def check_3_2(scaled_exp: Any) -> None:
    """ScaledExp(x, k) = exp(k * x) for a plain number k; backward returns None for k."""
    exercise = "3.2"
    cls = check.function_class(exercise, scaled_exp, "ScaledExp")
    _check_scaled_exp(exercise, cls, "ScaledExp", "in forward")
    check.passed(exercise)


def check_3_4(scaled_exp: Any) -> None:
    """ScaledExp written in the second style: forward(x, k) and setup_context."""
    exercise = "3.4"
    name = "ScaledExpSetup"
    cls = check.function_class(exercise, scaled_exp, name)
    if cls.setup_context is Function.setup_context:
        check.fail(
            exercise,
            f"{name} has no setup_context: define `def setup_context(ctx, inputs, output)` "
            f"as a @staticmethod; that is what makes this the second style.",
        )
    parameters = list(inspect.signature(cls.forward).parameters)
    if parameters and parameters[0] == "ctx":
        check.fail(
            exercise,
            f"{name}.forward takes ctx, but in the setup_context style forward takes only "
            f"the inputs, forward(x, k); ctx goes to setup_context.",
        )
    _check_scaled_exp(exercise, cls, name, "in setup_context (it receives `output`)")
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 3.3


# a = 0 in the middle entry: there d(a/b)/db = -a/b² is 0 while d(a/b)/da = 1/b is not
DIVIDE_CASE = ([1.5, 0.0, -2.0], [0.8, 2.5, -1.6], [1.0, -0.5, 2.0])


def _spy(cls: type[Function], returned: list) -> type[Function]:
    """A subclass of `cls` that records what its backward returns, before the engine drops
    gradients nobody asked for."""

    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        result = cls.backward(ctx, *grad_outputs)
        returned.append(result)
        return result

    spy = type(cls.__name__, (cls,), {"backward": staticmethod(backward)})
    spy.__qualname__ = cls.__qualname__
    return spy


def _returned_pair(exercise: str, returned: list) -> tuple:
    if not returned:
        check.fail(exercise, "backward was never called.")
    result = returned[-1]
    if not isinstance(result, tuple) or len(result) != 2:
        check.fail(exercise, "backward should return two values, (grad_a, grad_b).")
    return result


def check_3_3(divide: Any) -> None:
    """Divide(a, b) = a / b, computing only the gradients ctx.needs_input_grad asks for."""
    exercise = "3.3"
    cls = check.function_class(exercise, divide, "Divide")
    a_data, b_data, g = (np.array(values) for values in DIVIDE_CASE)
    count_hint = "forward has two inputs, a and b, so backward returns (grad_a, grad_b)."
    number_hint = "backward returned a gradient for an input that is not a Variable."

    a, b = _leaf(a_data), _leaf(b_data)
    returned: list = []
    y = _apply(exercise, cls, (a, b), "Divide.apply(a, b)", returned)
    with np.errstate(divide="ignore"):  # a holds a 0: b / a is inf there, and no answer
        upside_down = b_data / a_data
    forward_mistakes = {
        "that is b / a: the numerator is the first input, a.": upside_down,
        "that is a * b: Divide computes a / b.": a_data * b_data,
    }
    check.expect_close(exercise, "Divide.apply(a, b)", y, a_data / b_data, forward_mistakes)
    _backward(exercise, y, g, count_hint, number_hint, returned, "grad_a, grad_b")
    grad_a, grad_b = _grad_of(exercise, a, "a"), _grad_of(exercise, b, "b")
    expected_a, expected_b = g / b_data, -g * a_data / b_data**2
    if np.allclose(grad_a, expected_b) and np.allclose(grad_b, expected_a):
        check.fail(
            exercise,
            "the two gradients are swapped: return them in the order of forward's inputs, "
            "(grad_a, grad_b).",
        )
    check.expect_close(
        exercise,
        "a.grad",
        grad_a,
        expected_a,
        {
            "that is 1 / b without grad_output: multiply by the gradient backward receives.": (
                1 / b_data
            ),
            "that is grad_output · b: d(a/b)/da is 1/b, so divide by b.": g * b_data,
        },
    )
    check.expect_close(
        exercise,
        "b.grad",
        grad_b,
        expected_b,
        {
            "the sign is wrong: d(a/b)/db = -a / b².": g * a_data / b_data**2,
            "that is -grad_output · a / b: d(a/b)/db = -a / b², so b is squared.": (
                -g * a_data / b_data
            ),
            "that is -a / b² without grad_output: multiply by the gradient backward "
            "receives.": -a_data / b_data**2,
            "that is -grad_output / b²: the factor a is missing, d(a/b)/db = -a / b².": (
                -g / b_data**2
            ),
        },
    )

    # Only one input takes a gradient: backward should leave the other's work undone.
    for skipped, name in ((1, "b"), (0, "a")):
        returned: list = []
        spy = _spy(cls, returned)
        a = _leaf(a_data, requires_grad=skipped == 1)
        b = _leaf(b_data, requires_grad=skipped == 0)
        y = _apply(exercise, spy, (a, b), "Divide.apply(a, b)")
        _backward(exercise, y, g, count_hint, number_hint, returned, "grad_a, grad_b")
        pair = _returned_pair(exercise, returned)
        needed = "ab"[1 - skipped]
        if pair[skipped] is not None and pair[1 - skipped] is None:
            check.fail(
                exercise,
                f"with only {needed} requiring grad, backward returned a gradient for {name} "
                f"and None for {needed}: ctx.needs_input_grad[0] is about a and [1] about b; "
                f"check which index of ctx.needs_input_grad goes with which input.",
            )
        if pair[skipped] is not None:
            check.fail(
                exercise,
                f"backward computed a gradient for {name}, but ctx.needs_input_grad[{skipped}] "
                f"was False ({name} does not require grad): compute it only under "
                f"`if ctx.needs_input_grad[{skipped}]:` and return None otherwise.",
            )
        if pair[1 - skipped] is None:
            check.fail(
                exercise,
                f"backward returned None for {needed}, which does require grad: check which "
                f"index of ctx.needs_input_grad goes with which input.",
            )

    inputs = (_leaf([0.7, -1.3, 2.2]), _leaf([1.4, 0.9, -2.5]))
    _gradcheck(exercise, cls.apply, inputs, "Divide.apply, (a, b)")
    check.passed(exercise)
