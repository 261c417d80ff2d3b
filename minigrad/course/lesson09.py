"""Checks for lesson 09 (advanced autodiff).

Each check calls the learner's answer on fresh inputs of its own and compares the result
with values computed independently in NumPy from closed forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.course import check
from minigrad.variable import Variable

# The engine's message when a Variable without history is differentiated: in these
# exercises it almost always means the first minigrad.grad lacked create_graph=True.
NO_GRAPH = "does not require grad"
FORGOT_CREATE_GRAPH = (
    "The second differentiation found no graph to walk: pass create_graph=True to the "
    "first minigrad.grad, so the first derivative is recorded and can be differentiated."
)


def _call(exercise: str, what: str, function: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's function, turning the create_graph mistake into its hint."""
    if not callable(function):
        check.fail(exercise, f"{what} should be a function; got {check.with_article(function)}.")
    return check.call(
        exercise, what, function, *args, hints=[(RuntimeError, NO_GRAPH, FORGOT_CREATE_GRAPH)]
    )


def _as_result(exercise: str, what: str, result: Any) -> np.ndarray:
    """The numbers of a returned gradient, with hints for a tuple or a bare number."""
    if isinstance(result, tuple):
        check.fail(
            exercise,
            f"{what} is a tuple: minigrad.grad returns one gradient per input, so unpack it, "
            f"e.g. `(second,) = minigrad.grad(first, x)`, and return the Variable.",
        )
    if not isinstance(result, Variable) and result is not None:
        check.fail(
            exercise,
            f"{what} is {check.with_article(result)}, not a Variable: return the Variable that "
            f"minigrad.grad gives you (no .item(), no .data).",
        )
    return check.as_array(exercise, what, result)


# --------------------------------------------------------------------------- Exercise 9.1

# (label, f on Variables, f, f', f'' in NumPy, point)
_SECOND_DERIVATIVE_CASES: list[tuple[str, Callable, Callable, Callable, Callable, float]] = [
    (
        "x**4 - 3*x**2 + x",
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: 4 * x**3 - 6 * x + 1,
        lambda x: 12 * x**2 - 6,
        1.5,
    ),
    (
        "x**4 - 3*x**2 + x",
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: 4 * x**3 - 6 * x + 1,
        lambda x: 12 * x**2 - 6,
        -0.4,
    ),
    (
        "x * exp(x)",
        lambda x: x * x.exp(),
        lambda x: x * np.exp(x),
        lambda x: (x + 1) * np.exp(x),
        lambda x: (x + 2) * np.exp(x),
        0.7,
    ),
    (
        "tanh(x)",
        lambda x: x.tanh(),
        np.tanh,
        lambda x: 1 - np.tanh(x) ** 2,
        lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
        0.3,
    ),
    (
        "x**2 * log(x)",
        lambda x: x**2 * x.log(),
        lambda x: x**2 * np.log(x),
        lambda x: 2 * x * np.log(x) + x,
        lambda x: 2 * np.log(x) + 3,
        2.0,
    ),
]


def check_9_1(second_derivative: Callable[[Callable, Variable], Variable]) -> None:
    """second_derivative(f, x) returns f''(x) as a Variable, for scalar x."""
    exercise = "9.1"
    for label, f, f_np, first_np, second_np, point in _SECOND_DERIVATIVE_CASES:
        x = Variable(point, requires_grad=True)
        what = f"second_derivative(f, x) for f(x) = {label} at x = {point}"
        result = _as_result(exercise, what, _call(exercise, what, second_derivative, f, x))
        first, second = first_np(point), second_np(point)
        mistakes = {
            "that is f'(x), the first derivative: differentiate it once more.": first,
            "that is f(x) itself, not a derivative.": f_np(point),
            "that is f'(x) + f''(x): x.grad accumulated both backward passes; set "
            "x.grad = None in between, or use minigrad.grad, which leaves .grad alone.": (
                first + second
            ),
        }
        check.expect_close(exercise, what, result, second, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 9.2

_BOWL_MATRIX = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 1.5]])


def _quartic_bowl(w: Variable) -> Variable:
    return 0.5 * (w @ (Variable(_BOWL_MATRIX) @ w)) + 0.25 * (w**4).sum()


def _quartic_bowl_derivatives(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _BOWL_MATRIX @ w + w**3, _BOWL_MATRIX + np.diag(3 * w**2)


def _log_sum_exp(w: Variable) -> Variable:
    return w.exp().sum().log()


def _log_sum_exp_derivatives(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.exp(w) / np.exp(w).sum()
    return p, np.diag(p) - np.outer(p, p)


_HVP_CASES: list[tuple[str, Callable, Callable, list[float], list[float]]] = [
    (
        "0.5 * w @ A @ w + 0.25 * sum(w**4)",
        _quartic_bowl,
        _quartic_bowl_derivatives,
        [0.5, -1.0, 2.0],
        [1.0, 0.5, -2.0],
    ),
    (
        "log(sum(exp(w)))",
        _log_sum_exp,
        _log_sum_exp_derivatives,
        [0.2, -0.7, 1.1, 0.4],
        [1.0, -1.0, 0.5, 2.0],
    ),
]


def check_9_2(hvp: Callable[[Callable, Variable, Variable], Variable]) -> None:
    """hvp(f, w, v) returns the Hessian of f at w times v, a Variable of w's shape."""
    exercise = "9.2"
    for label, f, derivatives, w_values, v_values in _HVP_CASES:
        w = Variable(w_values, requires_grad=True)
        v = Variable(v_values)
        what = f"hvp(f, w, v) for f(w) = {label}"
        result = _as_result(exercise, what, _call(exercise, what, hvp, f, w, v))
        gradient, hessian = derivatives(np.asarray(w_values))
        v_np, n = np.asarray(v_values), len(w_values)
        if result.shape == ():
            hint = ""
            if np.isclose(result, gradient @ v_np):
                hint = " It equals ∇f · v: differentiate that number once more with respect to w."
            check.fail(
                exercise,
                f"{what} is a single number, expected a vector of shape ({n},) like w.{hint}",
            )
        if result.shape == (n, n):
            check.fail(
                exercise,
                f"{what} has shape {(n, n)}, the shape of the whole Hessian: return H v, a "
                f"vector of shape ({n},), with two gradient computations and no matrix.",
            )
        mistakes = {
            "that is the gradient ∇f(w): take the gradient of (∇f · v), not of f.": gradient,
            "that is ∇f(w) * v elementwise: sum it to the number ∇f · v and differentiate "
            "that once more with respect to w.": gradient * v_np,
            "that is (H·1) * v: multiply the gradient by v before the second minigrad.grad "
            "(differentiate (g * v).sum()), not after it.": (hessian @ np.ones(n)) * v_np,
            "that is H·1, with v left out: differentiate (g * v).sum(), not g.sum().": (
                hessian @ np.ones(n)
            ),
        }
        check.expect_close(exercise, what, result, hessian @ v_np, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 9.3


def check_9_3(clip_gradient: Callable[[Variable], Any]) -> None:
    """clip_gradient(grad) returns a new gradient with every entry clipped to [-1, 1]."""
    exercise = "9.3"
    if not callable(clip_gradient):
        check.fail(
            exercise,
            f"clip_gradient should be a function; got {check.with_article(clip_gradient)}.",
        )
    samples = [
        np.array([-3.0, -0.5, 0.0, 0.25, 2.0]),
        np.array([[1.5, -0.75], [-1.25, 0.5]]),
    ]
    for values in samples:
        grad = Variable(values.copy())
        what = f"clip_gradient(Variable({values.tolist()}))"
        returned = check.call(exercise, what, clip_gradient, grad)
        if not np.array_equal(grad.data, values):
            check.fail(
                exercise,
                "clip_gradient changed the gradient it was given in place; return a new "
                "Variable instead: the engine may hand that same gradient to other inputs "
                "too (a + b gives both the same one), which would then be clipped as well.",
            )
        if returned is None:
            check.fail(
                exercise,
                "clip_gradient returned None, so the gradient stays as it was: a hook "
                "changes a gradient only through what it returns.",
            )
        got = check.as_array(exercise, what, returned)
        mistakes = {
            "negative entries became 0: the lower bound is -1, not 0.": np.clip(values, 0, 1),
            "entries below -1 are not clipped: clip from below at -1 too.": np.minimum(values, 1),
            "entries above 1 are not clipped: clip from above at 1 too.": np.maximum(values, -1),
            "that is the sign of each entry: entries already inside [-1, 1] must stay "
            "as they are.": np.sign(values),
            "the bounds are swapped (g.clamp(1, -1) makes every entry -1): the lower "
            "bound comes first.": np.full(values.shape, -1.0),
            "that rescales the whole gradient by its largest entry: clip each entry "
            "separately instead.": values / np.abs(values).max(),
        }
        check.expect_close(exercise, what, got, np.clip(values, -1, 1), mistakes)

    # As a hook, in a graph where the hooked gradient is shared with another input.
    x = Variable([0.2, -0.1, 0.6], requires_grad=True)
    t = Variable([0.5, 1.0, -2.0], requires_grad=True)
    h = x * 4.0
    handle = h.register_hook(clip_gradient)
    try:
        loss = ((h + t) ** 2).sum()
        check.call(exercise, "backward with clip_gradient hooked on h = 4 * x", loss.backward)
    finally:
        handle.remove()
    shared = 2 * (4.0 * x.data + t.data)
    check.expect_close(exercise, "t.grad, the unhooked input beside h", t.grad, shared)
    check.expect_close(
        exercise,
        "x.grad with clip_gradient hooked on h = 4 * x",
        x.grad,
        4.0 * np.clip(shared, -1, 1),
        {"x.grad is unclipped: the hook had no effect.": 4.0 * shared},
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 9.4


_NOT_RETURNED = (
    RuntimeError,
    "did not return",
    "Forward called ctx.mark_dirty(x) but returned something else (a new array?): an "
    "in-place Function changes x.data and returns x itself.",
)


def check_9_4(relu_in_place: type) -> None:
    """ReluInPlace: forward zeroes x's negative entries in x's own array and marks it dirty."""
    exercise = "9.4"
    if not (isinstance(relu_in_place, type) and hasattr(relu_in_place, "apply")):
        check.fail(
            exercise,
            f"pass the Function class itself (ReluInPlace), not "
            f"{check.with_article(relu_in_place)}.",
        )
    samples = [
        (np.array([-1.0, 2.0, 0.5, -0.25]), np.array([1.0, 2.0, 3.0, 4.0])),
        (np.array([[0.5, -2.0, 1.5], [-0.1, 3.0, -4.0]]), np.array([[1.0, -1.0, 2.0]] * 2)),
    ]
    for values, weights in samples:
        x = Variable(values.copy(), requires_grad=True)
        y = x.clone()  # a non-leaf, which may be changed in place
        version = y._version
        what = f"ReluInPlace.apply(y) for y = {values.tolist()}"
        out = check.call(exercise, what, relu_in_place.apply, y, hints=[_NOT_RETURNED])
        expected = np.maximum(values, 0)
        if np.array_equal(y.data, values):
            check.fail(
                exercise,
                f"{what} left y's own data unchanged: write into x.data "
                f"(np.maximum(x.data, 0, out=x.data)) instead of making a new array.",
            )
        check.expect_close(exercise, f"y's data after {what}", y.data, expected)
        if y._version == version:
            check.fail(
                exercise,
                f"y._version is still {version} after {what}: call ctx.mark_dirty(x) in "
                f"forward, so saved copies of y elsewhere notice the change.",
            )
        if out is not y:
            check.fail(exercise, f"{what} returned a new Variable; return the input x itself.")
        check.expect_close(exercise, f"the output of {what}", out, expected)
        loss = (out * Variable(weights)).sum()
        check.call(exercise, f"backward of {what}", loss.backward)
        mistakes = {
            "the gradient also flows where the input was negative: multiply it by the 0/1 "
            "mask of the output > 0.": weights * np.ones_like(values),
            "the mask is inverted: the gradient flows where the output is > 0.": weights
            * (values <= 0),
            "you multiplied by the output itself; use the 0/1 mask (output > 0).": weights
            * expected,
        }
        check.expect_close(
            exercise, f"x.grad through {what}", x.grad, weights * (values > 0), mistakes
        )
    check.passed(exercise)
