"""Checks for lesson 06 (GradFactor and differentiable logic gate networks).

Each check calls the learner's Function or function on inputs of its own, compares with
values computed here with NumPy, and runs `minigrad.gradcheck` where the backward is meant
to be the true derivative (for GradFactor that is only the case at f = 1).
"""

from __future__ import annotations

import dis
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.course import check
from minigrad.course.check import CheckError
from minigrad.course.lesson03 import (
    _apply,
    _backward,
    _grad_of,
    _gradcheck,
    _leaf,
)
from minigrad.variable import Variable

# Row i: relaxed gate i = c0 + c1·a + c2·b + c3·a·b, in torchlogix's order of the 16 gates.
GATE_COEFFICIENTS = np.array(
    [
        [0, 0, 0, 0],  # FALSE
        [0, 0, 0, 1],  # AND
        [0, 1, 0, -1],  # A AND NOT B
        [0, 1, 0, 0],  # A
        [0, 0, 1, -1],  # NOT A AND B
        [0, 0, 1, 0],  # B
        [0, 1, 1, -2],  # XOR
        [0, 1, 1, -1],  # OR
        [1, -1, -1, 1],  # NOR
        [1, -1, -1, 2],  # XNOR
        [1, 0, -1, 0],  # NOT B
        [1, 0, -1, 1],  # A OR NOT B
        [1, -1, 0, 0],  # NOT A
        [1, -1, 0, 1],  # NOT A OR B
        [1, 0, 0, -1],  # NAND
        [1, 0, 0, 0],  # TRUE
    ],
    dtype=np.float64,
)


def relaxed_gates_numpy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 16 relaxed gates of a and b, stacked on a new last axis (NumPy, no graph)."""
    basis = np.stack([np.ones_like(a), a, b, a * b], axis=-1)
    return basis @ GATE_COEFFICIENTS.T


def _run_backward(
    exercise: str,
    output: Variable,
    upstream: np.ndarray,
    count_hint: str,
    number_hint: str,
    returned: list | None = None,
) -> None:
    """lesson03's backward runner, with hints for reading f from the wrong place."""
    try:
        _backward(exercise, output, upstream, count_hint, number_hint, returned, "grad_x, None")
    except CheckError as error:
        text = str(error)
        reason = text.split(": ", 1)[1].rstrip(".")
        if "raised NameError" in text:
            check.fail(
                exercise,
                f"{reason}. backward cannot see forward's arguments: keep f "
                f"on ctx in forward (`ctx.f = f`) and read `ctx.f` in backward.",
            )
        if "got shape ()" in text and "index 0" in text:
            check.fail(
                exercise,
                "backward returned a single number as the gradient for x, which must have "
                "x's shape: did you forget grad_output? Return `grad_output * ctx.f`.",
            )
        if "raised AttributeError" in text and "BackwardNode" in text:
            check.fail(
                exercise,
                f"{reason}. backward reads an attribute that forward never "
                f"set on ctx: store f in forward with `ctx.f = f` (the same name in both).",
            )
        raise


def _numbers_read_from_globals(fn: Any) -> list[str]:
    """Names of global variables holding numbers that `fn`'s code reads."""
    function = getattr(fn, "__func__", fn)
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    scope = getattr(function, "__globals__", {})
    names = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            name = str(instruction.argval).removeprefix("NULL + ").removesuffix(" + NULL")
            value = scope.get(name)
            if isinstance(value, numbers.Number) and not isinstance(value, bool):
                names.append(name)
    return names


def _constant_ratio(got: np.ndarray, upstream: np.ndarray) -> float | None:
    """c when got == c · upstream everywhere, else None."""
    ratio = got / upstream
    if np.allclose(ratio, ratio.flat[0]):
        return float(ratio.flat[0])
    return None


# --------------------------------------------------------------------------- Exercise 6.1


GRAD_FACTOR_CASES = (
    ([[0.4, -1.3, 2.0], [0.7, 0.1, -0.6]], 3.0, [[1.0, -0.5, 2.0], [0.25, -1.5, 0.8]]),
    ([1.5, -0.2, 0.9, -2.4], 0.5, [0.3, 1.2, -0.7, 2.0]),
    ([[-0.8], [1.1]], -2.0, [[1.5], [-0.4]]),
)


def check_6_1(grad_factor: Any) -> None:
    """MyGradFactor: identity forward; backward returns (f · grad_output, None)."""
    exercise = "6.1"
    name = "MyGradFactor"
    cls = check.function_class(exercise, grad_factor, name)
    call = f"{name}.apply(x, f)"
    count_hint = (
        "forward has two inputs, x and f, so backward returns two values: the scaled "
        "gradient for x, then None for f (`return grad_output * ctx.f, None`)."
    )
    number_hint = (
        "backward returned a gradient for f, which is a plain number and not a Variable: "
        "return None in its place (`return grad_output * ctx.f, None`)."
    )
    for values, f, upstream in GRAD_FACTOR_CASES:
        x_data, g = np.array(values), np.array(upstream)
        x = _leaf(x_data)
        returned: list = []
        y = _apply(exercise, cls, (x, f), call, returned)
        forward_mistakes = {
            "that is f · x: forward must return x unchanged; only backward scales, and only "
            "the gradient.": f * x_data,
            "that is x / f: forward must return x unchanged; only backward scales.": x_data / f,
        }
        check.expect_close(exercise, f"{call} with f = {f}", y, x_data, forward_mistakes)
        _run_backward(exercise, y, g, count_hint, number_hint, returned)
        got = _grad_of(exercise, x, "x")
        backward_mistakes = {
            "that is grad_output / f: multiply by f, do not divide.": g / f,
            "that is f alone, without grad_output: multiply the gradient backward receives "
            "by f (`grad_output * ctx.f`).": np.full_like(g, f),
            "that is grad_output unchanged: backward must multiply it by f.": g,
            "that is f² · grad_output: scale once, in backward only.": f * f * g,
        }
        expected = f * g
        if not np.allclose(got, expected) and got.shape == g.shape:
            ratio = _constant_ratio(got, g)
            known = [f, 1 / f, 1.0, f * f]
            if ratio is not None and not any(np.isclose(ratio, k) for k in known):
                read = _numbers_read_from_globals(cls.backward)
                where = (
                    f"backward reads the global variable {', '.join(map(repr, read))}"
                    if read
                    else "backward does not use the f given to apply"
                )
                check.fail(
                    exercise,
                    f"with f = {f} x.grad is {ratio:.4g} · grad_output: {where}. Keep the f "
                    f"of each call on its ctx in forward (`ctx.f = f`) and read `ctx.f` in "
                    f"backward.",
                )
        check.expect_close(exercise, f"x.grad with f = {f}", got, expected, backward_mistakes)

    # Two calls with different factors before either backward: each must keep its own f.
    x1, x2 = _leaf([0.3, -0.9]), _leaf([1.2, 0.4])
    y1 = _apply(exercise, cls, (x1, 2.0), call)
    y2 = _apply(exercise, cls, (x2, 5.0), call)
    g = np.array([1.0, -2.0])
    _run_backward(exercise, y1, g, count_hint, number_hint)
    _run_backward(exercise, y2, g, count_hint, number_hint)
    first = _grad_of(exercise, x1, "x")
    if np.allclose(first, 5.0 * g):
        check.fail(
            exercise,
            "after MyGradFactor.apply(x1, 2.0) and MyGradFactor.apply(x2, 5.0), the gradient "
            "for x1 was scaled by 5.0, the f of the later call: f must live on each call's "
            "own ctx (`ctx.f = f`), not on the class or in a global variable.",
        )
    check.expect_close(exercise, "x1.grad (f = 2.0)", first, 2.0 * g)
    check.expect_close(exercise, "x2.grad (f = 5.0)", _grad_of(exercise, x2, "x"), 5.0 * g)

    # Inside a bigger expression: loss = sum((w · GF(3x, f))²), f = 4.
    x = _leaf([0.5, -1.0, 2.0])
    w = _leaf([1.5, 0.2, -0.7])
    h = x * 3.0
    v = _apply(exercise, cls, (h, 4.0), call)
    _run_backward(exercise, (w * v) ** 2, np.ones(3), count_hint, number_hint)
    v_data = 3.0 * x.data
    check.expect_close(
        exercise,
        "w.grad in sum((w · MyGradFactor.apply(3x, 4))²)",
        _grad_of(exercise, w, "w"),
        2 * w.data * v_data**2,
        {
            "w comes after the factor, so its gradient must not be scaled: scale only the "
            "gradient returned for x.": 4 * 2 * w.data * v_data**2,
        },
    )
    check.expect_close(
        exercise,
        "x.grad in sum((w · MyGradFactor.apply(3x, 4))²)",
        _grad_of(exercise, x, "x"),
        4.0 * 3.0 * 2 * w.data**2 * v_data,
    )
    _gradcheck(
        exercise,
        lambda v: cls.apply(v, 1.0),
        (_leaf([0.2, -1.4, 0.8]),),
        "lambda x: MyGradFactor.apply(x, 1.0), x",
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 6.2


def check_6_2(relaxed_xor: Any) -> None:
    """RelaxedXor(a, b) = a + b - 2ab with backward (g·(1 - 2b), g·(1 - 2a))."""
    exercise = "6.2"
    name = "RelaxedXor"
    cls = check.function_class(exercise, relaxed_xor, name)
    call = f"{name}.apply(a, b)"
    count_hint = "forward has two inputs, a and b, so backward returns (grad_a, grad_b)."
    number_hint = "backward returned a gradient for an input that is not a Variable."
    rng = np.random.default_rng(61)

    # Same shapes: the values tell the formulas apart.
    a_data, b_data = rng.uniform(0.05, 0.95, 5), rng.uniform(0.05, 0.95, 5)
    g = rng.normal(size=5)
    a, b = _leaf(a_data), _leaf(b_data)
    returned: list = []
    y = _apply(exercise, cls, (a, b), call, returned)
    xor = a_data + b_data - 2 * a_data * b_data
    forward_mistakes = {
        "that is OR, a + b - ab: XOR subtracts the product twice, a + b - 2ab.": (
            a_data + b_data - a_data * b_data
        ),
        "that is AND, a·b: XOR is a + b - 2ab.": a_data * b_data,
        "that is XNOR, 1 - (a + b - 2ab): drop the `1 -`.": 1 - xor,
        "that is a + b - 2: the product a·b is missing in the last term.": a_data + b_data - 2,
    }
    check.expect_close(exercise, call, y, xor, forward_mistakes)
    _backward(exercise, y, g, count_hint, number_hint, returned, "grad_a, grad_b")
    grad_a, grad_b = _grad_of(exercise, a, "a"), _grad_of(exercise, b, "b")
    expected_a, expected_b = g * (1 - 2 * b_data), g * (1 - 2 * a_data)
    for got, expected, this, other, other_data in (
        (grad_a, expected_a, "a", "b", b_data),
        (grad_b, expected_b, "b", "a", a_data),
    ):
        this_data = a_data if this == "a" else b_data
        mistakes = {
            f"that is (1 - 2{this})·grad_output: the partials are swapped. d(a + b - 2ab)/d{this} "
            f"= 1 - 2{other}: the derivative of -2ab with respect to {this} leaves the other "
            f"input. (Or backward returned (grad_b, grad_a); keep forward's order.)": g
            * (1 - 2 * this_data),
            f"that is grad_output alone: the -2{other} from the term -2ab is missing, "
            f"d/d{this} = 1 - 2{other}.": g,
            f"that is (1 - 2{other}) without grad_output: multiply by the gradient backward "
            f"receives.": 1 - 2 * other_data,
            f"that is (1 - {other})·grad_output, the slope of OR: XOR's product term is -2ab, "
            f"so the slope is 1 - 2{other}.": g * (1 - other_data),
            f"that is -2{other}·grad_output: the 1 from d{this}/d{this} is missing.": (
                -2 * g * other_data
            ),
            f"that is (2{other} - 1)·grad_output: the sign is flipped, d/d{this} = 1 - 2{other}.": (
                g * (2 * other_data - 1)
            ),
        }
        check.expect_close(exercise, f"{this}.grad", got, expected, mistakes)

    # Broadcasting: a (3, 1) against b (4,) gives a (3, 4) output.
    a_data, b_data = rng.uniform(0.05, 0.95, (3, 1)), rng.uniform(0.05, 0.95, 4)
    g = rng.normal(size=(3, 4))
    a, b = _leaf(a_data), _leaf(b_data)
    returned = []
    y = _apply(
        exercise, cls, (a, b), f"{call} with a of shape (3, 1) and b of shape (4,)", returned
    )
    check.expect_close(
        exercise, f"{call} with shapes (3, 1) and (4,)", y, a_data + b_data - 2 * a_data * b_data
    )
    try:
        _backward(exercise, y, g, count_hint, number_hint, returned, "grad_a, grad_b")
    except CheckError as error:
        if "wrong shape" not in str(error):
            raise
        check.fail(
            exercise,
            "with a of shape (3, 1) and b of shape (4,), the output and grad_output have shape "
            "(3, 4), and backward returned a gradient of another shape. Return the full (3, 4) "
            "products grad_output·(1 - 2b) and grad_output·(1 - 2a): apply sums each back to "
            f"its input's shape. Or sum over the broadcast axes yourself, keeping dims. {error}",
        )
    full_a, full_b = g * (1 - 2 * b_data), g * (1 - 2 * a_data)
    check.expect_close(
        exercise,
        "a.grad with shapes (3, 1) and (4,)",
        _grad_of(exercise, a, "a"),
        full_a.sum(axis=1, keepdims=True),
        {
            "that is the mean over the broadcast axis: gradients from every column add "
            "up, so sum them (or let apply do it).": full_a.mean(axis=1, keepdims=True)
        },
    )
    check.expect_close(
        exercise,
        "b.grad with shapes (3, 1) and (4,)",
        _grad_of(exercise, b, "b"),
        full_b.sum(axis=0),
        {
            "that is the mean over the broadcast axis: gradients from every row add "
            "up, so sum them (or let apply do it).": full_b.mean(axis=0)
        },
    )
    inputs = (_leaf([0.2, 0.7, 0.45]), _leaf([0.9, 0.3, 0.6]))
    _gradcheck(exercise, cls.apply, inputs, "RelaxedXor.apply, (a, b)")
    inputs = (_leaf([[0.15], [0.8]]), _leaf([0.35, 0.55, 0.9]))
    _gradcheck(exercise, cls.apply, inputs, "RelaxedXor.apply, a (2, 1) and b (3,)")
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 6.3


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max())
    return shifted / shifted.sum()


def _call_neuron(exercise: str, fn: Callable[..., Any], a: Any, b: Any, logits: Any) -> Variable:
    call = "neuron_output(a, b, logits)"
    output = check.call(exercise, call, fn, a, b, logits)
    if not isinstance(output, Variable):
        check.fail(
            exercise,
            f"{call} returned {check.with_article(output)}, not a Variable: compute with "
            f"minigrad operations (relaxed_gates, minigrad.softmax, *, .sum) so the graph is "
            f"recorded.",
        )
    return output


NEURON_CASES = ((6, 62), (3, 63))  # (batch, seed)


def check_6_3(neuron_output: Any) -> None:
    """neuron_output(a, b, logits) = sum_i softmax(logits)_i · gate_i(a, b), shape (batch,)."""
    exercise = "6.3"
    if isinstance(neuron_output, type):
        check.fail(
            exercise,
            "neuron_output should be a function, `def neuron_output(a, b, logits):`, not a class.",
        )
    if not callable(neuron_output):
        check.fail(
            exercise,
            f"neuron_output should be a function, `def neuron_output(a, b, logits):`; got "
            f"an object of type {type(neuron_output).__name__}.",
        )
    for batch, seed in NEURON_CASES:
        rng = np.random.default_rng(seed)
        a_data, b_data = rng.uniform(0.05, 0.95, batch), rng.uniform(0.05, 0.95, batch)
        z = rng.normal(size=16)
        g = rng.normal(size=batch)
        a, b, logits = _leaf(a_data), _leaf(b_data), _leaf(z)
        out = _call_neuron(exercise, neuron_output, a, b, logits)

        gates = relaxed_gates_numpy(a_data, b_data)  # (batch, 16)
        weights = _softmax(z)
        expected = gates @ weights
        shape = tuple(out.shape)
        if shape == (batch, 16):
            check.fail(
                exercise,
                f"the result has shape {shape}, one value per gate: add up the weighted gates "
                f"over the last axis, `.sum(-1)`, to get one output per row, shape ({batch},).",
            )
        if shape == (16,):
            check.fail(
                exercise,
                "the result has shape (16,): you summed over the rows (the batch). Sum over "
                f"the gates, the last axis, `.sum(-1)`, to keep one output per row ({batch},).",
            )
        if shape in ((), (1,)):
            check.fail(
                exercise,
                f"the result has shape {shape}: you summed everything. Sum over the gates only, "
                f"`.sum(-1)`, to keep one output per row, shape ({batch},).",
            )
        mistakes = {
            "you weighted the gates by the raw logits: turn them into weights that are "
            "positive and add up to 1 with minigrad.softmax(logits, dim=-1).": gates @ z,
            "you weighted the gates by exp(logits) without dividing by their sum: softmax "
            "normalises, minigrad.softmax(logits, dim=-1).": gates @ np.exp(z),
            "that is the plain average of the 16 gates: weight each gate by its softmax "
            "weight, which the logits decide.": gates.mean(axis=1),
            "that is only the most likely gate (the hardened neuron): training needs the "
            "whole softmax mix, sum_i w_i · gate_i.": gates[:, int(np.argmax(z))],
            "a and b are swapped: the gates are not symmetric (A AND NOT B differs from NOT A "
            "AND B), so pass them in order, relaxed_gates(a, b).": (
                relaxed_gates_numpy(b_data, a_data) @ weights
            ),
        }
        check.expect_close(exercise, f"neuron_output with batch {batch}", out, expected, mistakes)
        if out.grad_fn is None:
            check.fail(
                exercise,
                "the output has no grad_fn: it was computed outside the graph (on .data or "
                "NumPy arrays). Use relaxed_gates and minigrad.softmax on the Variables.",
            )
        out.backward(Variable(g))
        for leaf, what in ((logits, "logits"), (a, "a")):
            if leaf.grad is None:
                check.fail(
                    exercise,
                    f"{what}.grad is None after backward: {what} did not take part in the "
                    f"graph. Compute with the Variables themselves, not their .data.",
                )
        # d out_n / d z_j = w_j (gate_nj - out_n);  d out_n / d a_n = sum_j w_j (c1_j + c3_j b_n)
        expected_logits = weights * ((gates - expected[:, None]) * g[:, None]).sum(axis=0)
        slopes = GATE_COEFFICIENTS[:, 1] + GATE_COEFFICIENTS[:, 3] * b_data[:, None]
        expected_a = g * (slopes @ weights)
        check.expect_close(exercise, "logits.grad", logits.grad, expected_logits)
        check.expect_close(exercise, "a.grad", a.grad, expected_a)
    inputs = (_leaf([0.3, 0.8]), _leaf([0.6, 0.1]), _leaf(np.linspace(-1.0, 1.0, 16)))
    _gradcheck(exercise, neuron_output, inputs, "neuron_output, (a, b, logits)")
    check.passed(exercise)


__all__ = [
    "GATE_COEFFICIENTS",
    "check_6_1",
    "check_6_2",
    "check_6_3",
    "relaxed_gates_numpy",
]
