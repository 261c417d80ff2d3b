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


# --------------------------------------------------------------------------- Exercise 12.4


def linear_jvp(t: np.ndarray, A: np.ndarray, d: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The lesson's linearized JVP, t (n,) -> (k,): the JVP at x0 of
    f(x) = (c * tanh(A @ x)[1:4, None]).sum(axis=0), with d = tanh'(A @ x0) (n,), A (n, n)
    and c (3, k). Step by step: matmul by A, scale by d, slice [1:4], broadcast to (3, k),
    scale by c, sum over axis 0."""
    s = (d * (A @ t))[1:4]
    return (c * np.broadcast_to(s[:, None], c.shape)).sum(axis=0)


def _jacobian_of_linear_jvp(A: np.ndarray, d: np.ndarray, c: np.ndarray) -> np.ndarray:
    """J (k, n) of linear_jvp as one matrix, cᵀ E diag(d) A with E the rows 1..3 of the
    identity: independent of any step's transpose."""
    rows = np.eye(A.shape[0])[1:4]
    return c.T @ rows @ np.diag(d) @ A


def _transpose_mistakes(u, A, d, c) -> dict[str, np.ndarray]:
    """Hint -> what a likely slip in transposing linear_jvp gives for the cotangent u (k,)."""
    n = A.shape[0]

    def steps(u, last=lambda g: A.T @ g, scale_d=lambda g: d * g, scale_c=lambda u: c * u,
              unbroadcast=lambda b: b.sum(axis=1), where=slice(1, 4)):
        s_bar = unbroadcast(scale_c(u[None, :]))
        g_bar = np.zeros(n)
        g_bar[where] = s_bar
        return last(scale_d(g_bar))

    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "the last step uses A: the transpose of `h = A @ t` is `A.T @ h_bar` (the "
            "identity ⟨A.T u, t⟩ = ⟨u, A t⟩), not A again.": steps(u, last=lambda g: A @ g),
            "the last step multiplies by the inverse of A: transposing is not inverting; "
            "the transpose of `A @ t` is `A.T @ ...`.": steps(
                u, last=lambda g: np.linalg.solve(A, g)
            ),
            "the scale by d is divided out: the transpose of multiplying entry by entry by d "
            "is multiplying by d again (a diagonal matrix is its own transpose), not "
            "dividing.": steps(u, scale_d=lambda g: g / d),
            "the scale by c is divided out: the transpose of multiplying by c is multiplying "
            "by c again, not dividing.": steps(u, scale_c=lambda u: u / c),
            "the scale by d is missing: every step of the JVP needs its transpose, d (the "
            "derivative of tanh at the point) included.": steps(u, scale_d=lambda g: g),
            "the scale by c is missing: every step of the JVP needs its transpose, the "
            "multiplication by c included.": steps(u, scale_c=lambda u: np.broadcast_to(
                u, c.shape)),
            "the transpose of the broadcast takes a mean: broadcasting copies s into k "
            "columns, so its transpose adds the k columns up (sum over axis 1), without "
            "dividing by k.": steps(u, unbroadcast=lambda b: b.mean(axis=1)),
            "the transpose of the broadcast keeps one column: the broadcast copied s into "
            "every column, so all of them send their part back: sum over axis 1.": steps(
                u, unbroadcast=lambda b: b[:, 0]
            ),
            "the slice's transpose puts s_bar in the wrong place: `s = g[1:4]` took entries "
            "1, 2, 3, so its transpose writes s_bar into entries 1, 2, 3 of a zero vector of "
            "g's length.": steps(u, where=slice(0, 3)),
        }


_REVERSE_ORDER = (
    ValueError,
    "The shapes do not fit together: transpose the steps in reverse order, the last step "
    "first. u has the output's shape (k,), so the first transposed step undoes the last step "
    "of the JVP (the sum over axis 0), and A.T comes last.",
)

# (n, k, seed, zero entries of d). n = 4 as in the lesson; then k = 3, a d with zeros (a
# saturated tanh: those entries of the vjp get nothing through them) and a zero u.
_TRANSPOSE_CASES: list[tuple[int, int, int, tuple[int, ...], bool]] = [
    (4, 2, 1240, (), False),
    (4, 3, 1241, (), False),
    (4, 2, 1242, (2,), False),
    (4, 1, 1243, (), True),
]


def _transpose_case(n: int, k: int, seed: int, zeros: tuple, zero_u: bool) -> tuple:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    d = rng.uniform(0.2, 1.0, size=n)
    d[list(zeros)] = 0.0
    c = rng.normal(size=(3, k))
    u = np.zeros(k) if zero_u else rng.normal(size=k)
    return u, A, d, c


def check_transpose(
    exercise: str, vjp: Callable, u: np.ndarray, A: np.ndarray, d: np.ndarray, c: np.ndarray,
    rng: np.random.Generator,
) -> None:
    """vjp(u, A, d, c) against Jᵀu, with the likely mistakes named; a wrong result that is
    none of them is reported through the defining identity ⟨vjp(u), t⟩ = ⟨u, jvp(t)⟩."""
    what = (
        f"vjp_by_transposing(u, A, d, c) for A of shape {A.shape}, c of shape {c.shape}, "
        f"u = {np.round(u, 3).tolist()}"
    )
    if not np.any(d):
        what += " (d = 0)"
    elif not np.all(d):
        what += f" (d has zero entries: {np.round(d, 3).tolist()})"
    result = check.call(
        exercise, what, vjp, u.copy(), A.copy(), d.copy(), c.copy(), hints=[_REVERSE_ORDER]
    )
    if result is None:
        check.fail(exercise, f"{what} is None: did you forget to `return` the vector?")
    got = check.as_array(exercise, what, result)
    expected = _jacobian_of_linear_jvp(A, d, c).T @ u
    n, k = A.shape[0], c.shape[1]
    shape_hint = None
    if got.shape == (k,):
        shape_hint = (
            "that is the output's shape: the vjp maps a cotangent of the output, shape (k,), "
            "to one of the input, shape (n,), like t."
        )
    check.expect_shape(exercise, what, got, (n,), shape_hint)
    if np.allclose(got, expected, rtol=1e-6, atol=1e-9):
        return
    for hint, wrong in _transpose_mistakes(u, A, d, c).items():
        if np.all(np.isfinite(wrong)) and np.allclose(got, wrong, rtol=1e-6, atol=1e-9):
            check.fail(exercise, f"{what} is {check._short(got)}, expected "
                       f"{check._short(expected)}: {hint}")
    t = rng.normal(size=n)
    if np.any(u):
        lhs, rhs = float(got @ t), float(u @ linear_jvp(t, A, d, c))
        check.fail(
            exercise,
            f"{what} is {check._short(got)}, expected {check._short(expected)}. It breaks the "
            f"identity that defines the transpose: for t = {np.round(t, 3).tolist()}, "
            f"⟨vjp(u), t⟩ = {lhs:.4g} but ⟨u, jvp(t)⟩ = {rhs:.4g}. Check each step's "
            "transpose with that identity on its own.",
        )
    check.fail(
        exercise,
        f"{what} is {check._short(got)}, expected zeros: the transpose is linear, so a zero "
        "cotangent gives a zero vector (nothing may be added that does not come from u).",
    )


def check_12_4(vjp_by_transposing: Callable) -> None:
    """vjp_by_transposing(u, A, d, c) = Jᵀu for linear_jvp, each step transposed in reverse
    order: broadcast u, scale by c, sum over axis 1, pad into zeros, scale by d, A.T @."""
    exercise = "12.4"
    if not callable(vjp_by_transposing):
        check.fail(
            exercise,
            f"vjp_by_transposing should be a function; got "
            f"{check.with_article(vjp_by_transposing)}.",
        )
    rng = np.random.default_rng(124)
    for case in _TRANSPOSE_CASES:
        check_transpose(exercise, vjp_by_transposing, *_transpose_case(*case), rng)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 12.5


class _Tagged:
    """value + tangent·ε_tag, the check's own tagged dual (the lesson's Tagged, written
    again so that the mistakes below never run the learner's class). A larger tag is a
    newer, inner derivative call; an operand without the top tag is a constant there."""

    def __init__(self, value: Any, tangent: Any, tag: int) -> None:
        self.value, self.tangent, self.tag = value, tangent, tag

    @staticmethod
    def _split(v: Any, tag: int) -> tuple[Any, Any]:
        if isinstance(v, _Tagged) and v.tag == tag:
            return v.value, v.tangent
        return v, 0.0

    @staticmethod
    def _top(a: Any, b: Any) -> int:
        return max(v.tag for v in (a, b) if isinstance(v, _Tagged))

    def __add__(self, other: Any) -> _Tagged:
        tag = self._top(self, other)
        (a, da), (b, db) = self._split(self, tag), self._split(other, tag)
        return _Tagged(a + b, da + db, tag)

    def __mul__(self, other: Any) -> _Tagged:
        tag = self._top(self, other)
        (a, da), (b, db) = self._split(self, tag), self._split(other, tag)
        return _Tagged(a * b, da * b + a * db, tag)

    __radd__ = __add__
    __rmul__ = __mul__


def _derivative_with(next_tag: Callable[[], int], own_tag_only: bool = True) -> Callable:
    """derivative(f, x) on _Tagged with tags from next_tag(); own_tag_only=False reads the
    tangent of whatever tag f's result carries."""

    def derivative(f: Callable, x: Any) -> Any:
        tag = next_tag()
        out = f(_Tagged(x, 1.0, tag))
        if isinstance(out, _Tagged) and (out.tag == tag or not own_tag_only):
            return out.tangent
        return 0.0

    return derivative


def _counter(step: int) -> Callable[[], int]:
    state = {"tag": 0}

    def next_tag() -> int:
        state["tag"] += step
        return state["tag"]

    return next_tag


def _perturbation_mistakes() -> dict[str, Callable]:
    """Hint -> a mistaken derivative. The one-tag mistake is the untagged Dual of section 1
    (every call's ε is the same ε); the rest read or order tags wrongly."""
    return {
        "the derivative of f's result was read whatever its tag: when f does not depend on "
        "its own x (here the inner function uses only the outer x), its result carries an "
        "outer call's tag, and that tangent belongs to the outer derivative. Return 0 "
        "then.": _derivative_with(_counter(1), own_tag_only=False),
        "every call uses the same tag: that is perturbation confusion, the bug of the "
        "untagged Dual. The inner call's ε must differ from the outer call's, so each call "
        "takes a fresh tag (next(tags)).": _derivative_with(lambda: 1),
        "the tags go down: an inner call must get a tag larger than every tag in use (the "
        "arithmetic treats the larger tag as the inner derivative), so take the next one "
        "from the counter, not a smaller one.": _derivative_with(_counter(-1)),
    }


# (label, build(derivative) -> the number, expected). Nested cases the untagged Dual gets
# wrong, an inner function that ignores its own variable, then first order, a constant
# function, three levels, and a second derivative through a derivative at a tagged point.
_NESTED_CASES: list[tuple[str, Callable[[Callable], Any], float]] = [
    (
        "d/dx [x · d/dy (x + y) at y = 1] at x = 1",
        lambda D: D(lambda x: x * D(lambda y: x + y, 1.0), 1.0),
        1.0,
    ),
    (
        "d/dx [d/dy (x · y) at y = 2] at x = 0.5",
        lambda D: D(lambda x: D(lambda y: x * y, 2.0), 0.5),
        1.0,
    ),
    (
        "d/dx [x · d/dy (x · x) at y = 1] at x = 1.5 (the inner function ignores y)",
        lambda D: D(lambda x: x * D(lambda y: x * x, 1.0), 1.5),
        0.0,
    ),
    ("d/dx x³ at x = 2", lambda D: D(lambda x: x * x * x, 2.0), 12.0),
    ("d/dx 3 at x = 1 (f ignores x)", lambda D: D(lambda x: 3.0, 1.0), 0.0),
    (
        "d/dx [x · d/dy [y · d/dz (x · y · z) at z = 0.5] at y = 2] at x = 1.5",
        lambda D: D(lambda x: x * D(lambda y: y * D(lambda z: x * y * z, 0.5), 2.0), 1.5),
        12.0,
    ),
    (
        "d/dx [d/dy y³ at y = x] at x = 2 (a second derivative)",
        lambda D: D(lambda x: D(lambda y: y * y * y, x), 2.0),
        12.0,
    ),
]

_TANGENT_OF_A_NUMBER = (
    AttributeError,
    lambda error: error.name in ("tangent", "tag", "value"),
    "f's result is not always a Tagged: a function that ignores x (or uses only an outer "
    "call's variable) returns a plain number or another call's Tagged; its derivative "
    "along this call's ε is 0.",
)


def _watched(exercise: str, label: str, derivative: Callable) -> Callable:
    """derivative, with each call's result looked at: a call that returns the dual number
    of its own tag (f's result itself) instead of that number's tangent is named. A right
    answer may return a dual number, the tangent, but that carries older tags only."""

    def watched(f: Callable, x: Any) -> Any:
        own_tags = []

        def recorded(point: Any) -> Any:
            own_tags.append(getattr(point, "tag", None))
            return f(point)

        result = derivative(recorded, x)
        tag = getattr(result, "tag", None)
        if hasattr(result, "tangent") and tag is not None and tag in own_tags:
            check.fail(
                exercise,
                f"{label}: a call of your derivative returned {type(result).__name__}("
                f"..., tag {tag}), the dual number of its own tag (f's result itself), not "
                f"a number: return the tangent of your own tag (a number, or a dual number "
                f"of an outer call's tag), not the {type(result).__name__} itself.",
            )
        return result

    return watched


def check_nested(exercise: str, derivative: Callable, label: str, build: Callable,
                 expected: float, mistakes: dict[str, Callable]) -> None:
    """One nested case: the number derivative gives, against `expected`, with the mistakes
    whose numbers differ from it named."""
    what = f"{label} with your derivative"
    result = check.call(exercise, what, build, _watched(exercise, label, derivative),
                        hints=[_TANGENT_OF_A_NUMBER])
    if hasattr(result, "tangent") and hasattr(result, "value"):
        check.fail(
            exercise,
            f"{what} is a {type(result).__name__}, not a number: return the tangent of "
            "your own tag (a number at the outermost call), not the dual number itself.",
        )
    wrong = {}
    for hint, mistaken in mistakes.items():
        try:
            value = float(build(mistaken))
        except Exception:  # noqa: BLE001 - a mistake that cannot run names nothing here
            continue
        if not np.isclose(value, expected):
            wrong[hint] = value
    check.expect_close(exercise, what, result, expected, wrong)


def check_12_5(derivative: Callable) -> None:
    """derivative(f, x) with tagged duals: a fresh tag per call, the tangent of its own tag
    only (0 when f's result does not carry it)."""
    exercise = "12.5"
    if not callable(derivative):
        check.fail(
            exercise, f"derivative should be a function; got {check.with_article(derivative)}."
        )
    mistakes = _perturbation_mistakes()
    for label, build, expected in _NESTED_CASES:
        check_nested(exercise, derivative, label, build, expected, mistakes)
    check.passed(exercise)
