"""Checks for lesson 06 (GradFactor and differentiable logic gate networks).

Each check calls the learner's Function or function on inputs of its own, compares with
values computed here with NumPy, and runs `minigrad.gradcheck` where the backward is meant
to be the true derivative (for GradFactor that is only the case at f = 1). Exercise 6.2
asks for the backward of a relaxed gate whose derivatives the lesson does not give; its
check names the usual slips in deriving them (a flipped sign, a lost constant, swapped
partials). Errors are told apart by type and fields (minigrad.course.function_checks).
"""

from __future__ import annotations

import dis
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.errors import GradientShapeError
from minigrad.core.variable import Variable
from minigrad.course import check
from minigrad.course import function_checks as run
from minigrad.course.function_checks import grad_of, leaf

# Row i: relaxed gate i = c0 + c1·a + c2·b + c3·a·b, in torchlogix's order of the 16 gates
# (ID_TO_OP in torchlogix/functional.py, the order of difflogic).
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


def _numbers_read_from_globals(fn: Any) -> list[str]:
    """Names of global variables holding numbers that `fn`'s code reads."""
    function = getattr(fn, "__func__", fn)
    function = getattr(function, "__wrapped__", function)
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


def _gradcheck(exercise: str, fn: Callable[..., Any], inputs: tuple, call: str) -> None:
    check.gradcheck_or_hint(exercise, fn, inputs, call)


# --------------------------------------------------------------------------- Exercise 6.1


GRAD_FACTOR_CASES = (
    ([[0.4, -1.3, 2.0], [0.7, 0.1, -0.6]], 3.0, [[1.0, -0.5, 2.0], [0.25, -1.5, 0.8]]),
    ([1.5, -0.2, 0.9, -2.4], 0.5, [0.3, 1.2, -0.7, 2.0]),
    ([[-0.8], [1.1]], -2.0, [[1.5], [-0.4]]),
    # f = 0: no gradient at all reaches x (x.grad is zeros, not None); x holds a 0 too.
    ([0.0, 2.5], 0.0, [1.0, -3.0]),
)
F_NOT_ON_CTX = (
    "backward cannot see forward's arguments: keep f on ctx in forward (`ctx.f = f`) and "
    "read `ctx.f` in backward."
)


def _grad_factor_backward(exercise: str, output: Variable, upstream: Any, seen: run.Spied) -> None:
    def shape_hint(error: GradientShapeError) -> str:
        if error.index == 0 and tuple(error.got) == ():
            return (
                "A single number as the gradient for x: did you forget grad_output? "
                "Return `grad_output * ctx.f`."
            )
        return "The gradient for x has x's shape: grad_output times the number f."

    run.run_backward(
        exercise,
        output,
        upstream,
        seen,
        returns="grad_x, None",
        count_hint=(
            "forward has two inputs, x and f, so backward returns two values: the scaled "
            "gradient for x, then None for f."
        ),
        number_hint=(
            "backward returned a gradient for f, which is a plain number and not a Variable: "
            "return None in its place."
        ),
        shape_hint=shape_hint,
        hints=[(NameError, F_NOT_ON_CTX)],
    )


def check_6_1(grad_factor: Any) -> None:
    """MyGradFactor: identity forward; backward returns (f · grad_output, None)."""
    exercise = "6.1"
    name = "MyGradFactor"
    cls = check.function_class(exercise, grad_factor, name)
    call = f"{name}.apply(x, f)"
    seen = run.Spied()
    for values, f, upstream in GRAD_FACTOR_CASES:
        x_data, g = np.array(values), np.array(upstream)
        x = leaf(x_data)
        y = run.one_output(exercise, run.apply(exercise, cls, (x, f), call, seen), call)
        forward_mistakes = {
            "that is f · x: forward must return x unchanged; only backward scales, and only "
            "the gradient.": f * x_data,
        }
        if f != 0:
            forward_mistakes[
                "that is x / f: forward must return x unchanged; only backward scales."
            ] = x_data / f
        check.expect_close(exercise, f"{call} with f = {f}", y, x_data, forward_mistakes)
        _grad_factor_backward(exercise, y, g, seen)
        if f == 0 and x.grad is None:
            check.fail(
                exercise,
                "with f = 0, x.grad is None after backward: return the gradient grad_output "
                "* f (zeros) for x whatever f is; None means 'no gradient', which the engine "
                "only accepts for inputs that do not require grad.",
            )
        got = grad_of(exercise, x, "x")
        backward_mistakes = {
            "that is f alone, without grad_output: multiply the gradient backward receives "
            "by f.": np.full_like(g, f),
            "that is grad_output unchanged: backward must multiply it by f.": g,
            "that is f² · grad_output: scale once, in backward only.": f * f * g,
        }
        if f != 0:
            backward_mistakes["that is grad_output / f: multiply by f, do not divide."] = g / f
        expected = f * g
        if f != 0 and not np.allclose(got, expected) and got.shape == g.shape:
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
    x1, x2 = leaf([0.3, -0.9]), leaf([1.2, 0.4])
    y1 = run.apply(exercise, cls, (x1, 2.0), call, seen)
    y2 = run.apply(exercise, cls, (x2, 5.0), call, seen)
    g = np.array([1.0, -2.0])
    _grad_factor_backward(exercise, y1, g, seen)
    _grad_factor_backward(exercise, y2, g, seen)
    first = grad_of(exercise, x1, "x")
    if np.allclose(first, 5.0 * g):
        check.fail(
            exercise,
            "after MyGradFactor.apply(x1, 2.0) and MyGradFactor.apply(x2, 5.0), the gradient "
            "for x1 was scaled by 5.0, the f of the later call: f must live on each call's "
            "own ctx (`ctx.f = f`), not on the class or in a global variable.",
        )
    check.expect_close(exercise, "x1.grad (f = 2.0)", first, 2.0 * g)
    check.expect_close(exercise, "x2.grad (f = 5.0)", grad_of(exercise, x2, "x"), 5.0 * g)

    # Inside a bigger expression: loss = sum((w · GF(3x, f))²), f = 4.
    x = leaf([0.5, -1.0, 2.0])
    w = leaf([1.5, 0.2, -0.7])
    h = x * 3.0
    v = run.apply(exercise, cls, (h, 4.0), call, seen)
    _grad_factor_backward(exercise, ((w * v) ** 2).sum(), 1.0, seen)
    v_data = 3.0 * x.data
    check.expect_close(
        exercise,
        "w.grad in sum((w · MyGradFactor.apply(3x, 4))²)",
        grad_of(exercise, w, "w"),
        2 * w.data * v_data**2,
        {
            "w comes after the factor, so its gradient must not be scaled: scale only the "
            "gradient returned for x.": 4 * 2 * w.data * v_data**2,
        },
    )
    check.expect_close(
        exercise,
        "x.grad in sum((w · MyGradFactor.apply(3x, 4))²)",
        grad_of(exercise, x, "x"),
        4.0 * 3.0 * 2 * w.data**2 * v_data,
    )
    _gradcheck(
        exercise,
        lambda v: cls.apply(v, 1.0),
        (leaf([0.2, -1.4, 0.8]),),
        "lambda x: MyGradFactor.apply(x, 1.0), x",
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 6.2

# NOT A OR B (gate 13, "A implies B"): 1 - a + ab. Its partials, which the learner derives:
# d/da = b - 1, d/db = a. The hidden data holds exact bits (where one partial is 0) and a
# pair with a == b.
IMPLIES_A = np.array([0.0, 1.0, 0.3, 0.7, 0.45])
IMPLIES_B = np.array([1.0, 0.0, 0.3, 0.2, 0.9])


def _implies_mistakes(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, dict]:
    """For grad_a and grad_b: hint -> the value a likely slip in the derivation gives."""
    return {
        "a": {
            "that is (1 - b)·grad_output: the sign is flipped. In 1 - a + ab the term -a "
            "gives -1 and ab gives b, so d/da = b - 1.": g * (1 - b),
            "that is b·grad_output: the -1 from the term -a is missing, d/da = b - 1.": g * b,
            "that is a·grad_output, the partial for b: the partials are swapped (or backward "
            "returned (grad_b, grad_a); keep forward's order a, b).": g * a,
            "that is (b - 1) without grad_output: multiply by the gradient backward receives "
            "(the chain rule).": b - 1,
            "that is -grad_output: the term ab depends on a too, which adds b, so d/da = "
            "b - 1.": -g,
        },
        "b": {
            "that is (b - 1)·grad_output, the partial for a: the partials are swapped (or "
            "backward returned (grad_b, grad_a); keep forward's order a, b).": g * (b - 1),
            "that is -a·grad_output: the sign is flipped; 1 - a + ab grows with b when "
            "a > 0, d/db = a.": -g * a,
            "that is (1 + a)·grad_output: the 1 does not depend on b, its derivative is 0, "
            "d/db = a.": g * (1 + a),
            "that is a without grad_output: multiply by the gradient backward receives (the "
            "chain rule).": a,
            "that is b·grad_output: the derivative of ab with respect to b leaves the other "
            "input, a.": g * b,
        },
    }


def _implies_shape_hint(error: GradientShapeError) -> str:
    if len(error.got) < len(error.expected) or (
        len(error.got) == len(error.expected) and np.prod(error.got) < np.prod(error.expected)
    ):
        # Fewer entries than the input: the products were added up, not returned whole.
        return (
            "It has fewer entries than the input: do not add the products up. Return "
            "grad_output times each partial, entry by entry (the shape of grad_output); "
            "apply sums a broadcast gradient back to its input's shape when it needs to."
        )
    return (
        "With inputs that broadcast (a of shape (3, 1), b of shape (4,)), the output and "
        "grad_output have the broadcast shape (3, 4). Return the full products, grad_output "
        "times each partial: apply sums each back to its input's shape. Or sum over the "
        "broadcast axes yourself, keeping dims."
    )


def check_6_2(relaxed_implies: Any) -> None:
    """RelaxedImplies(a, b) = 1 - a + ab with backward (g·(b - 1), g·a)."""
    exercise = "6.2"
    name = "RelaxedImplies"
    cls = check.function_class(exercise, relaxed_implies, name)
    call = f"{name}.apply(a, b)"
    seen = run.Spied()

    def backward(output: Variable, upstream: np.ndarray) -> None:
        run.run_backward(
            exercise,
            output,
            upstream,
            seen,
            returns="grad_a, grad_b",
            count_hint="forward has two inputs, a and b, so backward returns (grad_a, grad_b).",
            number_hint="backward returned a gradient for an input that is not a Variable.",
            shape_hint=_implies_shape_hint,
        )

    # Same shapes: exact bits, a pair with a == b, values in between.
    a_data, b_data = IMPLIES_A, IMPLIES_B
    g = np.array([0.8, -1.5, 0.6, 2.0, -0.4])
    a, b = leaf(a_data), leaf(b_data)
    y = run.one_output(exercise, run.apply(exercise, cls, (a, b), call, seen), call)
    implies = 1 - a_data + a_data * b_data
    forward_mistakes = {
        "that is A OR NOT B, 1 - b + ab: NOT A OR B negates a, 1 - a + ab.": (
            1 - b_data + a_data * b_data
        ),
        "that is NOT A, 1 - a: the term ab (a AND b, the case where a is 1 and b too) is "
        "missing.": 1 - a_data,
        "that is 1 - a - ab: the sign of ab is flipped; NOT A OR B is 1 - a + ab.": (
            1 - a_data - a_data * b_data
        ),
        "that is OR, a + b - ab: NOT A OR B is (1 - a) + b - (1 - a)b = 1 - a + ab.": (
            a_data + b_data - a_data * b_data
        ),
    }
    check.expect_close(exercise, call, y, implies, forward_mistakes)
    backward(y, g)
    grads = {"a": grad_of(exercise, a, "a"), "b": grad_of(exercise, b, "b")}
    expected = {"a": g * (b_data - 1), "b": g * a_data}
    mistakes = _implies_mistakes(g, a_data, b_data)
    for input_name in ("a", "b"):
        what = f"{input_name}.grad"
        got = check.as_array(exercise, what, grads[input_name])
        known = [*mistakes[input_name].values(), expected[input_name]]
        if got.shape == expected[input_name].shape and not any(
            np.allclose(got, value, rtol=1e-6, atol=1e-8) for value in known
        ):
            # No slip the check knows: say what to redo rather than only show numbers.
            check.fail(
                exercise,
                f"{what} is {check._short(got)}, expected {check._short(expected[input_name])}: "
                f"that is not grad_output times the partial derivative for {input_name}. "
                f"Take the terms 1, -a and ab one at a time: which of them contain "
                f"{input_name}, and what does each contribute to the derivative?",
            )
        check.expect_close(exercise, what, got, expected[input_name], mistakes[input_name])

    # Broadcasting: a (3, 1) against b (4,) gives a (3, 4) output.
    rng = np.random.default_rng(61)
    a_data, b_data = rng.uniform(0.05, 0.95, (3, 1)), rng.uniform(0.05, 0.95, 4)
    g = rng.normal(size=(3, 4))
    a, b = leaf(a_data), leaf(b_data)
    wide = f"{call} with a of shape (3, 1) and b of shape (4,)"
    y = run.one_output(exercise, run.apply(exercise, cls, (a, b), wide, seen), wide)
    check.expect_close(exercise, wide, y, 1 - a_data + a_data * b_data)
    backward(y, g)
    full_a, full_b = g * (b_data - 1), g * a_data
    check.expect_close(
        exercise,
        "a.grad with shapes (3, 1) and (4,)",
        grad_of(exercise, a, "a"),
        full_a.sum(axis=1, keepdims=True),
        {
            "that is the mean over the broadcast axis: gradients from every column add "
            "up, so sum them (or let apply do it).": full_a.mean(axis=1, keepdims=True)
        },
    )
    check.expect_close(
        exercise,
        "b.grad with shapes (3, 1) and (4,)",
        grad_of(exercise, b, "b"),
        full_b.sum(axis=0),
        {
            "that is the mean over the broadcast axis: gradients from every row add "
            "up, so sum them (or let apply do it).": full_b.mean(axis=0)
        },
    )
    inputs = (leaf([0.2, 0.7, 0.45]), leaf([0.9, 0.3, 0.6]))
    _gradcheck(exercise, cls.apply, inputs, f"{name}.apply, (a, b)")
    inputs = (leaf([[0.15], [0.8]]), leaf([0.35, 0.55, 0.9]))
    _gradcheck(exercise, cls.apply, inputs, f"{name}.apply, a (2, 1) and b (3,)")
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


# (batch, seed, equal logits): the last is one example with all 16 logits equal (a blend
# of all gates with the same weight, 1/16 each).
NEURON_CASES = ((6, 62, False), (3, 63, False), (1, 64, True))


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
            f"an object of type {check.type_name(neuron_output)}.",
        )
    for batch, seed, equal_logits in NEURON_CASES:
        rng = np.random.default_rng(seed)
        a_data, b_data = rng.uniform(0.05, 0.95, batch), rng.uniform(0.05, 0.95, batch)
        z = np.full(16, 0.7) if equal_logits else rng.normal(size=16)
        g = rng.normal(size=batch)
        a, b, logits = leaf(a_data), leaf(b_data), leaf(z)
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
        if shape == () and batch == 1:
            check.fail(
                exercise,
                "with a batch of one example the result has shape (): the batch axis is gone. "
                "Keep one output per row, shape (1,): sum over the gates only, `.sum(-1)`, and "
                "do not squeeze.",
            )
        if shape == () or (shape == (1,) and batch != 1):
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
            "that is the mean of the 16 weighted gates, 1/16 of the mix: the softmax weights "
            "already add up to 1, so add the weighted gates up, `.sum(-1)`.": expected / 16,
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
        for variable, what in ((logits, "logits"), (a, "a")):
            if variable.grad is None:
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
    inputs = (leaf([0.3, 0.8]), leaf([0.6, 0.1]), leaf(np.linspace(-1.0, 1.0, 16)))
    _gradcheck(exercise, neuron_output, inputs, "neuron_output, (a, b, logits)")
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 6.5
# The graph of the exercise: h = GradFactor(x, f1), z = w · h, loss = z · GradFactor(z, f2).
# By hand: loss = w²x² (factors change no value); z reaches the loss twice, once through the
# factor (its gradient ×f2) and once directly, so z's gradient is (1 + f2)·z; then
# grad_w = (1 + f2)·z·h = (1 + f2)·w·x² and grad_x = f1·(1 + f2)·z·w = f1·(1 + f2)·w²·x.

PREDICT_NAMES = ("loss", "grad_w", "grad_x")
# (x, w, f1, f2): the lesson's numbers first, then a second set where the slips below all
# give different numbers from each other and from the right ones. The lesson's set has
# f1·w = 1, so there a missing "times f1·w" goes unseen; the second set (loss 4, grad_w 10,
# grad_x -60) has f1·w = 6 and 1 + f2 != 2·f1 (else "f1 missing" = "f2 missing").
PREDICT_CASES = ((3.0, 0.5, 2.0, 10.0), (-1.0, 2.0, 3.0, 4.0))


def predicted_by_hand(x: float, w: float, f1: float, f2: float) -> tuple[float, float, float]:
    """(loss, grad_w, grad_x) for h = GradFactor(x, f1), z = w h, loss = z GradFactor(z, f2)."""
    return w * w * x * x, (1 + f2) * w * x * x, f1 * (1 + f2) * w * w * x


def _prediction_slips(x: float, w: float, f1: float, f2: float) -> dict[str, dict[str, float]]:
    """For each of the three numbers, hint -> what a known slip gives."""
    both = (
        "f2 scales only the gradient that comes through GradFactor(z, f2). z also reaches the "
        "loss directly, as the other factor of z · GradFactor(z, f2), and that half is not "
        "scaled: z's gradient is z + f2·z, not 2·f2·z."
    )
    half = (
        "that counts only the path through GradFactor(z, f2): z also reaches the loss "
        "directly, as the other factor of the product, which adds its own, unscaled share: "
        "z's gradient is z + f2·z."
    )
    return {
        "loss": {
            "GradFactor changes no value: the loss is z · z whatever f2 is.": f2 * w * w * x * x,
            "GradFactor changes no value, only gradients: the loss is z · z = (w x)².": (
                f1 * f2 * w * w * x * x
            ),
            "that is z, not the loss z · z.": w * x,
        },
        "grad_w": {
            "that is the true derivative 2wx², as if there were no factors: w comes before "
            "GradFactor(z, f2) in the graph (z = w · h), so f2 changes its gradient.": (
                2 * w * x * x
            ),
            both: 2 * f2 * w * x * x,
            half: f2 * w * x * x,
            "f1 sits on x's path only: w joins the graph after GradFactor(x, f1), so its "
            "gradient is not scaled by f1.": f1 * (1 + f2) * w * x * x,
        },
        "grad_x": {
            "that is the true derivative 2w²x, as if there were no factors: x's gradient "
            "passes both GradFactors on its way back.": 2 * w * w * x,
            "f1 is missing: x's gradient also passes GradFactor(x, f1) on its way back, "
            "so multiply by f1.": (1 + f2) * w * w * x,
            both: f1 * 2 * f2 * w * w * x,
            half: f1 * f2 * w * w * x,
            "the chain rule's last step is missing: z = w · h, so h's gradient is z's "
            "gradient times w (and z itself holds one w already: w² in all).": (
                f1 * (1 + f2) * w * x
            ),
            "f2 is missing: x comes before GradFactor(z, f2) too, so z's gradient (1 + f2)·z "
            "reaches it.": 2 * f1 * w * w * x,
            "f1 and w are both missing: that is z's gradient (1 + f2)·z as it is, but x's "
            "gradient takes two more steps back, through z = w · h (times w) and through "
            "GradFactor(x, f1) (times f1).": (1 + f2) * w * x,
            "f1 is applied twice: x passes GradFactor(x, f1) only once on its way back, so "
            "its gradient gets one factor f1, not f1².": (
                f1 * f1 * (1 + f2) * w * w * x
            ),
        },
    }


def _three_numbers(exercise: str, call: str, result: Any) -> tuple[float, float, float]:
    """(loss, grad_w, grad_x) as floats, or a CheckError that says what to return."""
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        got = (
            f"{len(result)} values" if isinstance(result, (tuple, list))
            else check.with_article(result)
        )
        check.fail(
            exercise,
            f"{call} returned {got}; return three numbers, `return loss, grad_w, grad_x`.",
        )
    numbers_out = []
    for name, value in zip(PREDICT_NAMES, result):
        if isinstance(value, Variable):
            check.fail(
                exercise,
                f"{call} returned a Variable for {name}: predict it by hand, with plain "
                f"arithmetic on x, w, f1 and f2 (no minigrad).",
            )
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray)):
            check.fail(
                exercise,
                f"{name} should be a number such as 2.5; got {check.with_article(value)}.",
            )
        numbers_out.append(float(np.asarray(value, dtype=np.float64).reshape(())))
    return tuple(numbers_out)


def check_6_5(gradients_by_hand: Any, cases: tuple = PREDICT_CASES) -> None:
    """gradients_by_hand(x, w, f1, f2) -> (loss, grad_w, grad_x) for h = GradFactor(x, f1),
    z = w · h, loss = z · GradFactor(z, f2): w²x², (1 + f2) w x² and f1 (1 + f2) w² x."""
    exercise = "6.5"
    if gradients_by_hand is None:
        check.not_written(exercise)
    if isinstance(gradients_by_hand, type) or not callable(gradients_by_hand):
        check.fail(
            exercise,
            f"gradients_by_hand should be a function, `def gradients_by_hand(x, w, f1, f2):`; "
            f"got {check.with_article(gradients_by_hand)}.",
        )
    calls, answers = [], []
    for x, w, f1, f2 in cases:
        call = f"gradients_by_hand({x:g}, {w:g}, {f1:g}, {f2:g})"
        result = check.call(exercise, call, gradients_by_hand, x, w, f1, f2)
        calls.append(call)
        answers.append(_three_numbers(exercise, call, result))
    all_slips = [_prediction_slips(*case) for case in cases]
    for case, call, got, slips in zip(cases, calls, answers, all_slips):
        expected = predicted_by_hand(*case)
        if got != expected and np.allclose(got[::-1][:2], expected[1:]):
            check.fail(
                exercise,
                f"{call}: grad_w and grad_x are swapped; return them in the order "
                f"(loss, grad_w, grad_x).",
            )
        for index, (name, value, right) in enumerate(zip(PREDICT_NAMES, got, expected)):
            # Name a slip only if it gives the learner's number in every case: on one set two
            # slips can give the same number (the lesson's set has f1·w = 1), on all, no two do.
            fits = {
                hint: wrong
                for hint, wrong in slips[name].items()
                if all(
                    np.isclose(other[index], other_slips[name][hint], rtol=1e-6, atol=1e-8)
                    for other, other_slips in zip(answers, all_slips)
                )
            }
            check.expect_close(exercise, f"{name} from {call}", value, right, fits)
    check.passed(exercise)


__all__ = [
    "GATE_COEFFICIENTS",
    "check_6_1",
    "check_6_2",
    "check_6_3",
    "check_6_5",
    "predicted_by_hand",
    "relaxed_gates_numpy",
]
