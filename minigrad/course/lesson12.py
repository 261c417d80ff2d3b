"""Checks for lesson 12 (forward mode and the JVP/VJP duality).

Each check runs the learner's answer on inputs of its own, never the lesson's, and
compares with values computed independently in NumPy from closed forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff import forward_ad
from minigrad.course import check
from minigrad.variable import Variable

NO_LEVEL = "needs an open dual level"
OPEN_A_LEVEL = (
    "Forward mode only works inside `with forward_ad.dual_level():`; make the duals, call "
    "the function and unpack the result all inside that block."
)


def _is_function_class(value: Any) -> bool:
    from minigrad.autodiff.function import Function

    return isinstance(value, type) and issubclass(value, Function)


# --------------------------------------------------------------------------- Exercise 12.1

# (a, b, tangent of a, tangent of b): tangents that are not 1, so a rule that leaves
# them out shows; None means the input is a plain Variable (its tangent is zero).
_SCALED_SIN_CASES: list[tuple[list, list, list | None, list | None]] = [
    ([0.7, -1.3, 2.0], [0.4, 1.1, -2.5], [0.5, -2.0, 1.5], [1.5, 0.25, -3.0]),
    (
        [[1.2, -0.4], [0.9, 2.2]],
        [[-0.6, 0.3], [1.7, -1.2]],
        [[2.0, 1.0], [-0.5, 0.75]],
        [[-1.0, 0.5], [2.5, 1.25]],
    ),
    ([1.5, -0.8], [0.9, 2.4], None, [2.0, -0.5]),
    ([1.5, -0.8], [0.9, 2.4], [-1.5, 3.0], None),
]

_FORGOT_SAVE = (
    AttributeError,
    "saved_for_forward",
    "jvp reads ctx.saved_for_forward, but forward never filled it: call "
    "`ctx.save_for_forward(a, b)` in forward.",
)


def check_12_1(scaled_sin: type) -> None:
    """ScaledSin: y = a * sin(b), with forward and a jvp(ctx, ta, tb) of its own."""
    exercise = "12.1"
    if not _is_function_class(scaled_sin):
        owner = getattr(scaled_sin, "__self__", None)
        if _is_function_class(owner):
            check.fail(exercise, "pass the class itself, `ScaledSin`, not `ScaledSin.apply`.")
        check.fail(
            exercise,
            f"ScaledSin should be a class that subclasses minigrad.Function; got "
            f"{check.with_article(scaled_sin)}.",
        )
    from minigrad.autodiff.function import Function

    if scaled_sin.jvp is Function.jvp:
        check.fail(exercise, "ScaledSin has no jvp: define `def jvp(ctx, ta, tb)`.")
    for a_values, b_values, ta_values, tb_values in _SCALED_SIN_CASES:
        a, b = np.asarray(a_values, float), np.asarray(b_values, float)
        ta = np.zeros_like(a) if ta_values is None else np.asarray(ta_values, float)
        tb = np.zeros_like(b) if tb_values is None else np.asarray(tb_values, float)
        what = f"the tangent of ScaledSin.apply(a, b) for a = {a_values}, b = {b_values}"
        if ta_values is None:
            what += f" (a has no tangent), tangent of b = {tb_values}"
        elif tb_values is None:
            what += f", tangent of a = {ta_values} (b has no tangent)"
        else:
            what += f", tangents {ta_values} and {tb_values}"

        def run(a=a, b=b, ta_values=ta_values, tb_values=tb_values) -> Any:
            with forward_ad.dual_level():
                a_in, b_in = Variable(a.copy()), Variable(b.copy())
                if ta_values is not None:
                    a_in = forward_ad.make_dual(a_in, Variable(np.asarray(ta_values, float)))
                if tb_values is not None:
                    b_in = forward_ad.make_dual(b_in, Variable(np.asarray(tb_values, float)))
                out = scaled_sin.apply(a_in, b_in)
                return out, forward_ad.unpack_dual(out).tangent

        out, tangent = check.call(exercise, what, run, hints=[_FORGOT_SAVE])
        check.expect_close(
            exercise,
            "the value of ScaledSin.apply(a, b)",
            out,
            a * np.sin(b),
            {
                "that is sin(b): multiply by a.": np.sin(b),
                "that is a·cos(b): the value is a·sin(b); cos belongs in jvp.": a * np.cos(b),
            },
        )
        if tangent is None:
            check.fail(
                exercise,
                f"{what} is None: jvp must `return` the output's tangent.",
            )
        expected = ta * np.sin(b) + a * np.cos(b) * tb
        mistakes = {
            "that is the output's value a·sin(b), not its tangent: jvp returns how fast the "
            "output moves, ȧ·sin(b) + a·cos(b)·ḃ.": a * np.sin(b),
            "the term of b is missing (product rule): add a·cos(b)·ḃ.": ta * np.sin(b),
            "the term of a is missing (product rule): add ȧ·sin(b).": a * np.cos(b) * tb,
            "the tangents are left out: that is the sum of the partial derivatives, "
            "sin(b) + a·cos(b); multiply each by its input's tangent.": np.sin(b) + a * np.cos(b),
            "that used sin(b) in the term of b: the derivative of sin is cos, so the term "
            "is a·cos(b)·ḃ.": ta * np.sin(b) + a * np.sin(b) * tb,
            "the term of b has the wrong sign: d/db sin(b) = +cos(b).": ta * np.sin(b)
            - a * np.cos(b) * tb,
            "the tangents are swapped: ȧ goes with sin(b), ḃ with a·cos(b).": tb * np.sin(b)
            + a * np.cos(b) * ta,
        }
        check.expect_close(exercise, what, tangent, expected, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 12.2


class _Counted:
    """A function of one Variable that counts its calls and the backward passes through
    its output (a hook on the output fires once per pass)."""

    def __init__(self, function: Callable[[Variable], Variable]) -> None:
        self.function = function
        self.calls = 0
        self.backward_passes = 0

    def __call__(self, x: Variable) -> Variable:
        self.calls += 1
        out = self.function(x)
        if isinstance(out, Variable) and out.requires_grad:
            out.register_hook(self._count)
        return out

    def _count(self, grad: Variable) -> None:
        self.backward_passes += 1


_WIDE = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7]])
_TALL = np.array([[1.0, -0.5], [0.2, 0.8], [-1.2, 0.4], [0.6, 1.1]])
_SQUARE = np.array([[0.4, 1.0, -0.3], [-0.8, 0.2, 0.5], [0.1, -0.6, 0.9]])

# (label, f on Variables, Jacobian in NumPy, x)
_JACOBIAN_CASES: list[tuple[str, Callable, Callable, list[float]]] = [
    (
        "tanh(W @ x) with W of shape (2, 3)",
        lambda x: (Variable(_WIDE) @ x).tanh(),
        lambda x: (1 - np.tanh(_WIDE @ x) ** 2)[:, None] * _WIDE,
        [0.3, -0.6, 1.2],
    ),
    (
        "exp(W @ x) with W of shape (4, 2)",
        lambda x: (Variable(_TALL) @ x).exp() * 0.5,
        lambda x: 0.5 * np.exp(_TALL @ x)[:, None] * _TALL,
        [0.4, -0.2],
    ),
    (
        "sin(W @ x) * x with a square W",
        lambda x: (Variable(_SQUARE) @ x).sin() * x,
        lambda x: (
            np.cos(_SQUARE @ x)[:, None] * _SQUARE * x[:, None] + np.diag(np.sin(_SQUARE @ x))
        ),
        [0.9, -0.4, 0.7],
    ),
]


def _columns_as_rows_hint() -> str:
    return (
        "the columns ended up as rows: jvp with tangent e_j gives column j of J, so stack "
        "the jvps side by side (np.stack(columns, axis=1)), not one below the other."
    )


def check_12_2(jacobian_by_columns: Callable[[Callable, Variable], Any]) -> None:
    """jacobian_by_columns(f, x): the (m, n) Jacobian of f at the 1-D x, one jvp per column."""
    exercise = "12.2"
    if not callable(jacobian_by_columns):
        check.fail(
            exercise,
            f"jacobian_by_columns should be a function; got "
            f"{check.with_article(jacobian_by_columns)}.",
        )
    for label, f, jacobian_np, x_values in _JACOBIAN_CASES:
        x_np = np.asarray(x_values)
        counted = _Counted(f)
        what = f"jacobian_by_columns(f, x) for f(x) = {label} at x = {x_values}"
        result = check.call(
            exercise,
            what,
            jacobian_by_columns,
            counted,
            Variable(x_np.copy()),
            hints=[(RuntimeError, NO_LEVEL, OPEN_A_LEVEL)],
        )
        if isinstance(result, (list, tuple)) and any(isinstance(r, Variable) for r in result):
            check.fail(
                exercise,
                f"{what} is a {type(result).__name__} of Variables: stack the columns into "
                f"one (m, n) array, e.g. np.stack([c.data for c in columns], axis=1).",
            )
        if counted.backward_passes:
            check.fail(
                exercise,
                f"{what} ran {counted.backward_passes} backward pass(es): that is reverse "
                f"mode, row by row. Build the columns with forward mode instead: one "
                f"functional.jvp (or one dual_level pass) per input entry.",
            )
        got = check.as_array(exercise, what, result)
        expected = jacobian_np(x_np)
        m, n = expected.shape
        if got.shape == (n, m) and m != n:
            check.fail(
                exercise, f"{what} has shape {(n, m)}, expected {(m, n)}: {_columns_as_rows_hint()}"
            )
        ratio = _common_ratio(got, expected)
        if ratio is not None:
            check.fail(
                exercise,
                f"{what} is J times {ratio:.4g}: the tangents were scaled; use unit vectors "
                f"e_j (a single 1), since J·(c·e_j) is c times column j.",
            )
        mistakes = {
            _columns_as_rows_hint(): expected.T,
            "every column is J·(1, 1, ..., 1): the tangent for column j must be the unit "
            "vector e_j (1 in place j, 0 elsewhere), not all ones.": np.repeat(
                expected.sum(axis=1, keepdims=True), n, axis=1
            ),
            "every column is J·x: the tangent must be the unit vector e_j, not the input "
            "x itself.": np.repeat((expected @ x_np)[:, None], n, axis=1),
            "that is J·diag(x), column j scaled by x_j: the tangent must be the unit vector "
            "e_j, not x_j·e_j.": expected * x_np[None, :],
        }
        check.expect_close(exercise, what, got, expected, mistakes)
        if counted.calls > n + 1:
            check.fail(
                exercise,
                f"{what} called f {counted.calls} times for an x with {n} entries: forward "
                f"mode needs one pass per input entry (n = {n}), not one per Jacobian entry.",
            )
    check.passed(exercise)


def _common_ratio(got: np.ndarray, expected: np.ndarray) -> float | None:
    """c where got == c * expected for one c other than 1, else None (only reached after
    the answer was found wrong, so c = 1 cannot happen)."""
    if got.shape != expected.shape:
        return None
    big = np.abs(expected) > 1e-8
    if not big.any():
        return None
    ratio = float(np.median(got[big] / expected[big]))
    if np.allclose(got, ratio * expected, rtol=1e-6, atol=1e-9) and not np.isclose(ratio, 1):
        return ratio
    return None


# --------------------------------------------------------------------------- Exercise 12.3

_BOWL = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 1.5]])

# (label, f, gradient and Hessian in NumPy, w, v)
_HVP_CASES: list[tuple[str, Callable, Callable, list[float], list[float]]] = [
    (
        "0.5 * w @ A @ w + 0.25 * sum(w**4)",
        lambda w: 0.5 * (w @ (Variable(_BOWL) @ w)) + 0.25 * (w * w * w * w).sum(),
        lambda w: (_BOWL @ w + w**3, _BOWL + np.diag(3 * w**2)),
        [0.5, -1.0, 2.0],
        [1.0, 0.5, -2.0],
    ),
    (
        "sum(sin(w) * w**2)",
        lambda w: (w.sin() * w * w).sum(),
        lambda w: (
            np.cos(w) * w**2 + 2 * w * np.sin(w),
            np.diag(-np.sin(w) * w**2 + 4 * w * np.cos(w) + 2 * np.sin(w)),
        ),
        [0.3, -1.2, 0.8, 2.0],
        [2.0, -1.0, 0.5, 1.5],
    ),
]


class _SeesTangent:
    """f, recording whether it was called on an input that carries a tangent."""

    def __init__(self, function: Callable[[Variable], Variable]) -> None:
        self.function = function
        self.saw_tangent = False

    def __call__(self, w: Variable) -> Variable:
        try:
            if forward_ad.unpack_dual(w).tangent is not None:
                self.saw_tangent = True
        except RuntimeError:  # no dual level open
            pass
        return self.function(w)


_NEEDS_REQUIRES_GRAD = (
    RuntimeError,
    "does not require grad",
    "minigrad.grad found nothing to differentiate: make the primal with "
    "requires_grad=True before make_dual, e.g. "
    "make_dual(minigrad.Variable(w.data, requires_grad=True), v), so the reverse pass "
    "has a graph to walk.",
)


def check_12_3(hvp_forward_over_reverse: Callable[[Callable, Variable, Variable], Any]) -> None:
    """hvp_forward_over_reverse(f, w, v): H v as the tangent of the gradient."""
    exercise = "12.3"
    if not callable(hvp_forward_over_reverse):
        check.fail(
            exercise,
            f"hvp_forward_over_reverse should be a function; got "
            f"{check.with_article(hvp_forward_over_reverse)}.",
        )
    for label, f, derivatives, w_values, v_values in _HVP_CASES:
        w_np, v_np = np.asarray(w_values), np.asarray(v_values)
        watched = _SeesTangent(f)
        what = f"hvp_forward_over_reverse(f, w, v) for f(w) = {label}"
        result = check.call(
            exercise,
            what,
            hvp_forward_over_reverse,
            watched,
            Variable(w_np.copy()),
            Variable(v_np.copy()),
            hints=[_NEEDS_REQUIRES_GRAD, (RuntimeError, NO_LEVEL, OPEN_A_LEVEL)],
        )
        if result is None and watched.saw_tangent:
            # unpack_dual outside the level finds no tangent (PyTorch returns None too).
            check.fail(exercise, f"{what} is None although f saw a tangent. {OPEN_A_LEVEL}")
        if isinstance(result, forward_ad.UnpackedDualTensor):
            check.fail(
                exercise,
                f"{what} is the pair unpack_dual returns (primal, tangent): return its .tangent.",
            )
        if isinstance(result, tuple):
            check.fail(
                exercise,
                f"{what} is a tuple: minigrad.grad returns one gradient per input; unpack "
                f"it, `(g,) = minigrad.grad(...)`, then return the tangent of g.",
            )
        got = check.as_array(exercise, what, result)
        gradient, hessian = derivatives(w_np)
        n = len(w_values)
        if got.shape == ():
            hint = ""
            if np.isclose(got, gradient @ v_np):
                hint = (
                    " It equals ∇f·v, the tangent of f's output: take the gradient first "
                    "(minigrad.grad), then the tangent of that gradient."
                )
            check.fail(exercise, f"{what} is a single number, expected shape ({n},).{hint}")
        mistakes = {
            "that is the gradient ∇f(w), the primal of the gradient: return "
            "forward_ad.unpack_dual(g).tangent, the part that carries v.": gradient,
            "that is H·1: the tangent must be v, not ones.": hessian @ np.ones(n),
        }
        check.expect_close(exercise, what, got, hessian @ v_np, mistakes)
        if not watched.saw_tangent:
            check.fail(
                exercise,
                f"{what} is right, but f never saw an input carrying a tangent: that is "
                f"reverse-over-reverse (two minigrad.grad calls, lesson 09). Here, call f on "
                f"forward_ad.make_dual(w_leaf, v) inside a dual level and read the "
                f"gradient's tangent.",
            )
    check.passed(exercise)
