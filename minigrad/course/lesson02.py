"""Checks for lesson 02 (backward).

The checks build their own graphs and data, compute the expected answers with NumPy (or
by walking the graph themselves), and name the likely mistake when an answer is off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.course import check
from minigrad.course.raised import is_leaf_in_place_error, local_of

# --------------------------------------------------------------------------- Exercise 2.1

# The graph of Exercise 2.1: a = w * x, p = a ** 2, q = 3 * a + x, y = p * q.
X_21, W_21 = 2.0, 1.5
SLIPS_21 = (
    "only p",
    "only q",
    "2 not 2a",
    "1 not 3",
    "no direct",
    "swapped locals",
    "swapped bars",
)


def diamond_21(x: float, w: float, mistake: str | None = None) -> tuple[float, float]:
    """dy/dx and dy/dw of Exercise 2.1's graph; `mistake` gives what a known slip yields."""
    a = w * x
    p = a**2
    q = 3 * a + x
    grad_p, grad_q = q, p
    if mistake == "swapped bars":  # the product rule's factors the wrong way round
        grad_p, grad_q = p, q
    from_p = grad_p * 2 * a
    from_q = grad_q * (1 if mistake == "1 not 3" else 3)
    if mistake == "only p":
        from_q = 0.0
    elif mistake == "only q":
        from_p = 0.0
    elif mistake == "2 not 2a":
        from_p = grad_p * a
    grad_a = from_p + from_q
    direct = 0.0 if mistake == "no direct" else grad_q
    if mistake == "swapped locals":
        return grad_a * x + direct, grad_a * w
    return grad_a * w + direct, grad_a * x


def check_2_1(grad_x: Any, grad_w: Any) -> None:
    """dy/dx and dy/dw for a = w*x, p = a**2, q = 3a + x, y = p*q at x = 2, w = 1.5."""
    exercise = "2.1"
    if grad_x is None and grad_w is None:  # the cell's placeholders, still unchanged
        check.not_written(exercise)
    for name, value in (("grad_x", grad_x), ("grad_w", grad_w)):
        if value is None:
            check.fail(exercise, f"{name} is None: assign the number you worked out to it.")
    got_x = check.as_array(exercise, "grad_x", grad_x)
    got_w = check.as_array(exercise, "grad_w", grad_w)
    expected_x, expected_w = diamond_21(X_21, W_21)
    scalars = got_x.shape == () and got_w.shape == ()
    if scalars and np.allclose([got_x, got_w], [expected_w, expected_x]):
        check.fail(exercise, "grad_x and grad_w are swapped.")
    y_value = (W_21 * X_21) ** 2 * (3 * W_21 * X_21 + X_21)
    if scalars and np.allclose([got_x, got_w], [y_value, y_value]):
        check.fail(
            exercise,
            f"both are {y_value:g}, the value of y = p·q itself: start from ȳ = 1 and pass "
            f"gradients back (p̄ and q̄ first), not values forward.",
        )
    slip = {name: diamond_21(X_21, W_21, name) for name in SLIPS_21}
    branch = "`a` feeds both p and q, so its gradient is the sum of both contributions."
    only_p = f"only the path through p arrived at a: {branch} Did you forget q?"
    only_q = f"only the path through q arrived at a: {branch} Did you forget p?"
    two_a = "the local derivative of p = a**2 is 2a, not 2."
    three = "the local derivative of q = 3a + x with respect to a is 3, not 1."
    product = "p̄ and q̄ look swapped: for y = p·q, ∂y/∂p = q and ∂y/∂q = p, so p̄ = q and q̄ = p."
    mistakes_x = {
        "x reaches y along two paths, through a and directly into q; its gradient is the "
        "sum of both. Did you forget the direct edge x -> q?": slip["no direct"][0],
        only_p: slip["only p"][0],
        only_q: slip["only q"][0],
        two_a: slip["2 not 2a"][0],
        three: slip["1 not 3"][0],
        "the local derivative of a = w*x with respect to x is w (and with respect to w it "
        "is x); it looks like you swapped them.": slip["swapped locals"][0],
        product: slip["swapped bars"][0],
    }
    check.expect_close(exercise, "grad_x", got_x, expected_x, mistakes_x)
    mistakes_w = {
        only_p: slip["only p"][1],
        only_q: slip["only q"][1],
        two_a: slip["2 not 2a"][1],
        three: slip["1 not 3"][1],
        "the local derivative of a = w*x with respect to w is x, not w.": (
            slip["swapped locals"][1]
        ),
        product: slip["swapped bars"][1],
    }
    check.expect_close(exercise, "grad_w", got_w, expected_w, mistakes_w)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 2.2

CHAIN_LENGTH = 2000  # longer than Python's default recursion limit (1000)


def _graphs_22() -> list[tuple[str, Variable]]:
    """Graphs an order must handle: a + a (one consumer using a node twice), one operation,
    a diamond with a constant, a shortcut, and a chain longer than the recursion limit."""
    x = Variable(1.5, requires_grad=True)
    a = x * x
    a_plus_a = a + a

    w = Variable(0.5, requires_grad=True)
    b = w * x
    diamond = b * 3.0 + b.exp()

    # x is used first and last: reached early by a short path, and late by a long one.
    shortcut = (x * 2.0).tanh().sigmoid() + x

    # The smallest graph: one operation on one leaf (and a constant).
    single = x * 2.0

    chain = x
    for _ in range(CHAIN_LENGTH):
        chain = chain * 1.0
    return [
        ("a + a", a_plus_a),
        ("x * 2.0, one operation on one leaf", single),
        ("the diamond b*3 + exp(b)", diamond),
        ("the graph tanh(2x).sigmoid() + x", shortcut),
        (f"a chain of {CHAIN_LENGTH} multiplications", chain),
    ]


def _consumers(root: Any) -> dict[Any, list]:
    """For every node reachable from `root`, the nodes whose next_functions point at it."""
    consumers: dict[Any, list] = {root: []}
    stack = [root]
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            if next_node not in consumers:
                consumers[next_node] = []
                stack.append(next_node)
            consumers[next_node].append(node)
    return consumers


def check_2_2(backward_order: Callable[[Any], Any]) -> None:
    """backward_order(root) lists each node once, the root first, consumers before producers."""
    exercise = "2.2"
    if not callable(backward_order):
        check.fail(exercise, f"pass the function itself; got {check.with_article(backward_order)}.")
    recursion = (
        RecursionError,
        "Your function hit Python's recursion limit (about 1000 nested calls): walk the "
        "graph with a loop and an explicit stack (a list), not with recursion.",
    )
    for label, output in _graphs_22():
        root = output.grad_fn
        where = f"for {label}"
        order = check.call(
            exercise, f"{where}, backward_order(root)", backward_order, root, hints=[recursion]
        )
        _check_order(exercise, where, order, root)
    check.passed(exercise)


def _check_order(exercise: str, where: str, order: Any, root: Any) -> None:
    if order is None:
        check.fail(exercise, f"{where}, backward_order returned None: did you forget `return`?")
    if not isinstance(order, (list, tuple)):
        check.fail(exercise, f"{where}, return a list of nodes; got {check.with_article(order)}.")
    if any(node is None for node in order):
        check.fail(
            exercise,
            f"{where}, the list contains None: an input that takes no gradient (a constant) "
            f"has the entry (None, 0) in next_functions; skip those.",
        )
    if any(isinstance(node, Variable) for node in order):
        check.fail(
            exercise,
            f"{where}, the list contains Variables: list the nodes themselves (grad_fn and "
            f"the nodes in next_functions), not the values.",
        )
    consumers = _consumers(root)
    if not order or order[0] is not root:
        check.fail(exercise, f"{where}, the first node must be the output's node, {root!r}.")
    position: dict[Any, int] = {}
    for index, node in enumerate(order):
        if node in position:
            check.fail(
                exercise,
                f"{where}, {node!r} is listed twice (positions {position[node]} and {index}): "
                f"a node that is used twice (like `a` in `a + a`, or `x` in `x * x`) must still "
                f"run once. Keep a set of the nodes you have already met.",
            )
        if node not in consumers:
            check.fail(exercise, f"{where}, {node!r} at position {index} is not in this graph.")
        position[node] = index
    missing = [node for node in consumers if node not in position]
    if missing:
        check.fail(
            exercise,
            f"{where}, {len(missing)} node(s) are missing, e.g. {missing[0]!r}: follow every "
            f"entry of next_functions, the AccumulateGrad nodes of the leaves included.",
        )
    for node in order:
        for consumer in consumers[node]:
            if position[consumer] > position[node]:
                check.fail(
                    exercise,
                    f"{where}, {node!r} (position {position[node]}) comes before "
                    f"{consumer!r} (position {position[consumer]}), which consumes its "
                    f"output: a node may run only after all its consumers. Being reached "
                    f"first is not enough (a short path can reach a node before a long one "
                    f"has finished): count each node's consumers and list it when the last "
                    f"one is done.",
                )


# --------------------------------------------------------------------------- Exercise 2.3


def fit_slope_numpy(
    xs: np.ndarray,
    ys: np.ndarray,
    lr: float,
    steps: int,
    mistake: str | None = None,
    leftover: float = 0.0,
) -> float:
    """Gradient descent on mean((w*x - y)**2) from w = 0, or what a known slip gives.

    `leftover` is a gradient w.grad held before the call: a right loop never uses it, a
    loop that never resets adds it to every step, and one that resets only after the
    update ("reset after") adds it to the first step."""
    w, total = 0.0, leftover
    for step in range(steps):
        g = float(np.mean(2 * (w * xs - ys) * xs))
        total += g
        if mistake == "no zero":
            w -= lr * total
        elif mistake == "reset after":
            w -= lr * (g + (leftover if step == 0 else 0.0))
        elif mistake == "ascent":
            w += lr * g
        elif mistake == "sum":  # the loss summed over the samples instead of averaged
            w -= lr * g * len(xs)
        else:
            w -= lr * g
    return w


def _datasets_23() -> list[tuple[np.ndarray, np.ndarray, float, int]]:
    """(xs, ys, lr, steps) for the check; the last takes a single step, the boundary where
    a forgotten reset makes no difference yet and an off-by-one loop takes none."""
    rng = np.random.default_rng(23)
    first_x = rng.normal(size=8)
    second_x = rng.uniform(-2.0, 2.0, size=12)
    third_x = rng.normal(size=5)
    return [
        (first_x, 3.0 * first_x + 0.1 * rng.normal(size=8), 0.1, 6),
        (second_x, -1.5 * second_x + 0.2 * rng.normal(size=12), 0.05, 9),
        (third_x, 2.0 * third_x, 0.2, 1),
    ]


# A w that arrives holding a gradient from earlier work: (xs, ys, lr, steps, that gradient).
def _leftover_23() -> tuple[np.ndarray, np.ndarray, float, int, float]:
    """The check's last case: each step, the first included, must use its own gradient."""
    xs = np.random.default_rng(231).normal(size=6)
    return xs, 1.5 * xs, 0.1, 3, 2.0


def check_2_3(fit_slope: Callable[..., Any]) -> None:
    """fit_slope(w, xs, ys, lr, steps) runs gradient descent, updating the leaf w in place."""
    exercise = "2.3"
    if not callable(fit_slope):
        check.fail(exercise, f"pass the function itself; got {check.with_article(fit_slope)}.")
    cases = [(*data, None) for data in _datasets_23()] + [_leftover_23()]
    for xs, ys, lr, steps, leftover in cases:
        w = Variable(0.0, requires_grad=True)
        if leftover is not None:  # a gradient from before the call, still on w.grad
            w.grad = Variable(leftover)
        check.call(
            exercise,
            "fit_slope(w, xs, ys, lr, steps)",
            fit_slope,
            w,
            Variable(xs),
            Variable(ys),
            lr,
            steps,
            hints=_fit_slope_hints(w, fit_slope),
        )
        what = f"w after {steps} steps (lr={lr})"
        if leftover is not None:
            what = f"w after {steps} steps (lr={lr}, w.grad = {leftover:g} on entry)"
        if not w.is_leaf:
            check.fail(exercise, f"{what} is no longer a leaf: change w.data, not w itself.")
        got = check.as_array(exercise, what, w)
        if got.shape == () and float(got) == 0.0:
            check.fail(
                exercise,
                f"{what} is still 0, so w never moved: update the caller's w in place (w.data "
                f"-= lr * w.grad.data); `w = w - ...` makes a new Variable and leaves the "
                f"caller's w as it was. (A gradient reset to zero before the update reads it, "
                f"or a loop that runs no step, leaves w at 0 too.)",
            )
        extra = 0.0 if leftover is None else leftover
        mistakes = {
            "did you forget to zero .grad between steps? backward() adds into w.grad, so "
            "step k moved w by the sum of the first k gradients.": fit_slope_numpy(
                xs, ys, lr, steps, "no zero", extra
            ),
            "w moved uphill: subtract lr * grad (gradient descent), do not add it.": (
                fit_slope_numpy(xs, ys, lr, steps, "ascent")
            ),
            f"that is where w is after {steps - 1} steps: is one step missing?": (
                fit_slope_numpy(xs, ys, lr, steps - 1)
            ),
            f"that is where w is after {steps + 1} steps: is there one step too many?": (
                fit_slope_numpy(xs, ys, lr, steps + 1)
            ),
            "that is the step of a loss summed over the samples, len(xs) times too big: the "
            "loss is their mean, ((w * xs - ys) ** 2).mean().": fit_slope_numpy(
                xs, ys, lr, steps, "sum"
            ),
        }
        if leftover is not None:
            mistakes[
                "the gradient w held before the call went into the first step: the reset "
                "comes after the update, so step 1 used it too. Reset w.grad before each "
                "backward() (`w.grad = None`), not after the update."
            ] = fit_slope_numpy(xs, ys, lr, steps, "reset after", leftover)
        expected = fit_slope_numpy(xs, ys, lr, steps)
        check.expect_close(exercise, what, got, expected, mistakes, rtol=1e-6, atol=1e-9)
    check.passed(exercise)


def _fit_slope_hints(w: Variable, fit_slope: Callable) -> list[check.HintRule]:
    """Hints for the errors fit_slope raises most often; `w` is the leaf it was given.

    They read the error's type and fields and the state of the Variables (the caller's w,
    and the local `w` inside fit_slope when it failed), never the error's wording."""

    def about_none(error: BaseException) -> str | None:
        on_none = isinstance(error, AttributeError) and error.name is not None
        if not ((on_none and error.obj is None) or isinstance(error, TypeError)):
            return None
        inside = local_of(error, fit_slope, "w")
        if isinstance(inside, Variable) and inside is not w:
            return (
                "Here w inside fit_slope is no longer the leaf you were given: did you replace "
                "it with a new Variable (`w = w - ...`)? That one is not a leaf, so backward() "
                "leaves its .grad None. Change w.data in place instead."
            )
        if w.grad is None:
            return (
                "Before the first backward(), w.grad is None, so there is nothing to zero: "
                "reset it with `w.grad = None` before each backward(), or zero it only when "
                "it is not None."
            )
        return None

    def in_place(error: BaseException) -> str | None:
        if not is_leaf_in_place_error(error):
            return None
        return (
            "Do the update under `with minigrad.no_grad():`, or change the data alone: "
            "`w.data -= lr * w.grad.data`."
        )

    return [about_none, in_place]


# --------------------------------------------------------------------------- Exercise 2.4


def check_2_4(derivative: Callable[[Callable, Variable], Any]) -> None:
    """derivative(f, x) returns df/dx with minigrad.grad, leaving every .grad untouched."""
    exercise = "2.4"
    if not callable(derivative):
        check.fail(exercise, f"pass the function itself; got {check.with_article(derivative)}.")
    weight_value = 2.0
    marker = 0.25  # w.grad holds this before the calls: it must still hold it after

    def cubic(x: Variable) -> Variable:
        return w * x**3 + x.tanh()

    def square_sum(x: Variable) -> Variable:
        return (w * x * x).sum()

    w = Variable(weight_value, requires_grad=True)
    w.grad = Variable(marker)

    x = Variable(0.5, requires_grad=True)
    expected = 3 * weight_value * 0.5**2 + 1 - np.tanh(0.5) ** 2
    calls = 3
    answers = [_derivative_of(exercise, derivative, cubic, x) for _ in range(calls)]
    for number, answer in enumerate(answers, start=1):
        what = f"call {number} of derivative(f, x) on the same x (f(x) = w*x**3 + tanh(x))"
        value = weight_value * 0.5**3 + np.tanh(0.5)
        mistakes = {"that is f(x), the value: return the derivative.": value}
        if number > 1:
            mistakes[
                f"it is exactly {number} times the expected value: backward() adds into "
                f"x.grad at every call, so call {number} returns the sum of {number} "
                f"gradients. minigrad.grad returns the gradient without storing it."
            ] = number * expected
        check.expect_close(exercise, what, answer, expected, mistakes)
    _expect_untouched(exercise, x, "x")
    if w.grad is None or not np.allclose(w.grad.data, marker):
        check.fail(
            exercise,
            "w.grad (a weight inside f) was changed: backward() writes into the .grad of "
            "every leaf of the graph, not only x's. minigrad.grad(f(x), x) returns the "
            "gradient and leaves every .grad alone.",
        )

    vector = np.array([1.0, 0.0, -2.0])  # 0: an edge where the derivative is 0 too
    x = Variable(vector, requires_grad=True)
    answer = _derivative_of(exercise, derivative, square_sum, x)
    what = "derivative(f, x) for f(x) = (w * x * x).sum() with x of shape (3,)"
    check.expect_close(exercise, what, answer, 2 * weight_value * vector)
    _expect_untouched(exercise, x, "x")
    check.passed(exercise)


def _derivative_of(exercise: str, derivative: Callable, f: Callable, x: Variable) -> Any:
    answer = check.call(exercise, "derivative(f, x)", derivative, f, x)
    if isinstance(answer, tuple):
        check.fail(
            exercise,
            f"derivative returned a tuple of {len(answer)}: minigrad.grad returns one "
            f"gradient per input, in a tuple; return its element [0].",
        )
    return answer


def _expect_untouched(exercise: str, x: Variable, name: str) -> None:
    if x.grad is not None:
        check.fail(
            exercise,
            f"{name}.grad is set after derivative(f, {name}): did you call backward()? "
            f"minigrad.grad(f(x), x) returns the gradient without writing {name}.grad.",
        )
