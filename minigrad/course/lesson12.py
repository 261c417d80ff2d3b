"""Checks for lesson 12 (forward mode and the JVP/VJP duality).

Each check runs the learner's answer on inputs of its own, never the lesson's, and
compares with values computed independently in NumPy from closed forms. The lesson's later
cells use minigrad's own forward_ad and functional, never an answer, so nothing here is a
reference for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.autodiff import forward_ad
from minigrad.core.engine import grad
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.course import check

OPEN_A_LEVEL = (
    "Forward mode only works inside `with forward_ad.dual_level():`; make the duals, call "
    "the function and unpack the result all inside that block."
)


_NO_LEVEL = (forward_ad.NoDualLevelError, OPEN_A_LEVEL)


def _plural(count: int, word: str, words: str | None = None) -> str:
    """For example "1 column", "2 columns"; `words` gives an irregular plural ("entries")."""
    return f"{count} {word}" if count == 1 else f"{count} {words or word + 's'}"


def _is_function_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, Function)


# --------------------------------------------------------------------------- Exercise 12.1

# (a, b, tangent of a, tangent of b). Tangents other than 1, so that a rule which leaves
# one out shows; None means the input is a plain Variable (the engine passes zeros). The
# first case tells every named mistake apart; the later ones are edge cases: an explicit
# zero tangent, b = 0 (where sin(b) = 0 hides the term of b), a single entry.
_SCALED_COS_CASES: list[tuple[list, list, list | None, list | None]] = [
    ([0.7, -1.3, 2.0], [0.4, 1.1, -2.5], [0.5, -2.0, 1.5], [1.5, 0.25, -3.0]),
    (
        [[1.2, -0.4], [0.9, 2.2]],
        [[-0.6, 0.3], [1.7, -1.2]],
        [[2.0, 1.5], [-0.5, 0.75]],
        [[-1.0, 0.5], [2.5, 1.25]],
    ),
    ([1.5, -0.8], [0.9, 2.4], None, [2.0, -0.5]),
    ([1.5, -0.8], [0.9, 2.4], [-1.5, 3.0], None),
    ([1.5, -0.8, 2.0], [0.0, 0.9, 0.0], [0.0, 0.0, 0.0], [2.0, -0.5, 1.5]),
    ([0.6], [-1.4], [-2.0], [0.5]),
]

_FORGOT_SAVE = (
    AttributeError,
    lambda error: error.name == "saved_for_forward" and isinstance(error.obj, FunctionCtx),
    "jvp reads ctx.saved_for_forward, but forward never filled it: call "
    "`ctx.save_for_forward(a, b)` in forward.",
)


def _scaled_cos_mistakes(a, b, ta, tb) -> dict[str, np.ndarray]:
    """Hint -> the tangent a likely mistake gives, for y = a·cos(b)."""
    cos, sin = np.cos(b), np.sin(b)
    return {
        "that is the output's value a·cos(b), not its tangent: jvp returns how fast y moves "
        "when a moves at speed ȧ and b at speed ḃ.": a * cos,
        "the tangents are left out: that is the sum of the two partial derivatives, "
        "cos(b) - a·sin(b). Multiply each by its own input's tangent.": cos - a * sin,
        "the term of b is not multiplied by b's tangent: -a·sin(b) is only the partial "
        "derivative; b moves at speed ḃ, so its term is -a·sin(b)·ḃ.": ta * cos - a * sin,
        "the term of a is not multiplied by a's tangent: cos(b) is only the partial "
        "derivative; a moves at speed ȧ, so its term is ȧ·cos(b).": cos - a * sin * tb,
        "the term of b is missing: b moves too, and y depends on b through cos(b) "
        "(product rule: one term per input).": ta * cos,
        "the term of a is missing: a moves too, and y depends on a through the factor a "
        "(product rule: one term per input).": -a * sin * tb,
        "the term of b has the wrong sign: the derivative of cos(b) is -sin(b), so the "
        "term is -a·sin(b)·ḃ.": ta * cos + a * sin * tb,
        "the term of b uses cos(b): the derivative of cos(b) is -sin(b), not cos(b) (and "
        "not its own value).": ta * cos - a * cos * tb,
        "the term of b uses +cos(b), the derivative of sin: here y = a·cos(b), and the "
        "derivative of cos(b) is -sin(b).": ta * cos + a * cos * tb,
        "that is the rule of a·sin(b), ȧ·sin(b) + a·cos(b)·ḃ: here y = a·cos(b), so the term "
        "of a is ȧ·cos(b) and the derivative of cos(b) is -sin(b).": ta * sin + a * cos * tb,
        "the term of a uses sin(b): y moves with a at the rate cos(b), so that term is "
        "ȧ·cos(b).": ta * sin - a * sin * tb,
        "the tangents are swapped: ȧ goes with cos(b), ḃ with -a·sin(b).": tb * cos - a * sin * ta,
        "that is ȧ·ḃ·(-sin(b)), the product of the two factors' tangents: the product rule "
        "gives a sum, one term per factor, each with the other factor kept.": -ta * sin * tb,
    }


def check_12_1(scaled_cos: type) -> None:
    """ScaledCos: y = a * cos(b), with forward and a jvp(ctx, a_tangent, b_tangent) that
    the learner derived: ẏ = ȧ·cos(b) - a·sin(b)·ḃ."""
    exercise = "12.1"
    if not _is_function_class(scaled_cos):
        owner = getattr(scaled_cos, "__self__", None)
        if _is_function_class(owner):
            check.fail(exercise, "pass the class itself, `ScaledCos`, not `ScaledCos.apply`.")
        check.fail(
            exercise,
            f"ScaledCos should be a class that subclasses minigrad.Function; got "
            f"{check.with_article(scaled_cos)}.",
        )
    if scaled_cos.jvp is Function.jvp:
        check.fail(exercise, "ScaledCos has no jvp: define `def jvp(ctx, a_tangent, b_tangent)`.")
    hints = [_FORGOT_SAVE]
    for a_values, b_values, ta_values, tb_values in _SCALED_COS_CASES:
        a, b = np.asarray(a_values, float), np.asarray(b_values, float)
        ta = np.zeros_like(a) if ta_values is None else np.asarray(ta_values, float)
        tb = np.zeros_like(b) if tb_values is None else np.asarray(tb_values, float)
        what = f"the tangent of ScaledCos.apply(a, b) for a = {a_values}, b = {b_values}"
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
                out = scaled_cos.apply(a_in, b_in)
                return out, forward_ad.unpack_dual(out).tangent

        out, tangent = check.call(exercise, what, run, hints=hints)
        check.expect_close(
            exercise,
            "the value of ScaledCos.apply(a, b)",
            out,
            a * np.cos(b),
            {
                "that is cos(b): multiply by a.": np.cos(b),
                "that is a·sin(b): the value is a·cos(b).": a * np.sin(b),
                "that is -a·sin(b), the derivative: the value is a·cos(b); the derivative "
                "belongs in jvp.": -a * np.sin(b),
            },
        )
        if tangent is None:
            check.fail(exercise, f"{what} is None: jvp must `return` the output's tangent.")
        expected = ta * np.cos(b) - a * np.sin(b) * tb
        check.expect_close(exercise, what, tangent, expected, _scaled_cos_mistakes(a, b, ta, tb))
    _check_tangent_differentiable(exercise, scaled_cos, hints)
    check.passed(exercise)


_ON_DATA = (
    "the numbers are right, but {} of jvp is computed with NumPy on .data, so the tangent "
    "cannot be differentiated again (section 6 shows Hv coming out as zeros for a backward "
    "written that way). Write the rule with Variable operations on the saved Variables and "
    "the tangents: b.cos(), b.sin(), *, -."
)


def _check_tangent_differentiable(exercise: str, scaled_cos: type, hints: list) -> None:
    """With a and b requiring grad, the tangent is itself differentiable: its gradient
    with respect to a is -sin(b)·ḃ, with respect to b -ȧ·sin(b) - a·cos(b)·ḃ."""
    a_values, b_values = np.array([0.7, -1.3]), np.array([0.4, 1.1])
    ta, tb = np.array([0.5, -2.0]), np.array([1.5, 0.25])
    a = Variable(a_values.copy(), requires_grad=True)
    b = Variable(b_values.copy(), requires_grad=True)
    what = (
        "the tangent of ScaledCos.apply(a, b) for a = [0.7, -1.3] and b = [0.4, 1.1] that "
        "require grad, tangents [0.5, -2.0] and [1.5, 0.25]"
    )

    def run() -> Any:
        with forward_ad.dual_level():
            out = scaled_cos.apply(
                forward_ad.make_dual(a, Variable(ta)), forward_ad.make_dual(b, Variable(tb))
            )
            tangent = forward_ad.unpack_dual(out).tangent
            if not isinstance(tangent, Variable) or not tangent.requires_grad:
                return None
            return grad(tangent.sum(), (a, b), allow_unused=True)

    grads = check.call(exercise, what, run, hints=hints)
    if grads is None:
        check.fail(exercise, f"{what}: " + _ON_DATA.format("all"))
    expected = (-np.sin(b_values) * tb, -ta * np.sin(b_values) - a_values * np.cos(b_values) * tb)
    for got, wanted in zip(grads, expected):
        if got is None or not np.allclose(np.asarray(got.data), wanted):
            check.fail(exercise, f"{what}: " + _ON_DATA.format("part"))


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
_ZERO_COLUMN = np.array([[0.7, 0.0, -0.2, 1.1], [-0.4, 0.0, 0.9, 0.3]])
_SINGLE_INPUT = np.array([0.5, -1.5, 2.0])

# (label, f on Variables, Jacobian in NumPy, x). Wide, tall and square first (they tell
# the mistakes apart), then the edge cases: an input f does not depend on (a zero column,
# at x_j = 0) and a single input entry (a one-column Jacobian).
_JACOBIAN_CASES: list[tuple[str, Callable, Callable, list[float]]] = [
    (
        "tanh(W @ x) with W of shape (2, 3)",
        lambda x: (Variable(_WIDE) @ x).tanh(),
        lambda x: (1 - np.tanh(_WIDE @ x) ** 2)[:, None] * _WIDE,
        [0.3, -0.6, 1.2],
    ),
    (
        "0.5 * exp(W @ x) with W of shape (4, 2)",
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
    (
        "tanh(W @ x) with W of shape (2, 4) whose column 1 is zero",
        lambda x: (Variable(_ZERO_COLUMN) @ x).tanh(),
        lambda x: (1 - np.tanh(_ZERO_COLUMN @ x) ** 2)[:, None] * _ZERO_COLUMN,
        [0.5, 0.0, -1.0, 0.2],
    ),
    (
        "tanh(c * x) with c of shape (3,) and x of shape (1,)",
        lambda x: (Variable(_SINGLE_INPUT) * x).tanh(),
        lambda x: ((1 - np.tanh(_SINGLE_INPUT * x) ** 2) * _SINGLE_INPUT)[:, None],
        [0.8],
    ),
]

_ROWS_NOT_COLUMNS = (
    "the columns ended up as rows: jvp with tangent e_j gives column j of J (how all m "
    "outputs move when x_j moves), so put the jvps side by side (np.stack(columns, "
    "axis=1)), not one below the other."
)

_PAST_THE_END = (
    IndexError,
    "j ran past the last entry of x: J has one column per input entry, so j runs over "
    "range(x.numel()), not over the outputs or one further.",
)


def _jacobian_shape_hint(got: np.ndarray, m: int, n: int) -> str | None:
    """What a result of the wrong shape most likely means, or None for expect_shape's
    generic hint. J is (m, n): m outputs, n inputs, one jvp per column."""
    if got.ndim == 2 and got.shape == (n, m):
        return _ROWS_NOT_COLUMNS
    if got.ndim == 2 and got.shape[0] == m:
        return (
            f"it has {_plural(got.shape[1], 'column')} for an x with "
            f"{_plural(n, 'entry', 'entries')}: J needs one column per "
            f"input entry, one forward pass each with the unit tangent e_j, for every j in "
            f"range(x.numel())."
        )
    if got.ndim == 2 and got.shape[1] == n:
        return (
            f"it has {_plural(got.shape[0], 'row')}, but f has {m} outputs: each column is "
            f"the whole tangent of f's output, J·e_j, with all {m} entries."
        )
    if got.ndim == 1 and got.size == m:
        return (
            "that is a single column: one jvp gives one column J·t; make one per input "
            f"entry ({n} here) and put them side by side."
        )
    return None


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
            hints=[_NO_LEVEL, _PAST_THE_END],
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
                f"{what} ran "
                f"{_plural(counted.backward_passes, 'backward pass', 'backward passes')}: that "
                f"is reverse mode, row by row. Build the columns with forward mode instead: "
                f"one functional.jvp (or one dual_level pass) per input entry.",
            )
        if result is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` the Jacobian?")
        got = check.as_array(exercise, what, result)
        expected = jacobian_np(x_np)
        m, n = expected.shape
        check.expect_shape(exercise, what, got, (m, n), _jacobian_shape_hint(got, m, n))
        ratio = _common_ratio(got, expected)
        if ratio is not None:
            check.fail(
                exercise,
                f"{what} is J times {ratio:.4g}: the tangents were scaled; use unit vectors "
                f"e_j (a single 1), since J·(c·e_j) is c times column j.",
            )
        mistakes = {
            _ROWS_NOT_COLUMNS: expected.T,
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

# (w, v) for f(w) = (w·w)², whose Hessian is 4 (w·w) I + 8 w wᵀ. The first two tell the
# mistakes apart; then the edge cases: a single entry (Hv = 12 w² v), v = 0, a v at right
# angles to w (the term along w vanishes), w = 0 (H = 0).
_QUARTIC_CASES: list[tuple[list[float], list[float]]] = [
    ([0.5, -1.0, 2.0], [1.0, 0.5, -2.0]),
    ([1.2, -0.7, 0.3, 2.0], [-1.0, 2.0, 0.5, 0.25]),
    ([1.5], [2.0]),
    ([0.4, -1.1], [0.0, 0.0]),
    ([1.0, 2.0], [2.0, -1.0]),
    ([0.0, 0.0, 0.0], [1.0, -1.0, 0.5]),
]


def _quartic_mistakes(w: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """Hint -> the Hv a likely mistake gives, for f(w) = (w·w)²."""
    ww, wv = w @ w, w @ v
    return {
        "that is the gradient ∇f = 4 (w·w) w, not Hv: differentiate the gradient once more, "
        "along v.": 4 * ww * w,
        "only the term from moving the last w: the factor (w·w) in ∇f = 4 (w·w) w depends "
        "on w as well, and moving w along v changes it at the rate 2 (w·v) (product "
        "rule).": 4 * ww * v,
        "only the term from moving the factor (w·w): the last w in ∇f = 4 (w·w) w moves "
        "along v as well and adds 4 (w·w) v (product rule).": 8 * wv * w,
        "the term along w is half what it should be: d/dh (w + hv)·(w + hv) at h = 0 is "
        "2 (w·v), not (w·v).": 4 * ww * v + 4 * wv * w,
        "that is half of Hv: the gradient of (w·w)² is 2 (w·w) · 2w = 4 (w·w) w, with the "
        "inner derivative 2w of w·w (chain rule).": 2 * ww * v + 4 * wv * w,
        "that is Hv for the sum of fourth powers Σ w_i⁴, whose Hessian is diagonal (12 w_i²). "
        "(w·w)² is the square of the whole sum, so moving one entry changes every entry "
        "of ∇f = 4 (w·w) w: apply the product rule to that gradient.": 12 * w * w * v,
        "that is H·(1, 1, ..., 1): the direction must be v, not all ones.": 4 * ww
        + 8 * w.sum() * w,
        "the two dot products are swapped: the term along v has (w·w), the term along w "
        "has (w·v).": 4 * wv * v + 8 * ww * w,
        "that is 4 (w·w) v + 8 (w·w) v: in the rank-one term 8 w wᵀ v the vectors w and v "
        "swapped places; wᵀ v is the number (w·v), so that term is 8 (w·v) w.": 12 * ww * v,
    }


_NUMPY_ONLY = (
    "w and v are NumPy arrays here, not Variables: write the formula with NumPy, e.g. "
    "w @ v for a dot product and np.outer(w, w) for an outer product, without .data (the "
    ".data of a NumPy array is its raw memory buffer)."
)
_NUMPY_HINTS: list[check.HintRule] = [
    (AttributeError, lambda error: isinstance(error.obj, np.ndarray), _NUMPY_ONLY),
    (TypeError, _NUMPY_ONLY),
]


def check_12_3(hv_by_hand: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """hv_by_hand(w, v): H v for f(w) = (w·w)², derived by hand (4 (w·w) v + 8 (w·v) w)."""
    exercise = "12.3"
    if not callable(hv_by_hand):
        check.fail(
            exercise, f"hv_by_hand should be a function; got {check.with_article(hv_by_hand)}."
        )
    for w_values, v_values in _QUARTIC_CASES:
        w, v = np.asarray(w_values, float), np.asarray(v_values, float)
        what = f"hv_by_hand(w, v) for w = {w_values}, v = {v_values}"
        result = check.call(exercise, what, hv_by_hand, w.copy(), v.copy(), hints=_NUMPY_HINTS)
        if result is None:
            check.fail(exercise, f"{what} is None: did you forget to `return` Hv?")
        got = check.as_array(exercise, what, result)
        n = w.size
        hessian = 4 * (w @ w) * np.eye(n) + 8 * np.outer(w, w)
        expected = hessian @ v
        if got.shape == () and n > 1:
            hint = "Hv is a vector with w's shape, one entry per entry of w"
            if np.isclose(got, v @ expected):
                hint = f"that number is vᵀHv; {hint}"
            elif np.isclose(got, 4 * (w @ w) * (w @ v)):
                hint = f"that number is ∇f·v, the derivative of f along v; {hint}"
            check.fail(exercise, f"{what} is a single number, {_short(got)}: {hint}.")
        if got.shape == (n, n) and n > 1:
            hint = "Hv is a vector with w's shape"
            if np.allclose(got, hessian):
                hint = "that is H itself: multiply it by v (the point of Hv is never to form H)"
            check.fail(exercise, f"{what} has shape {(n, n)}, expected {(n,)}: {hint}.")
        check.expect_close(exercise, what, got, expected, _quartic_mistakes(w, v))
    check.passed(exercise)


def _short(value: np.ndarray) -> str:
    return format(float(value), ".4g")
