"""Checks for lesson 04 (grad modes): `evaluate`, `sgd_step` and a `set_grad_enabled` toggle.

Every check runs with grad mode on (and restores the caller's mode afterwards), calls the
learner's function on inputs of its own, compares with values computed here with NumPy,
and puts the grad mode back after each call, so a wrong answer never leaves recording
switched off for the cells after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad.autodiff.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.course import check
from minigrad.course.check import as_array, expect_close, fail, passed
from minigrad.variable import Parameter, Variable


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
                f"{what} is of type {type(prediction).__name__}, not a Variable: return what "
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
    ]
    x = Variable(rng.standard_normal((5, 3)))
    for lr in (0.1, 0.05):
        loss = ((x @ params[0] + params[1]) ** 2).mean()
        loss.backward()
        _expect_step(exercise, sgd_step, params, lr)
    passed(exercise)


def _expect_step(exercise: str, sgd_step: Callable, params: list[Parameter], lr: float) -> None:
    before = [p.data.copy() for p in params]
    grads = [None if p.grad is None else p.grad.data.copy() for p in params]
    handed_over = list(params)
    in_place = (
        RuntimeError,
        "in-place",
        "Did you forget no_grad? A parameter may be changed in place only inside "
        "`with minigrad.no_grad():`, so that the update itself is not recorded.",
    )

    def about_none(error: BaseException) -> str | None:
        # Blame a missing gradient only when the error is about None and a parameter's
        # .grad really is None: reset before its update, or never set by the loss.
        if not isinstance(error, (TypeError, AttributeError)) or "NoneType" not in str(error):
            return None
        for index, (param, grad, original) in enumerate(zip(params, grads, before)):
            if grad is not None and param.grad is None and np.array_equal(param.data, original):
                return (
                    f"The gradient params[{index}].grad was reset before the update used it: "
                    f"update p first, then reset p.grad."
                )
        unused = [f"params[{index}]" for index, grad in enumerate(grads) if grad is None]
        if unused:
            return (
                f"A parameter the loss did not use ({', '.join(unused)}) has .grad None; skip "
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
        },
    )
