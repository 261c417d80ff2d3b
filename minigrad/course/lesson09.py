"""Checks for lesson 09 (advanced autodiff).

Each check calls the learner's answer on fresh inputs of its own and compares the result
with values computed independently in NumPy from closed forms. Exercise 9.1 asks for a
guarded Newton step (Newton where f'' > 0, a gradient step elsewhere); its hidden data
holds a point where f'' is exactly 0, where a guard `>=` divides by zero. Errors are told
apart by type and fields (NoGradFnError for a first derivative without history), and by
what the learner's Function returned (minigrad.course.function_checks).

Exercise 9.5 asks for FixedPoint, z* = tanh(W z* + a) with a backward by the implicit
function theorem; its check compares with the closed form s * solve(I - (diag(s) W)^T, g),
s = 1 - z*^2, with unrolled backprop (unrolled_fixed_point) and with gradcheck, and adds up
the bytes its ctx keeps on a slowly converging W (kept iterates fail it). Exercise
9.6 asks for a prediction by hand of what a clipping hook receives and of x.grad; the
engine's answer is run_hook_graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.engine import grad
from minigrad.core.errors import NoGradFnError
from minigrad.core.function import Function
from minigrad.core.variable import Variable
from minigrad.course import check
from minigrad.course import function_checks as run

FORGOT_CREATE_GRAPH = (
    "The second differentiation found no graph to walk: pass create_graph=True to the "
    "first minigrad.grad, so the first derivative is recorded and can be differentiated."
)
NO_GRAPH_RULE: check.HintRule = (NoGradFnError, FORGOT_CREATE_GRAPH)


def _call(
    exercise: str, what: str, function: Callable[..., Any], *args: Any, hints: list | None = None
) -> Any:
    """Call the learner's function, turning the create_graph mistake into its hint."""
    if not callable(function):
        check.fail(exercise, f"{what} should be a function; got {check.with_article(function)}.")
    return check.call(exercise, what, function, *args, hints=[NO_GRAPH_RULE, *(hints or [])])


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

# (label, f on Variables, f', f'' in plain Python, point, lr). The third point has
# f''(x) = 0 exactly: the tie where a guard `f'' >= 0` takes a Newton step and divides by 0.
NEWTON_CASES: list[tuple[str, Callable, Callable, Callable, float, float]] = [
    (
        "x**4 - 3*x**2 + x",
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: 4 * x**3 - 6 * x + 1,
        lambda x: 12 * x**2 - 6,
        2.0,
        0.05,
    ),
    (
        "x**4 - 3*x**2 + x",
        lambda x: x**4 - 3 * x**2 + x,
        lambda x: 4 * x**3 - 6 * x + 1,
        lambda x: 12 * x**2 - 6,
        0.5,
        0.05,
    ),
    (
        "x**3 + x",
        lambda x: x**3 + x,
        lambda x: 3 * x**2 + 1,
        lambda x: 6 * x,
        0.0,
        0.1,
    ),
    (
        "x * exp(x)",
        lambda x: x * x.exp(),
        lambda x: (x + 1) * math.exp(x),
        lambda x: (x + 2) * math.exp(x),
        0.7,
        0.1,
    ),
    (
        "cos(x)",
        lambda x: x.cos(),
        lambda x: -math.sin(x),
        lambda x: -math.cos(x),
        0.4,
        0.2,
    ),
]


def newton_step(f: Callable[[Variable], Variable], x: float, lr: float = 0.1) -> float:
    """The reference: x - f'(x)/f''(x) where f''(x) > 0, else the gradient step x - lr f'(x)."""
    point = Variable(x, requires_grad=True)
    (first,) = grad(f(point), point, create_graph=True)
    (second,) = grad(first, point)
    if second.item() > 0:
        return x - first.item() / second.item()
    return x - lr * first.item()


def _as_point(exercise: str, what: str, result: Any) -> float | None:
    """The returned next point as a float (None for a non-finite value, kept for a hint)."""
    if isinstance(result, tuple):
        check.fail(
            exercise,
            f"{what} returned a tuple: minigrad.grad returns one gradient per input, so "
            f"unpack it, `(first,) = minigrad.grad(...)`, and return the next point, a number.",
        )
    if isinstance(result, Variable):
        if np.size(result.data) != 1:
            check.fail(
                exercise,
                f"{what} returned a Variable of shape {result.shape}; return the next point, "
                f"a single number.",
            )
        result = float(np.asarray(result.data).reshape(()))  # shape () or (1,): one number
    if isinstance(result, (int, float, np.floating, np.integer)) and not isinstance(result, bool):
        value = float(result)
        return value if math.isfinite(value) else None
    check.fail(
        exercise,
        f"{what} returned {check.with_article(result)}; return the next point, a number "
        f"(e.g. x - first.item() / second.item()).",
    )


def check_9_1(newton_step_fn: Any) -> None:
    """newton_step(f, x, lr): x - f'(x)/f''(x) where f''(x) > 0, else x - lr f'(x)."""
    exercise = "9.1"
    plain_number = (
        TypeError,
        "x arrives as a plain number: make a leaf at that point, `point = "
        "minigrad.Variable(x, requires_grad=True)`, and differentiate f(point) with respect "
        "to it, as derivatives() does above.",
    )
    for label, f, first_fn, second_fn, point, lr in NEWTON_CASES:
        what = f"newton_step(f, {point}, lr={lr}) for f(x) = {label}"
        first, second = first_fn(point), second_fn(point)
        if not callable(newton_step_fn):
            check.fail(
                exercise,
                f"newton_step should be a function; got {check.with_article(newton_step_fn)}.",
            )
        try:
            result = newton_step_fn(f, point, lr)
        except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
            if second == 0 and isinstance(error, ZeroDivisionError):
                check.fail(
                    exercise,
                    f"{what} divided by zero: f''({point}) = 0 exactly, and a Newton step "
                    f"divides by f''. Take a Newton step only where f'' > 0 (strictly), and "
                    f"a gradient step everywhere else.",
                )
            check.explain_error(exercise, what, error, [NO_GRAPH_RULE, plain_number])
        got = _as_point(exercise, what, result)
        if second > 0:
            expected = point - first / second
        else:
            expected = point - lr * first
        if got is None:
            hint = (
                f"f''({point}) = 0 exactly, and a Newton step divides by it: the guard must "
                f"be f'' > 0 (strictly), so that f'' = 0 takes a gradient step."
                if second == 0
                else "check the division by f''."
            )
            check.fail(exercise, f"{what} is not a finite number: {hint}")
        mistakes: dict[str, float] = {
            f"that is the gradient step x - lr·f'(x), but f''({point}) = {second:.4g} > 0: "
            "there the Newton step x - f'(x)/f''(x) applies.": point - lr * first,
            "that is x + f'/f'': the Newton step subtracts, x - f'(x)/f''(x).": (
                point + first / second if second != 0 else math.nan
            ),
            "that is x + lr·f'(x): a gradient step goes against the slope, x - lr·f'(x).": (
                point + lr * first
            ),
            "that is x - f'(x): the gradient step multiplies the slope by lr.": point - first,
            "that is x - lr·f'(x)/f''(x): the Newton step takes no learning rate, dividing by "
            "f'' already sets its length, x - f'(x)/f''(x).": (
                point - lr * first / second if second > 0 else math.nan
            ),
            "that divides by |f''|: where f'' < 0 the exercise asks for a gradient step, "
            "x - lr·f'(x).": point - first / abs(second) if second != 0 else math.nan,
        }
        if second < 0:
            # Where f'' < 0, dividing by |f''| gives what a flipped sign gives: name |f''|
            # first (a flipped sign would have shown at the points where f'' > 0 already).
            mistakes = {
                f"that is a Newton step, but f''({point}) = {second:.4g} < 0: there Newton "
                "heads for a maximum (as from x0 = 0.5 above). Take a Newton step only where "
                "f'' > 0, a gradient step x - lr·f'(x) elsewhere.": point - first / second,
                "that divides by |f''|: where f'' < 0 the exercise asks for a gradient step, "
                "x - lr·f'(x).": point - first / abs(second),
                **mistakes,
            }
        mistakes["that is f(x), the function's value: return the next point."] = float(
            np.asarray(f(Variable(point)).data)
        )
        mistakes = {hint: value for hint, value in mistakes.items() if math.isfinite(value)}
        check.expect_close(exercise, what, got, expected, mistakes)
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


def _cubes(w: Variable) -> Variable:
    return (w**3).sum()


def _cubes_derivatives(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return 3 * w**2, np.diag(6 * w)


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
    # Edge cases: one weight (H is 1 x 1), and v = 0 (H v = 0).
    ("sum(w**3)", _cubes, _cubes_derivatives, [0.5], [2.0]),
    ("log(sum(exp(w)))", _log_sum_exp, _log_sum_exp_derivatives, [0.3, -0.2], [0.0, 0.0]),
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
            "that is H v / 2, half the answer: the gradient of ∇f · v with respect to w is H v "
            "itself; drop the factor 1/2.": hessian @ v_np / 2,
        }
        check.expect_close(exercise, what, result, hessian @ v_np, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 9.3


# Gradients the hook is called on: the bounds -1 and 1 themselves and 0 among them.
CLIP_SAMPLES = (
    np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0]),
    np.array([[1.5, -0.75], [-1.25, 0.5]]),
)


def check_9_3(clip_gradient: Callable[[Variable], Any]) -> None:
    """clip_gradient(grad) returns a new gradient with every entry clipped to [-1, 1]."""
    exercise = "9.3"
    if not callable(clip_gradient):
        check.fail(
            exercise,
            f"clip_gradient should be a function; got {check.with_article(clip_gradient)}.",
        )
    for values in CLIP_SAMPLES:
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
        (np.array([-1.0, 2.0, 0.0, 0.5, -0.25]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])),
        (np.array([[0.5, -2.0, 1.5], [-0.1, 3.0, -4.0]]), np.array([[1.0, -1.0, 2.0]] * 2)),
    ]
    for values, weights in samples:
        x = Variable(values.copy(), requires_grad=True)
        y = x.clone()  # a non-leaf, which may be changed in place
        version = y._version
        what = f"ReluInPlace.apply(y) for y = {values.tolist()}"
        seen = run.Spied()

        def returned_something_else(
            error: BaseException, seen: run.Spied = seen, y: Variable = y
        ) -> str | None:
            if seen.forward is run.NOTHING or seen.forward is None:
                return None
            if seen.forward is not y and isinstance(error, RuntimeError):
                return (
                    f"forward returned {check.with_article(seen.forward)} after "
                    f"ctx.mark_dirty(x): an in-place Function changes x.data and returns x "
                    f"itself."
                )
            return None

        out = run.apply(exercise, relu_in_place, (y,), what, seen, [returned_something_else])
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


# --------------------------------------------------------------------------- Exercise 9.5


def solve_fixed_point(
    a: np.ndarray, W: np.ndarray, tol: float = 1e-12, max_iter: int = 10_000
) -> tuple[np.ndarray, int]:
    """z* with z* = tanh(W z* + a), by iterating z <- tanh(W z + a) from z = 0.

    a has shape (n,), W shape (n, n) with ||W||_2 < 1, so each step shrinks the distance to
    z* by at least ||W||_2 (tanh' <= 1). Stops when no entry moves by tol or more; returns
    (z*, the number of iterations)."""
    z = np.zeros_like(np.asarray(a, dtype=np.float64))
    for iteration in range(1, max_iter + 1):
        z_next = np.tanh(W @ z + a)
        if np.max(np.abs(z_next - z), initial=0.0) < tol:
            return z_next, iteration
        z = z_next
    raise RuntimeError(f"no fixed point within {max_iter} iterations: is ||W||_2 < 1?")


def solve_adjoint(
    W: np.ndarray, s: np.ndarray, upstream: np.ndarray, tol: float = 1e-12, max_iter: int = 10_000
) -> np.ndarray:
    """u with u = upstream + W^T (s * u), by iteration: the VJP's own fixed point.

    (∂f/∂z)^T u = (diag(s) W)^T u = W^T (s * u), and it contracts as fast as the forward
    iteration does, so it converges where the forward did, keeping only u (shape (n,))."""
    u = np.array(upstream, dtype=np.float64)
    for _ in range(max_iter):
        u_next = upstream + W.T @ (s * u)
        if np.max(np.abs(u_next - u), initial=0.0) < tol:
            return u_next
        u = u_next
    raise RuntimeError(f"the adjoint iteration did not settle within {max_iter} steps")


class FixedPoint(Function):
    """The reference: z* = tanh(W z* + a) for a Variable a of shape (n,) and a plain (n, n)
    array W; backward by the implicit function theorem, keeping only z* and W.

    With s = 1 - z*^2 (tanh' at W z* + a), ∂f/∂z = diag(s) W and ∂f/∂a = diag(s), so the
    gradient for a is s * u where u = grad + W^T (s * u)."""

    @staticmethod
    def forward(ctx: Any, a: Variable, W: np.ndarray) -> np.ndarray:
        z, _ = solve_fixed_point(a.data, W)
        ctx.z, ctx.W = z, W  # the only things backward needs: no iterates are kept
        return z

    @staticmethod
    def backward(ctx: Any, grad: Variable) -> tuple[np.ndarray, None]:
        s = 1.0 - ctx.z**2
        u = solve_adjoint(ctx.W, s, np.asarray(grad.data, dtype=np.float64))
        return s * u, None  # W is a plain array: no gradient


def unrolled_fixed_point(
    a: Variable, W: np.ndarray, tol: float = 1e-12, max_iter: int = 10_000
) -> tuple[Variable, int]:
    """The same iteration as solve_fixed_point on Variables, so the engine records every
    step (backward then walks all of them). Returns (z*, the number of iterations)."""
    weights = Variable(W)
    z = Variable(np.zeros(a.shape))
    for iteration in range(1, max_iter + 1):
        z_next = (weights @ z + a).tanh()
        if np.max(np.abs(z_next.data - z.data), initial=0.0) < tol:
            return z_next, iteration
        z = z_next
    raise RuntimeError(f"no fixed point within {max_iter} iterations: is ||W||_2 < 1?")


def contraction(n: int, norm: float, seed: int) -> np.ndarray:
    """A random (n, n) matrix, not symmetric, with ||W||_2 = norm."""
    matrix = np.random.default_rng(seed).normal(size=(n, n))
    return norm * matrix / np.linalg.norm(matrix, 2)


def fixed_point_gradients(
    a: np.ndarray, W: np.ndarray, upstream: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The gradient for a of sum(upstream * z*(a)) in closed form, and what likely mistakes
    give. J = ∂f/∂z = diag(s) W with s = 1 - z*^2; the right answer is
    s * solve(I - J^T, upstream)."""
    z, _ = solve_fixed_point(a, W)
    s = 1.0 - z**2
    n = len(a)
    eye = np.eye(n)
    jac = s[:, None] * W

    def vjp(matrix: np.ndarray, upstream: np.ndarray) -> np.ndarray:
        return np.linalg.solve(eye - matrix, upstream)

    s_at_z = 1.0 - np.tanh(z) ** 2
    mistakes = {
        "that solves u = grad + (∂f/∂z) u, without the transpose: a VJP multiplies by the "
        "transposed Jacobian, u = grad + (∂f/∂z)^T u = grad + W^T (s * u), with s = 1 - z*².":
            s * vjp(jac, upstream),
        "that is (∂f/∂a)^T grad = s * grad, one step through f only: the inverse "
        "(I - ∂f/∂z)^{-1} is missing (z* depends on a through every iteration). Solve "
        "u = grad + (∂f/∂z)^T u first, then return s * u.": s * upstream,
        "the upstream gradient was ignored (that is the answer for grad = ones): solve "
        "u = grad + (∂f/∂z)^T u with the grad backward receives.": s * vjp(jac.T, np.ones(n)),
        "that is u itself: the last factor (∂f/∂a)^T = diag(s) is missing, return s * u.":
            vjp(jac.T, upstream),
        "that has (I + (∂f/∂z)^T)^{-1}: the fixed-point equation gives u = grad + "
        "(∂f/∂z)^T u, i.e. (I - (∂f/∂z)^T) u = grad.": s * vjp(-jac.T, upstream),
        "∂f/∂z is missing tanh': ∂f/∂z = diag(s) W with s = 1 - z*², not W.":
            s * vjp(W.T, upstream),
        "tanh' was taken at z*: tanh'(W z* + a) = 1 - tanh(W z* + a)² = 1 - z*², since "
        "tanh(W z* + a) is z* itself.": s_at_z * vjp((s_at_z[:, None] * W).T, upstream),
    }
    return s * vjp(jac.T, upstream), mistakes


# (n, ||W||_2, seed of W, a, upstream gradient): W not symmetric, so a missing transpose
# shows; no upstream gradient is all ones, so an ignored one shows.
FIXED_POINT_CASES: list[tuple[int, float, int, list[float], list[float]]] = [
    (3, 0.8, 95, [0.3, -0.5, 0.2], [1.0, -2.0, 0.5]),
    (2, 0.7, 96, [-0.4, 0.9], [0.3, 1.5]),
]


def slow_contraction(n: int, norm: float, seed: int) -> np.ndarray:
    """norm times the rotation nearest the identity of a random orthogonal (n, n) matrix:
    every eigenvalue lies near `norm`, so the iterations converge slowly (hundreds of
    steps at norm = 0.97; a random matrix of that norm has smaller eigenvalues)."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(np.eye(n) + 0.2 * rng.normal(size=(n, n)))
    return norm * q * np.sign(np.diag(r))


def kept_bytes(value: Any, seen: set[int] | None = None, depth: int = 0) -> int:
    """The bytes of the distinct NumPy arrays reachable from `value` through Variables
    (their .data), lists, tuples, sets, dicts and the engine's saved-value wrappers."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 20:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, Variable):
        return kept_bytes(value.data, seen, depth + 1)
    if isinstance(value, dict):
        return sum(kept_bytes(item, seen, depth + 1) for item in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(kept_bytes(item, seen, depth + 1) for item in value)
    inner = getattr(value, "variable", None)  # a saved output or a packed value
    return kept_bytes(inner, seen, depth + 1) if inner is not None else 0


def ctx_bytes(ctx: Any) -> tuple[int, dict[str, int]]:
    """What a Function's node keeps: the bytes of the arrays reachable from the attributes
    forward set on ctx and from its saved values (each array once), and per attribute."""
    seen: set[int] = set()
    per_name = {
        name: kept_bytes(value, seen) for name, value in vars(ctx).items()
    }
    per_name["save_for_backward"] = kept_bytes(getattr(ctx, "_saved", None) or (), seen)
    return sum(per_name.values()), per_name


# The W on which the check measures what forward keeps: n = 4, hundreds of iterations.
SLOW_CASE: tuple[int, float, int, list[float]] = (4, 0.97, 91, [0.05, -0.03, 0.02, 0.04])


def _check_constant_memory(exercise: str, cls: type[Function]) -> None:
    """Fail when forward keeps on ctx memory that grows with the number of iterations:
    on a slowly converging W, more than a few arrays of the sizes of z*, a and W."""
    n, norm, seed, a_values = SLOW_CASE
    W = slow_contraction(n, norm, seed)
    _, iterations = solve_fixed_point(np.array(a_values), W)
    a = run.leaf(a_values)
    call = f"FixedPoint.apply(a, W) for a = {a_values}, W of shape {W.shape}, ||W||_2 = {norm}"
    out = run.one_output(exercise, run.apply(exercise, cls, (a, W.copy()), call, run.Spied()), call)
    if out.grad_fn is None:
        return  # the gradient checks above have already said what is wrong
    total, per_name = ctx_bytes(out.grad_fn)
    vector = 8 * n
    allowed = 8 * (3 * n * n + 10 * n)  # z*, a, W, s, a Jacobian, an inverse: no iterates
    if total <= allowed:
        return
    name, largest = max(per_name.items(), key=lambda item: item[1])
    where = "ctx.save_for_backward" if name == "save_for_backward" else f"ctx.{name}"
    held = largest // vector
    if abs(held - iterations) <= 2:
        said = f"forward kept all {iterations} iterates on ctx ({where} holds {held} vectors)"
    else:
        said = (
            f"forward kept {total} bytes on ctx, as much as {total // vector} vectors the size "
            f"of z*, for a fixed point found in {iterations} iterations ({where} holds "
            f"{largest} bytes)"
        )
    check.fail(
        exercise,
        f"{call}: {said}. Keep only z* (and W, a): the point of the implicit backward is "
        f"memory that does not grow with the iterations.",
    )


def _digits(array: np.ndarray) -> str:
    """Every entry with 12 significant digits."""
    return np.array2string(
        np.asarray(array, dtype=np.float64),
        separator=", ",
        formatter={"float_kind": lambda v: format(v, ".12g")},
    ).replace("\n", " ")


def _expect_close_or_near(
    exercise: str,
    what: str,
    got: Any,
    expected: np.ndarray,
    mistakes: dict[str, Any],
    near_hint: str,
    rtol: float,
    atol: float,
) -> None:
    """check.expect_close, except that a value off by little (within 1e-3 relative) and
    matching no mistake is shown with 12 digits, its largest difference, and near_hint:
    4 digits would print two equal-looking vectors."""
    got_array = check.as_array(exercise, what, got)
    near = (
        got_array.shape == expected.shape
        and not np.allclose(got_array, expected, rtol=rtol, atol=atol)
        and np.allclose(got_array, expected, rtol=1e-3, atol=1e-6)
        and not any(
            np.shape(wrong) == got_array.shape
            and np.allclose(got_array, wrong, rtol=rtol, atol=atol)
            for wrong in mistakes.values()
        )
    )
    if near:
        difference = np.abs(got_array - expected)
        allowed = atol + rtol * np.abs(expected)
        worst = np.unravel_index(np.argmax(difference / allowed), difference.shape)
        entry = ", ".join(str(int(i)) for i in worst)
        check.fail(
            exercise,
            f"{what} is {_digits(got_array)}, expected {_digits(expected)}: close but not "
            f"equal, the largest difference is {np.max(difference):.2e}; the check allows "
            f"{allowed[worst]:.1e} on entry {entry} (a relative "
            f"{rtol:g}). {near_hint}",
        )
    check.expect_close(exercise, what, got_array, expected, mistakes, rtol=rtol, atol=atol)


LOOSE_FORWARD = (
    "Is z* iterated only to a loose tolerance? Iterate until z stops changing "
    "(solve_fixed_point stops when no entry moves by 1e-12), or call solve_fixed_point."
)
LOOSE_ADJOINT = (
    "Does backward iterate u only to a loose tolerance (1e-4, 1e-6)? The gradient is only as "
    "exact as u: iterate until u stops changing (solve_fixed_point uses 1e-12), or solve the "
    "linear system (I - (∂f/∂z)^T) u = grad with np.linalg.solve."
)


def check_9_5(fixed_point: Any) -> None:
    """FixedPoint.apply(a, W) returns z* = tanh(W z* + a); its backward applies the implicit
    function theorem. Compared with closed forms, unrolled backprop and finite differences."""
    exercise = "9.5"
    cls = check.function_class(exercise, fixed_point, "FixedPoint", "ctx, grad")
    count_hint = (
        "forward has two inputs, a and W, so backward returns two values: the gradient for "
        "a, and None for W (a plain array takes no gradient): `return grad_a, None`."
    )
    for index, (n, norm, seed, a_values, upstream) in enumerate(FIXED_POINT_CASES):
        W = contraction(n, norm, seed)
        a_np, g_np = np.array(a_values), np.array(upstream)
        z_expected, iterations = solve_fixed_point(a_np, W)
        a = run.leaf(a_np)
        call = f"FixedPoint.apply(a, W) for a = {a_values}, W of shape {W.shape}"
        seen = run.Spied()
        out = run.one_output(exercise, run.apply(exercise, cls, (a, W.copy()), call, seen), call)
        one_step = np.tanh(a_np)
        _expect_close_or_near(
            exercise,
            f"the output of {call}",
            out,
            z_expected,
            {
                "that is tanh(W·0 + a), one step from z = 0: iterate z <- tanh(W z + a) until "
                "it stops moving (solve_fixed_point does).": one_step,
            },
            LOOSE_FORWARD,
            rtol=1e-8,
            atol=1e-10,
        )
        run.run_backward(
            exercise,
            out,
            g_np,
            seen,
            returns="grad_a, None",
            count_hint=count_hint,
            number_hint="backward returned a gradient for W, a plain array: return None for it.",
        )
        got = run.grad_of(exercise, a, "a")
        if index == 0:
            expected, mistakes = fixed_point_gradients(a_np, W, g_np)
            source = "the implicit function theorem"
        else:
            # The same gradient the long way: backprop through every recorded iteration.
            unrolled_a = run.leaf(a_np)
            z_unrolled, _ = unrolled_fixed_point(unrolled_a, W)
            (z_unrolled * Variable(g_np)).sum().backward()
            expected = unrolled_a.grad.data
            _, mistakes = fixed_point_gradients(a_np, W, g_np)
            source = f"backprop through all {iterations} iterations"
        _expect_close_or_near(
            exercise,
            f"a.grad for loss = sum(g * FixedPoint.apply(a, W)), g = {upstream} (expected from "
            f"{source})",
            got,
            expected,
            mistakes,
            LOOSE_ADJOINT,
            rtol=1e-6,
            atol=1e-9,
        )
    _check_constant_memory(exercise, cls)
    W = contraction(3, 0.8, 95)
    a = run.leaf([0.1, 0.7, -0.3])
    check.gradcheck_or_hint(
        exercise,
        lambda value: cls.apply(value, W),
        (a,),
        "lambda a: FixedPoint.apply(a, W), a of shape (3,), float64",
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 9.6


def run_hook_graph(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The graph of Exercise 9.6, run by the engine: h = x * x with a hook that records the
    gradient it receives and returns it clipped to [-1, 1];
    loss = sum(w * h) + 0.5 * sum(h * h) + sum(3 * x). Returns (received, x.grad)."""
    leaf = Variable(np.array(x, dtype=np.float64), requires_grad=True)
    h = leaf * leaf
    received = []

    def clip_and_record(grad: Variable) -> Variable:
        received.append(np.array(grad.data, dtype=np.float64))
        return grad.clamp(-1.0, 1.0)

    h.register_hook(clip_and_record)
    loss = (Variable(w) * h).sum() + 0.5 * (h * h).sum() + (3 * leaf).sum()
    loss.backward()
    return received[0], np.asarray(leaf.grad.data)


def hook_prediction(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference, by hand: the hook receives ∂loss/∂h = w + h (both uses of h summed),
    h passes clip(w + x², -1, 1) on to x * x, whose two edges give 2x, and the 3x term
    reaches x directly: x.grad = 2x clip(w + x², -1, 1) + 3."""
    received = w + x**2
    return received, 2 * x * np.clip(received, -1.0, 1.0) + 3.0


def hook_mistakes(x: np.ndarray, w: np.ndarray) -> tuple[dict, dict]:
    """What likely mistakes give for (received, x_grad)."""
    h = x**2
    total = w + h
    clipped = np.clip(total, -1.0, 1.0)
    received = {
        "that is what the hook returns (the clipped gradient): the hook receives the "
        "gradient before it clips it.": clipped,
        "that is w alone, the gradient from sum(w * h): h is used twice, and the hook "
        "receives the sum of both uses.": w,
        "that is h alone, the gradient from 0.5 * sum(h * h): h is used twice, and the hook "
        "receives the sum of both uses.": h,
        "that is w + 2h: the derivative of 0.5 * h² is h (the 0.5 cancels the 2).": w + 2 * h,
        "that is w + h + 3: sum(3 * x) depends on x directly, not through h, so it never "
        "reaches h's hook.": total + 3,
    }
    x_grad = {
        "that is 2x (w + h) + 3, the gradient without the hook: the hook's return value "
        "replaces h's gradient, so x receives the clipped one.": 2 * x * total + 3,
        "that is clip(w + h) + 3: the gradient still passes through h = x * x on its way to "
        "x, times ∂h/∂x = 2x.": clipped + 3,
        "that is x · clip(w + h) + 3: x * x uses x twice, and each edge sends x · grad, "
        "so x receives 2x · grad.": x * clipped + 3,
        "the 3 from sum(3 * x) is missing: that term reaches x directly, past h.": 2 * x
        * clipped,
        "each use of h was clipped on its own and then added: the hook runs once, on their "
        "sum.": 2 * x * (np.clip(w, -1, 1) + np.clip(h, -1, 1)) + 3,
        "that clips x.grad at the end: the hook clips the gradient reaching h, before the "
        "chain rule multiplies by 2x.": np.clip(2 * x * total + 3, -1.0, 1.0),
        "the 3 was clipped too: sum(3 * x) reaches x directly, past the hook on h.": 2 * x
        * clipped + 1,
    }
    return received, x_grad


# (x, w): entries clipped above, below, and not at all, and an x = 0 entry.
HOOK_CASES: list[tuple[list[float], list[float]]] = [
    ([1.0, -0.5, 2.0, 0.3], [-3.0, 0.5, -1.5, 0.2]),
    ([1.5, 0.0, -1.2], [0.0, -2.0, -0.5]),
]


def _two_arrays(exercise: str, what: str, result: Any) -> tuple[np.ndarray, np.ndarray]:
    """The (received, x_grad) pair an answer returns, or a hint about its shape."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        check.fail(
            exercise,
            f"{what} returned {check.with_article(result)}; return two arrays, "
            f"`return received, x_grad`.",
        )
    received, x_grad = result
    return (
        check.as_array(exercise, f"received from {what}", received),
        check.as_array(exercise, f"x_grad from {what}", x_grad),
    )


def check_9_6(predict: Any) -> None:
    """hook_prediction(x, w) returns, by hand in NumPy, what h's hook receives and x.grad."""
    exercise = "9.6"
    if not callable(predict):
        check.fail(exercise, f"hook_prediction should be a function; got "
                   f"{check.with_article(predict)}.")
    for x_values, w_values in HOOK_CASES:
        x, w = np.array(x_values), np.array(w_values)
        what = f"hook_prediction(x, w) for x = {x_values}, w = {w_values}"
        x_given, w_given = x.copy(), w.copy()
        result = check.call(exercise, what, predict, x_given, w_given)
        for name, given, original in (("x", x_given, x), ("w", w_given, w)):
            if not np.array_equal(given, original):
                check.fail(
                    exercise,
                    f"{what} changed the array {name} it was given, in place: {name} is now "
                    f"{given.tolist()}. Compute new arrays (`h = x**2`, `received = w + h`) "
                    f"instead of writing into x or w (`x **= 2`, `x += w`, `x[...] = ...`): "
                    f"the caller's arrays are not yours to change, and a later use of them "
                    f"would see other numbers.",
                )
        received, x_grad = _two_arrays(exercise, what, result)
        expected_received, expected_grad = hook_prediction(x, w)
        received_mistakes, grad_mistakes = hook_mistakes(x, w)
        check.expect_close(
            exercise, f"received from {what}", received, expected_received, received_mistakes
        )
        check.expect_close(exercise, f"x_grad from {what}", x_grad, expected_grad, grad_mistakes)
    check.passed(exercise)
