"""Checks for lesson 04 (grad modes): `evaluate`, `sgd_step`, a `set_grad_enabled` toggle,
and `saved_bytes`, the memory a graph keeps, counted by hand.

Every check runs with grad mode on (and restores the caller's mode afterwards), calls the
learner's function on inputs of its own, compares with values computed here with NumPy,
and puts the grad mode back after each call, so a wrong answer never leaves recording
switched off for the cells after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad.core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.core.variable import Parameter, Variable
from minigrad.course import check
from minigrad.course.check import as_array, expect_close, fail, passed
from minigrad.course.raised import is_leaf_in_place_error, learner_locals


def _call(
    exercise: str,
    what: str,
    function: Callable,
    *args: Any,
    hints: Sequence[check.HintRule] = (),
) -> tuple[Any, bool]:
    """Call the learner's `function`; return its result and the grad mode it left behind.

    An error it raises becomes a CheckError (see check.call). Whatever happens, the mode
    is restored to the one found before the call.
    """
    before = is_grad_enabled()
    try:
        result = check.call(exercise, what, function, *args, hints=hints)
        left = is_grad_enabled()
    finally:
        set_grad_enabled(before)
    return result, left


# --------------------------------------------------------------------------- Exercise 4.1


@enable_grad()  # a check runs in a known mode, whatever the cell around it does
def check_4_1(evaluate: Callable) -> None:
    """`evaluate(model_fn, xs)` returns [model_fn(x) for x in xs] with nothing recorded."""
    exercise = "4.1"
    rng = np.random.default_rng(41)
    w = Parameter(rng.standard_normal((3, 2)))
    b = Parameter(rng.standard_normal(2))
    modes_seen: list[bool] = []

    def model_fn(x: Variable) -> Variable:
        modes_seen.append(is_grad_enabled())
        return (x @ w + b).tanh()

    xs = [Variable(rng.standard_normal((4, 3))) for _ in range(3)]
    predictions, left = _call(exercise, "evaluate(model_fn, xs)", evaluate, model_fn, xs)
    if not left:
        fail(
            exercise,
            "grad mode is still off after evaluate returned: did you call "
            "minigrad.set_grad_enabled(False) and not switch it back? Use "
            "`with minigrad.no_grad():`, which restores the mode for you.",
        )
    _expect_predictions(exercise, predictions, xs, w, b, modes_seen)

    # Called from code that already runs under no_grad, evaluate must leave it that way.
    more = [Variable(rng.standard_normal((2, 3))) for _ in range(2)]
    modes_seen.clear()
    with no_grad():
        predictions, left = _call(exercise, "evaluate(model_fn, xs)", evaluate, model_fn, more)
    if left:
        fail(
            exercise,
            "called inside `with minigrad.no_grad():`, evaluate switched grad mode back on: "
            "did you end with set_grad_enabled(True)? Restore the mode you found, not True; "
            "a `with minigrad.no_grad():` block does that for you.",
        )
    _expect_predictions(exercise, predictions, more, w, b, modes_seen)

    # The edge: a list of one input.
    single = [Variable(rng.standard_normal((1, 3)))]
    modes_seen.clear()
    predictions, _ = _call(exercise, "evaluate(model_fn, xs)", evaluate, model_fn, single)
    _expect_predictions(exercise, predictions, single, w, b, modes_seen)
    passed(exercise)


def _expect_predictions(
    exercise: str,
    predictions: Any,
    xs: list[Variable],
    w: Variable,
    b: Variable,
    modes_seen: list[bool],
) -> None:
    if isinstance(predictions, Variable) or not isinstance(predictions, (list, tuple)):
        fail(
            exercise,
            f"evaluate returned {check.with_article(predictions)}; return a list with one "
            f"prediction per input: [model_fn(x) for x in xs], computed under no_grad.",
        )
    if len(predictions) != len(xs):
        fail(
            exercise,
            f"evaluate returned {len(predictions)} prediction(s) for {len(xs)} inputs: "
            f"did you `return` inside the loop, or keep only the last prediction?",
        )
    for index, prediction in enumerate(predictions):
        what = f"prediction {index}"
        if not isinstance(prediction, Variable):
            fail(
                exercise,
                f"{what} is of type {check.type_name(prediction)}, not a Variable: return what "
                f"model_fn gives (a Variable), not its .data, .numpy() or .item(). Under "
                f"no_grad that Variable carries no graph anyway.",
            )
        if prediction.grad_fn is not None:
            fail(
                exercise,
                f"{what} has grad_fn=<{prediction.grad_fn.name()}>: a graph was recorded. "
                f"Call model_fn inside `with minigrad.no_grad():`.",
            )
    if any(modes_seen):
        fail(
            exercise,
            "model_fn ran with grad mode on, so it recorded a graph (then thrown away, by "
            ".detach()?). That is the work no_grad saves: call model_fn inside "
            "`with minigrad.no_grad():` instead of detaching afterwards.",
        )
    for index, (prediction, x) in enumerate(zip(predictions, xs)):
        expected = np.tanh(x.data @ w.data + b.data)
        first = np.tanh(xs[0].data @ w.data + b.data)
        expect_close(
            exercise,
            f"prediction {index}",
            prediction,
            expected,
            mistakes={"did you call model_fn on xs[0] every time instead of on each x?": first},
        )


# --------------------------------------------------------------------------- Exercise 4.2


@enable_grad()  # a check runs in a known mode, whatever the cell around it does
def check_4_2(sgd_step: Callable) -> None:
    """`sgd_step(params, lr)` does p -= lr * p.grad in place under no_grad and resets .grad."""
    exercise = "4.2"
    rng = np.random.default_rng(42)
    params = [
        Parameter(rng.standard_normal((3, 2))),
        Parameter(rng.standard_normal(2)),
        Parameter(rng.standard_normal(2)),  # unused by the loss: its .grad stays None
        Parameter(0.5),  # a scalar the loss multiplies by 0: its gradient is exactly 0
    ]
    x = Variable(rng.standard_normal((5, 3)))
    for lr in (0.1, 0.05):
        loss = ((x @ params[0] + params[1]) ** 2).mean() + 0.0 * params[3]
        loss.backward()
        _expect_step(exercise, sgd_step, params, lr)
    passed(exercise)


def _expect_step(exercise: str, sgd_step: Callable, params: list[Parameter], lr: float) -> None:
    before = [p.data.copy() for p in params]
    grads = [None if p.grad is None else p.grad.data.copy() for p in params]
    handed_over = list(params)

    def in_place(error: BaseException) -> str | None:
        if not is_leaf_in_place_error(error):
            return None
        return (
            "Did you forget no_grad? A parameter may be changed in place only inside "
            "`with minigrad.no_grad():`, so that the update itself is not recorded."
        )

    def about_none(error: BaseException) -> str | None:
        # An error on a None (an attribute of None, or a TypeError) is blamed on a missing
        # gradient only when the parameter sgd_step was working on (a local of its frame)
        # really has .grad None: reset before its update, or never set by the loss.
        on_none = isinstance(error, AttributeError) and error.name is not None
        if not ((on_none and error.obj is None) or isinstance(error, TypeError)):
            return None
        frames = learner_locals(error, sgd_step)
        working_on = [
            index
            for index, param in enumerate(params)
            if any(value is param for local in frames for value in local.values())
        ]
        for index in working_on:
            if params[index].grad is not None:
                continue
            if grads[index] is not None:
                return (
                    f"The gradient params[{index}].grad was reset before the update used it: "
                    f"update p first, then reset p.grad."
                )
            return (
                f"A parameter the loss did not use (params[{index}]) has .grad None; skip "
                f"it (`if p.grad is None: continue`)."
            )
        return None

    _, left = _call(
        exercise,
        "sgd_step(params, lr)",
        sgd_step,
        handed_over,
        lr,
        hints=[in_place, about_none],
    )
    if not left:
        fail(
            exercise,
            "grad mode is still off after sgd_step returned: use `with minigrad.no_grad():` "
            "rather than a plain set_grad_enabled(False), so the mode is restored.",
        )
    for index, (param, original) in enumerate(zip(handed_over, params)):
        if param is not original:
            fail(
                exercise,
                f"params[{index}] is a new object after sgd_step: `params[i] = params[i] - "
                f"...` replaces the Parameter, and a model holding the old one never sees the "
                f"update. Change each one in place: `p -= lr * p.grad`.",
            )
    for index, param in enumerate(params):
        if not param.requires_grad:
            fail(
                exercise,
                f"params[{index}] no longer requires grad: did you set requires_grad=False to "
                f"get past the in-place error? Keep it; do the update under no_grad instead.",
            )
        if param.grad_fn is not None:
            fail(
                exercise,
                f"params[{index}] has grad_fn=<{param.grad_fn.name()}>: the update was "
                f"recorded. Do it under `with minigrad.no_grad():`.",
            )
    for index, (param, original, grad) in enumerate(zip(params, before, grads)):
        what = f"params[{index}] after the step"
        if grad is None:
            # A parameter the loss did not use has no gradient and must stay as it was.
            expect_close(exercise, what + " (its .grad was None)", param, original)
            continue
        expect_close(
            exercise,
            what,
            param,
            original - lr * grad,
            mistakes={
                "the parameters did not change: did you rebind the loop variable "
                "(`p = p - lr * p.grad`) instead of updating in place (`p -= lr * p.grad`), "
                "or reset .grad before using it?": original,
                "the step went uphill: gradient descent subtracts lr * grad "
                "(`-=`, not `+=`).": original + lr * grad,
                "the step ignores lr: multiply the gradient by lr.": original - grad,
                "the step was taken twice.": original - 2 * lr * grad,
            },
        )
    for index, param in enumerate(params):
        if param.grad is not None and np.any(as_array(exercise, "grad", param.grad) != 0):
            fail(
                exercise,
                f"params[{index}].grad still holds the gradient after the step: did you forget "
                f"to reset it? Set `p.grad = None` (or `p.grad.zero_()`), otherwise the next "
                f"backward adds to it.",
            )


# --------------------------------------------------------------------------- Exercise 4.3


@enable_grad()  # a check runs in a known mode, whatever the cell around it does
def check_4_3(mse: Callable) -> None:
    """`mse(w, xs, ys, training)`: mean squared error of xs @ w, recorded iff training."""
    exercise = "4.3"
    rng = np.random.default_rng(43)
    xs = Variable(rng.standard_normal((6, 3)))
    ys = Variable(rng.standard_normal(6))
    w_data = rng.standard_normal(3)
    residual = xs.data @ w_data - ys.data
    expected = np.mean(residual**2)
    expected_grad = 2.0 * xs.data.T @ residual / len(residual)

    recorded = {}
    for training in (True, False):
        w = Variable(w_data.copy(), requires_grad=True)
        loss, left = _call(
            exercise, f"mse(w, xs, ys, training={training})", mse, w, xs, ys, training
        )
        if left is not True:
            fail(
                exercise,
                f"grad mode is off after mse(..., training={training}) returned: did you call "
                f"set_grad_enabled(training) as a plain statement? It stays in effect; use "
                f"it as a context manager: `with minigrad.set_grad_enabled(training):`.",
            )
        _expect_loss(exercise, loss, expected, residual)
        recorded[training] = loss.grad_fn is not None
        if training and recorded[training]:
            loss.backward()
            expect_close(
                exercise,
                "w.grad after backward",
                w.grad,
                expected_grad,
            )

    if recorded[False] and not recorded[True]:
        fail(
            exercise,
            "the modes are swapped: training=True recorded nothing and training=False "
            "recorded a graph. Did you write set_grad_enabled(not training)?",
        )
    if not recorded[True] and not recorded[False]:
        fail(
            exercise,
            "with training=True the loss has no grad_fn: either the whole body runs under "
            "no_grad, or the loss is computed from w.data / NumPy arrays instead of the "
            "Variable w, so nothing can be recorded.",
        )
    if recorded[False]:
        fail(
            exercise,
            "with training=False the loss still has a grad_fn: a graph was recorded. Pass "
            "the flag on: `with minigrad.set_grad_enabled(training):`.",
        )

    # The flag decides, whatever mode the caller is in, and the caller's mode comes back.
    w = Variable(w_data.copy(), requires_grad=True)
    with no_grad():
        loss, left = _call(exercise, "mse(w, xs, ys, training=True)", mse, w, xs, ys, True)
    if left is not False:
        fail(
            exercise,
            "called inside no_grad with training=True, mse left grad mode on: did you call "
            "set_grad_enabled(training) as a plain statement? Use it in a `with` block, "
            "which restores the caller's mode.",
        )
    _expect_loss(exercise, loss, expected, residual)
    if loss.grad_fn is None:
        fail(
            exercise,
            "called inside no_grad with training=True, the loss has no grad_fn: "
            "set_grad_enabled(training) switches recording on as well as off; an "
            "`if not training:` around no_grad leaves the caller's mode in charge instead.",
        )

    # The edge: a single sample (N = 1), where a mean and a sum agree.
    one_x, one_y = Variable(xs.data[:1]), Variable(ys.data[:1])
    w = Variable(w_data.copy(), requires_grad=True)
    loss, _ = _call(
        exercise, "mse(w, xs, ys, training=False) on one sample", mse, w, one_x, one_y, False
    )
    _expect_loss(exercise, loss, float(residual[0] ** 2), residual[:1])
    passed(exercise)


def _expect_loss(exercise: str, loss: Any, expected: float, residual: np.ndarray) -> None:
    if not isinstance(loss, Variable):
        fail(
            exercise,
            f"mse returned {check.with_article(loss)}; return the loss as a Variable (not its "
            f".item() or .data), so that training code can call loss.backward().",
        )
    expect_close(
        exercise,
        "the loss",
        loss,
        expected,
        shape_hint="the loss is a single number, the mean over the samples: did you forget "
        ".mean()?",
        mistakes={
            "did you take the sum instead of the mean?": np.sum(residual**2),
            "did you forget to square the residuals?": np.mean(residual),
            "the square of the mean residual is not the mean of the squares: square "
            "first, then take the mean.": np.mean(residual) ** 2,
            "that is the root mean squared error: the mean squared error stops at the mean "
            "of the squares, so drop the square root.": np.sqrt(np.mean(residual**2)),
        },
    )


# --------------------------------------------------------------------------- Exercise 4.4

# (layers, batch, width, bytes per number): the lesson's network first, then the edges:
# one layer (nothing but sin's input is kept), and a batch and width of 1.
CONFIGS_44 = ((5, 64, 128, 4), (1, 32, 16, 8), (3, 1, 1, 2), (8, 16, 32, 4))


def saved_bytes_reference(layers: int, batch: int, width: int, itemsize: int) -> int:
    """Bytes of intermediate results the graph of sin_mlp keeps for backward.

    Layer k computes u_k = h_(k-1) @ W_k, then h_k = sin(u_k). SinBackward keeps u_k (its
    derivative cos(u_k) needs the input); the next layer's MatMulBackward keeps h_k. The
    last h_L is only summed (SumBackward keeps no value), the input x and the weights
    exist anyway: 2·layers - 1 arrays of batch × width numbers.
    """
    return (2 * layers - 1) * batch * width * itemsize


def _slips_44(layers: int, batch: int, width: int, itemsize: int) -> dict[str, float]:
    """What the usual miscounts give, hint -> bytes."""
    one_array = batch * width * itemsize
    right = (2 * layers - 1) * one_array
    return {
        "that is one array per layer, the count for tanh, whose derivative is written with "
        "its output. sin's derivative cos(u) needs sin's input u = h @ W, so SinBackward "
        "keeps u, and the next layer's MatMulBackward keeps sin's output h: two arrays per "
        "layer.": layers * one_array,
        "that is two arrays for every layer, one too many: the last layer's output is only "
        "summed (SumBackward keeps no value), and the input x is data that exists anyway.": (
            2 * layers * one_array
        ),
        "that counts the input x and the last output as well; neither is kept by the graph "
        "alone (x exists anyway, and SumBackward keeps nothing).": (2 * layers + 1) * one_array,
        "that counts the weights too: parameters exist whether or not a graph is recorded, "
        "so only intermediate results count.": right + layers * width * width * itemsize,
        "that counts 8 bytes per number, float64's size: use `itemsize`, the size of one "
        "number in these arrays.": (2 * layers - 1) * batch * width * 8,
        "that is one row per array: each array has `batch` rows of `width` numbers.": (
            (2 * layers - 1) * width * itemsize
        ),
        "that is a count of numbers, not of bytes: multiply by `itemsize`.": (
            (2 * layers - 1) * batch * width
        ),
        "that is 8 times the bytes, a count of bits: `itemsize` is already in bytes, so "
        "multiply by it alone.": right * 8,
        "that is the count in KiB (bytes / 1024): return the bytes themselves.": right / 1024,
    }


def check_4_4(saved_bytes: Callable) -> None:
    """`saved_bytes(layers, batch, width, itemsize)`: the bytes sin_mlp's graph keeps."""
    exercise = "4.4"
    if not callable(saved_bytes):
        fail(
            exercise,
            f"pass the function itself, saved_bytes; got {check.with_article(saved_bytes)}.",
        )
    for layers, batch, width, itemsize in CONFIGS_44:
        call = f"saved_bytes({layers}, {batch}, {width}, {itemsize})"
        got = check.call(exercise, call, saved_bytes, layers, batch, width, itemsize)
        if got is None:
            fail(exercise, f"{call} returned None: did you forget `return`?")
        if isinstance(got, (bool, np.bool_)) or not isinstance(
            got, (int, float, np.integer, np.floating)
        ):
            fail(
                exercise, f"{call} should return a number of bytes; got {check.with_article(got)}."
            )
        expected = saved_bytes_reference(layers, batch, width, itemsize)
        slips = _slips_44(layers, batch, width, itemsize)
        if got == expected:
            continue
        for hint, wrong in slips.items():
            if got == wrong and wrong != expected:
                fail(exercise, f"{call} is {got:g}, expected {expected}: {hint}")
        fail(exercise, f"{call} is {got:g}, expected {expected}.")
    passed(exercise)
