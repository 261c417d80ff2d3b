"""Checks for lesson 05 (FunctionalLinear: the linear layer as one Function).

Each check calls the learner's code on inputs of its own (a rectangular case, where a
shape gives a mistake away, a square one, where only the values can, and a batch of one
sample), compares with NumPy, and, for Functions, runs `minigrad.gradcheck` in float64.

Exercise 5.1 is the layer in the other layout, y = x W + b with W of shape (in, out) (as
Flax's Dense stores its kernel): the learner derives its three gradients; the formulas of
the lesson, for W of shape (out, in), are the most likely wrong answer and are named.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.errors import (
    GradientCountError,
    GradientForNonVariableError,
    GradientShapeError,
)
from minigrad.core.function import Function
from minigrad.core.variable import Variable
from minigrad.course import check, raised

# (N, in_features, out_features, seed): rectangular first, so that a missing transpose or a
# missing sum shows as a wrong shape; then square, where every product fits and only the
# values tell the mistakes apart.
RECTANGULAR = (5, 3, 4, 11)
SQUARE = (3, 3, 3, 12)
ONE_SAMPLE = (1, 4, 2, 14)  # a batch of one: a sum over the batch keeps its axis or not


def _case(batch: int, in_features: int, out_features: int, seed: int) -> dict[str, np.ndarray]:
    """Fresh float64 inputs x (N, in), W (out, in), b (out,) and grad_output (N, out)."""
    rng = np.random.default_rng(seed)
    return {
        "x": rng.normal(size=(batch, in_features)),
        "W": rng.normal(size=(out_features, in_features)),
        "b": rng.normal(size=out_features),
        "g": rng.normal(size=(batch, out_features)),
    }


def _dense_case(batch: int, in_features: int, out_features: int, seed: int) -> dict:
    """Inputs for y = x W + b: x (N, in), W (in, out), b (out,), grad_output (N, out)."""
    case = _case(batch, in_features, out_features, seed)
    case["W"] = case["W"].T.copy()
    return case


def _leaf(values: np.ndarray, requires_grad: bool = True) -> Variable:
    return Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def _callable(exercise: str, fn: Any, name: str) -> Callable[..., Any]:
    if isinstance(fn, type) and issubclass(fn, Function):
        check.fail(exercise, f"{name} should be a plain function (def {name}(...):), not a class.")
    if not callable(fn):
        check.fail(exercise, f"{name} should be a function; got {type(fn).__name__}.")
    return fn


def _sentence(error: Exception) -> str:
    """An error's message as one sentence ending with a single full stop."""
    return str(error).rstrip(". ") + "."


def _call(exercise: str, fn: Callable[..., Any], args: tuple, call: str, hint: str) -> Any:
    """fn(*args); an error raised inside the learner's code becomes a hint."""
    try:
        return fn(*args)
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if check.is_stub(error):
            check.not_written(exercise)
        check.fail(exercise, f"{call} raised {type(error).__name__}: {_sentence(error)} {hint}")


# gradcheck follows Variable operations and .data, but .numpy() refuses a Variable that
# requires grad: a learner who used it gets told so. The rule looks at where the error was
# raised (Variable.numpy), not at its message.
NUMPY_IN_BACKWARD = (
    RuntimeError,
    lambda error: raised.raised_in(error, Variable.numpy),
    "Your code calls .numpy() on a Variable; work with Variable operations (@, .T, .sum(0)) "
    "or with .data, which gradcheck can follow.",
)


def _gradcheck(exercise: str, fn: Callable[..., Any], inputs: tuple, call: str) -> None:
    """minigrad.gradcheck on float64 inputs; its report becomes the hint."""
    check.gradcheck_or_hint(exercise, fn, inputs, call, hints=[NUMPY_IN_BACKWARD])


# --------------------------------------------------------------------------- Exercise 5.1

PRODUCT_SHAPES = (
    "Check each product's shapes against what it must give: grad_x has x's shape (N, in), "
    "grad_W has W's shape (in, out), grad_b has b's shape (out,); grad_output is (N, out)."
)
GRAD_NAMES = ("grad_x", "grad_W", "grad_b")
CALL = "dense_backward(x, W, grad_output)"


def _three_gradients(exercise: str, result: Any, call: str) -> tuple:
    if not isinstance(result, (tuple, list)):
        check.fail(
            exercise,
            f"{call} returned {check.with_article(result)}; return three gradients, "
            f"`return grad_x, grad_W, grad_b`.",
        )
    if len(result) != 3:
        check.fail(
            exercise,
            f"{call} returned {len(result)} values; return three, (grad_x, grad_W, grad_b).",
        )
    return tuple(check.as_array(exercise, name, value) for name, value in zip(GRAD_NAMES, result))


def _check_order(exercise: str, grads: tuple, expected: dict[str, np.ndarray]) -> None:
    """The three right gradients, but in another order than (grad_x, grad_W, grad_b)."""
    wanted = [expected[name] for name in GRAD_NAMES]
    for order in itertools.permutations(range(3)):
        if order == (0, 1, 2):
            continue
        if all(_same(grads[k], wanted[order[k]]) for k in range(3)):
            names = ", ".join(GRAD_NAMES[index] for index in order)
            check.fail(
                exercise,
                f"the three gradients are right but come in the order ({names}); return them "
                f"in the order of the inputs x, W, b: (grad_x, grad_W, grad_b).",
            )


def _same(got: np.ndarray, wanted: np.ndarray) -> bool:
    return np.shape(got) == np.shape(wanted) and np.allclose(got, wanted)


def _shape_hints(exercise: str, grads: tuple, case: dict[str, np.ndarray]) -> None:
    """Hints for the shapes the usual mistakes give, before the plain shape comparison."""
    grad_x, grad_w, grad_b = grads
    batch, in_features = case["x"].shape
    out_features = case["W"].shape[1]
    # Each hint only where its shape cannot be the right one (with in == out, the transpose
    # of (in, out) is (in, out) again).
    if np.shape(grad_w) == (out_features, in_features) and in_features != out_features:
        check.fail(
            exercise,
            f"grad_W has shape {(out_features, in_features)}, expected W's shape "
            f"{(in_features, out_features)}: that is the gradient for the (out, in) layout of "
            f"the lesson (grad_output.T @ x). Here W is (in, out): derive it again from "
            f"y[n, j] = sum_i x[n, i] W[i, j] + b[j], or transpose.",
        )
    if np.shape(grad_w) in (
        (batch, in_features, out_features),
        (batch, out_features, in_features),
    ):
        check.fail(
            exercise,
            f"grad_W has shape {np.shape(grad_w)}: one gradient per sample. W is shared by "
            f"the whole batch, so its gradient adds them up; a single matrix product does "
            f"that sum, giving W's shape {(in_features, out_features)}.",
        )
    if np.shape(grad_b) == (batch, out_features) and batch > 1:
        check.fail(
            exercise,
            f"grad_b has shape {(batch, out_features)}, expected ({out_features},): did you "
            f"forget to sum the bias gradient over the batch? Every sample adds the same b, so "
            f"its gradient is grad_output.sum(0).",
        )
    if np.shape(grad_b) == (1, out_features) and batch == 1:
        check.fail(
            exercise,
            f"with a batch of one sample grad_b has shape (1, {out_features}), expected "
            f"({out_features},): the bias gradient sums over the batch axis, which leaves it "
            f"out (grad_output.sum(0)), even when there is one sample.",
        )
    if np.shape(grad_b) == (in_features,) and in_features != out_features:
        check.fail(
            exercise,
            f"grad_b has shape ({in_features},), which is in_features: did you sum x instead of "
            f"grad_output? The bias gradient is grad_output.sum(0), of shape ({out_features},).",
        )
    if np.shape(grad_b) == (batch,) and batch != out_features:
        check.fail(
            exercise,
            f"grad_b has shape ({batch},), one number per sample: you summed over dim 1 (the "
            f"outputs). Sum over dim 0, the batch: grad_output.sum(0).",
        )
    if np.shape(grad_b) == () and out_features > 1:
        check.fail(
            exercise,
            f"grad_b is a single number: you summed over everything. Sum over the batch only, "
            f"grad_output.sum(0), which has one entry per output ({out_features},).",
        )
    if np.shape(grad_x) == (batch, out_features) and in_features != out_features:
        forward = np.allclose(grad_x, case["x"] @ case["W"])
        check.fail(
            exercise,
            f"grad_x has shape {(batch, out_features)}, the shape of grad_output, expected "
            f"{(batch, in_features)} like x"
            + (
                ": that is x @ W, the forward's product; you used x where grad_output belongs."
                if forward
                else ""
            )
            + " The gradient for x multiplies grad_output by W in the way that takes the out "
            "axis away.",
        )


def _value_mistakes(case: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """For each gradient, hint -> the value a known mistake gives. Most of these products
    only fit in the square case; those that do not fit are left out."""
    x, w, g = case["x"], case["W"], case["g"]
    formulas = {
        "grad_x": {
            "that is grad_output @ W, the formula for the lesson's (out, in) layout. Here "
            "y[n, j] = sum_i x[n, i] W[i, j], so x[n, i] meets W[i, j] and grad_x[n, i] = "
            "sum_j grad_output[n, j] W[i, j]: that is grad_output @ W.T.": lambda: g @ w,
            "that is x @ W: you used x where grad_output belongs.": lambda: x @ w,
            "that is W @ grad_output: wrong order of the product.": lambda: w @ g,
            "that is grad_output itself: the factor W is missing.": lambda: g,
        },
        "grad_W": {
            "that is grad_output.T @ x, the formula for the lesson's (out, in) layout, "
            "transposed for this one: here grad_W[i, j] = sum_n x[n, i] grad_output[n, j], "
            "which is x.T @ grad_output.": lambda: g.T @ x,
            "that is grad_output @ x: wrong order of the product, or a missing transpose.": (
                lambda: g @ x
            ),
            "that is x.T @ x: you used x where grad_output belongs.": lambda: x.T @ x,
            "that is grad_output.T @ grad_output: you used grad_output where x belongs.": (
                lambda: g.T @ g
            ),
            "that is the mean over the batch; the gradient of a sum over samples is their "
            "sum: no division by N.": lambda: x.T @ g / len(x),
        },
        "grad_b": {
            "that is grad_output summed over dim 1 (the outputs); sum over dim 0, the batch: "
            "grad_output.sum(0).": lambda: g.sum(1),
            "that is the mean over the batch; each sample adds its own share, so sum: "
            "grad_output.sum(0).": lambda: g.mean(0),
            "that is x summed over the batch: you used x instead of grad_output; "
            "grad_b = grad_output.sum(0).": lambda: x.sum(0),
        },
    }
    mistakes: dict[str, dict[str, np.ndarray]] = {}
    for name, hints in formulas.items():
        mistakes[name] = {}
        for hint, formula in hints.items():
            try:
                value = formula()
            except ValueError:  # the product does not fit at these sizes
                continue
            mistakes[name][hint] = value
    return mistakes


class _DenseWith(Function):
    """y = x W + b (W of shape (in, out)), with the learner's dense_backward as backward."""

    @staticmethod
    def forward(ctx: Any, x: Variable, weight: Variable, bias: Variable) -> Variable:
        ctx.save_for_backward(x, weight)
        return x @ weight + bias

    @classmethod
    def with_backward(cls, backward_fn: Callable[..., Any]) -> type[Function]:
        def backward(ctx: Any, grad_output: Variable) -> tuple:
            x, weight = ctx.saved_tensors
            return tuple(backward_fn(x, weight, grad_output))

        return type("DenseWithYourBackward", (cls,), {"backward": staticmethod(backward)})


def _diagnose_on_square(fn: Callable[..., Any]) -> str | None:
    """When dense_backward fails on rectangular inputs, run it where every product fits
    and name the known mistake its values match, if any."""
    case = _dense_case(*SQUARE)
    args = tuple(_leaf(case[key], False) for key in ("x", "W", "g"))
    try:
        result = fn(*args)
        grads = tuple(np.asarray(getattr(value, "data", value), dtype=float) for value in result)
    except Exception:  # noqa: BLE001 - no diagnosis, the original error is reported
        return None
    if len(grads) != 3:
        return None
    for name, got in zip(GRAD_NAMES, grads):
        for hint, wrong in _value_mistakes(case)[name].items():
            if _same(got, wrong):
                return (
                    f"With N = in = out, where every product fits, the function runs, and its "
                    f"{name} shows the slip: {hint}"
                )
    return None


def check_5_1(dense_backward: Any) -> None:
    """dense_backward(x, W, grad_output) -> (grad_x, grad_W, grad_b) of y = x W + b, with
    W of shape (in, out): grad_x = G Wᵀ, grad_W = xᵀ G, grad_b = sum over the batch of G."""
    exercise = "5.1"
    fn = _callable(exercise, dense_backward, "dense_backward")
    for batch, in_features, out_features, seed in (RECTANGULAR, SQUARE, ONE_SAMPLE):
        case = _dense_case(batch, in_features, out_features, seed)
        x, w, g = case["x"], case["W"], case["g"]
        expected = {"grad_x": g @ w.T, "grad_W": x.T @ g, "grad_b": g.sum(0)}
        args = (_leaf(x, False), _leaf(w, False), _leaf(g, False))
        shapes = f"x {x.shape}, W {w.shape}, grad_output {g.shape}"
        try:
            result = fn(*args)
        except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
            if check.is_stub(error):
                check.not_written(exercise)
            hint = _diagnose_on_square(fn) or PRODUCT_SHAPES
            check.fail(
                exercise,
                f"{CALL} with {shapes} raised {type(error).__name__}: {_sentence(error)} {hint}",
            )
        grads = _three_gradients(exercise, result, CALL)
        _check_order(exercise, grads, expected)
        _shape_hints(exercise, grads, case)
        mistakes = _value_mistakes(case)
        for name, got in zip(GRAD_NAMES, grads):
            check.expect_close(
                exercise, f"{name} (with {shapes})", got, expected[name], mistakes[name]
            )
    case = _dense_case(4, 3, 2, 13)
    inputs = (_leaf(case["x"]), _leaf(case["W"]), _leaf(case["b"]))
    wrapped = _DenseWith.with_backward(fn)
    _gradcheck(exercise, wrapped.apply, inputs, "a Function whose backward is dense_backward")
    check.passed(exercise)


def linear_backward(x: Any, weight: Any, grad_output: Any) -> tuple:
    """The gradients of y = x Wᵀ + b (W of shape (out, in)) for x, W and b: the lesson's
    own formulas, G W, Gᵀ x and the sum of G's rows (G = grad_output, shape (N, out))."""
    return grad_output @ weight, grad_output.T @ x, grad_output.sum(0)


def dense_backward(x: Any, weight: Any, grad_output: Any) -> tuple:
    """The gradients of y = x W + b (W of shape (in, out)): G Wᵀ, xᵀ G, the sum of G's rows."""
    return grad_output @ weight.T, x.T @ grad_output, grad_output.sum(0)


# --------------------------------------------------------------------------- Exercise 5.2


# (N, in, out, seed): the second case has a sample whose grad_output is zero (its norm is
# 0), the third is a batch of one sample.
NORM_CASES = ((5, 3, 4, 21), (3, 6, 2, 22), (1, 3, 2, 23))
ZERO_ROW = (22, 1)  # (seed of the case, the sample whose grad_output is all zeros)


def check_5_2(per_sample_grad_norms: Any) -> None:
    """per_sample_grad_norms(x, grad_output) → (N,): the norm of each sample's grad_W."""
    exercise = "5.2"
    fn = _callable(exercise, per_sample_grad_norms, "per_sample_grad_norms")
    call = "per_sample_grad_norms(x, grad_output)"
    for batch, in_features, out_features, seed in NORM_CASES:
        case = _case(batch, in_features, out_features, seed)
        x, g = case["x"], case["g"]
        if seed == ZERO_ROW[0]:
            g[ZERO_ROW[1]] = 0.0
        per_sample = g[:, :, None] * x[:, None, :]
        expected = np.sqrt((per_sample**2).sum(axis=(1, 2)))
        shapes = f"x {x.shape}, grad_output {g.shape}"
        result = _call(
            exercise,
            fn,
            (_leaf(x, False), _leaf(g, False)),
            f"{call} with {shapes}",
            "The per-sample gradients are grad_output.unsqueeze(-1) * x.unsqueeze(-2), of "
            "shape (N, out, in).",
        )
        got = check.as_array(exercise, call, result)
        got_shape = np.shape(got)
        if got_shape in ((batch, out_features, in_features), (batch, in_features, out_features)):
            check.fail(
                exercise,
                f"{call} has shape {got_shape}: those are the per-sample gradients themselves. "
                f"Now reduce each to one number, its norm: the square root of the sum of "
                f"squares over the last two dims.",
            )
        if got_shape in ((batch, out_features), (batch, in_features)):
            check.fail(
                exercise,
                f"{call} has shape {got_shape}: you reduced over one dim only. Each sample's "
                f"gradient is an (out, in) matrix; sum the squares over both dims (1 and 2).",
            )
        if got_shape in ((), (out_features, in_features)):
            check.fail(
                exercise,
                f"{call} has shape {got_shape}: that is the batch's gradient, summed over the "
                f"samples. Keep one norm per sample, shape ({batch},).",
            )
        summed = np.sqrt(((g.T @ x) ** 2).sum())
        mistakes = {
            "those are the squared norms: take the square root.": expected**2,
            "that is only the norm of each row of grad_output: the gradient of sample n is "
            "the outer product of grad_output[n] and x[n], so x's norm is a factor too.": (
                np.linalg.norm(g, axis=1)
            ),
            "that is only the norm of each row of x: grad_output[n] is a factor too.": (
                np.linalg.norm(x, axis=1)
            ),
            "that is the sum of absolute values; the norm is the square root of the sum of "
            "squares.": np.abs(per_sample).sum(axis=(1, 2)),
            "every entry is the norm of the whole batch's gradient: compute one per sample.": (
                np.full(batch, summed)
            ),
        }
        check.expect_close(exercise, f"{call} with {shapes}", got, expected, mistakes)
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 5.3

GUARD = "With bias=None there is nothing to add: guard the addition with `if bias is not None:`."


def _apply(exercise: str, cls: type[Function], args: tuple, call: str, hint: str) -> Variable:
    output = _call(exercise, cls.apply, args, call, hint)
    if isinstance(output, tuple):
        check.fail(exercise, f"{call} returned a tuple; forward has one output, return it alone.")
    if not isinstance(output, Variable):
        check.fail(exercise, f"{call} returned {check.with_article(output)}, not a Variable.")
    if output.grad_fn is None:
        check.fail(
            exercise,
            f"{call} recorded nothing (no grad_fn): forward should return a floating-point "
            f"result computed from its inputs.",
        )
    return output


def _saved_zero_bias(output: Variable, out_features: int) -> bool:
    """Whether forward saved an all-zero vector of the bias's shape (a made-up zero bias)."""
    try:
        saved = output.grad_fn.saved_tensors
    except RuntimeError:
        return False
    for value in saved:
        data = value.data if isinstance(value, Variable) else value
        if isinstance(data, np.ndarray) and data.shape == (out_features,) and not data.any():
            return True
    return False


def _backward(exercise: str, output: Variable, upstream: np.ndarray, with_bias: bool) -> None:
    try:
        output.backward(Variable(upstream))
    except NotImplementedError:  # before RuntimeError, of which it is a subclass
        check.not_written(exercise)
    except RuntimeError as error:
        text = str(error)
        if isinstance(error, GradientForNonVariableError) and not with_bias:
            check.fail(
                exercise,
                "with bias=None, backward returned a gradient for bias. There is no bias to "
                "receive it: return None in its place (`return grad_x, grad_weight, None`). If "
                "forward replaced the missing bias by zeros, skip the addition instead.",
            )
        if isinstance(error, GradientCountError):
            check.fail(
                exercise,
                f"{text} forward has three inputs (x, weight, bias), so backward returns three "
                f"values, None for a bias that is None.",
            )
        if isinstance(error, GradientShapeError):
            check.fail(
                exercise,
                f"a gradient has the wrong shape: {text} grad_x has x's shape (N, in), grad_W "
                f"W's (out, in), grad_b b's (out,).",
            )
        check.fail(exercise, f"backward raised RuntimeError: {text}")
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        where = "with bias=None " if not with_bias else ""
        guard = (
            " Compute grad_bias only when the saved bias is not None, and return None for it "
            "otherwise."
            if not with_bias
            else ""
        )
        check.fail(
            exercise, f"backward {where}raised {type(error).__name__}: {_sentence(error)}{guard}"
        )


def _grad_of(exercise: str, leaf: Variable, name: str) -> np.ndarray:
    if leaf.grad is None:
        check.fail(
            exercise,
            f"{name}.grad is None after backward: did backward return None for {name}, or "
            f"return the gradients in another order than (x, weight, bias)?",
        )
    return np.asarray(leaf.grad.data, dtype=np.float64)


def check_5_3(linear: Any) -> None:
    """A linear Function whose bias may be None: forward skips it, backward returns None."""
    exercise = "5.3"
    name = "LinearOptionalBias"
    cls = check.function_class(exercise, linear, name)
    case = _case(*RECTANGULAR)
    x_data, w_data, b_data, g = case["x"], case["W"], case["b"], case["g"]
    out_features = w_data.shape[0]

    # With a bias: the ordinary layer.
    x, w, b = _leaf(x_data), _leaf(w_data), _leaf(b_data)
    y = _apply(exercise, cls, (x, w, b), f"{name}.apply(x, W, b)", "")
    check.expect_close(
        exercise,
        f"{name}.apply(x, W, b)",
        y,
        x_data @ w_data.T + b_data,
        {"the bias is missing: with a bias, add it.": x_data @ w_data.T},
    )
    _backward(exercise, y, g, with_bias=True)
    check.expect_close(exercise, "x.grad", _grad_of(exercise, x, "x"), g @ w_data)
    check.expect_close(exercise, "W.grad", _grad_of(exercise, w, "W"), g.T @ x_data)
    check.expect_close(
        exercise,
        "b.grad",
        _grad_of(exercise, b, "b"),
        g.sum(0),
        {
            "that is the mean over the batch; sum: grad_output.sum(0).": g.mean(0),
            "that is all zeros: the bias gets grad_output summed over the batch, "
            "grad_output.sum(0). (Only a bias that is None gets no gradient, and then None, "
            "not zeros.)": np.zeros_like(g.sum(0)),
        },
    )

    # A bias of zeros, on a batch of one sample: still a bias, so it gets its gradient.
    case = _case(1, 3, 2, 32)
    x, w, b = _leaf(case["x"]), _leaf(case["W"]), _leaf(np.zeros(2))
    y = _apply(exercise, cls, (x, w, b), f"{name}.apply(x, W, zeros)", "")
    check.expect_close(exercise, f"{name}.apply(x, W, zeros)", y, case["x"] @ case["W"].T)
    _backward(exercise, y, case["g"], with_bias=True)
    if b.grad is None:
        check.fail(
            exercise,
            "with a bias of zeros (a Variable, not None), b.grad is None after backward: a "
            "zero bias is still a bias and gets grad_output.sum(0). Test `bias is None`, not "
            "the bias's values.",
        )
    check.expect_close(
        exercise,
        "b.grad (a bias of zeros, one sample)",
        b.grad,
        case["g"].sum(0),
        shape_hint="the bias gradient sums over the batch axis, which leaves it out, even "
        "for a batch of one sample: grad_output.sum(0).",
    )

    # Without: forward must skip the bias, backward return None for it.
    x, w = _leaf(x_data), _leaf(w_data)
    y = _apply(
        exercise,
        cls,
        (x, w, None),
        f"{name}.apply(x, W, None)",
        f"Forward crashed on the missing bias. {GUARD}",
    )
    check.expect_close(exercise, f"{name}.apply(x, W, None)", y, x_data @ w_data.T)
    made_zero_bias = _saved_zero_bias(y, out_features)
    _backward(exercise, y, g, with_bias=False)
    check.expect_close(exercise, "x.grad (bias=None)", _grad_of(exercise, x, "x"), g @ w_data)
    check.expect_close(exercise, "W.grad (bias=None)", _grad_of(exercise, w, "W"), g.T @ x_data)
    if made_zero_bias:
        check.fail(
            exercise,
            "the values are right, but forward saved a vector of zeros in place of the missing "
            "bias: adding a zero bias costs an addition and a gradient nobody uses. "
            f"{GUARD}",
        )

    case = _case(4, 3, 2, 31)
    inputs = (_leaf(case["x"]), _leaf(case["W"]), _leaf(case["b"]))
    _gradcheck(exercise, cls.apply, inputs, f"{name}.apply, (x, W, b)")
    _gradcheck(
        exercise,
        lambda x_, w_: cls.apply(x_, w_, None),
        inputs[:2],
        f"lambda x, W: {name}.apply(x, W, None), (x, W)",
    )
    check.passed(exercise)


# --------------------------------------------------------------------------- Exercise 5.4
# A bilinear layer with one output: y[n] = sum_ij x1[n, i] W[i, j] x2[n, j] + b, with x1
# (N, p), W (p, q), x2 (N, q), b a single number and grad_output G of shape (N,). Its
# gradients: G[:, None] (x2 Wᵀ), x1ᵀ (G[:, None] x2), G[:, None] (x1 W) and the sum of G.

# (N, p, q, seed): p != q first, where a wrong product shows as a wrong shape; then
# p = q, where only the values tell; then a batch of one sample.
BILINEAR_CASES = ((5, 3, 4, 41), (4, 3, 3, 42), (1, 2, 3, 43))
BILINEAR_NAMES = ("grad_x1", "grad_W", "grad_x2", "grad_b")
BILINEAR_CALL = "bilinear_backward(x1, W, x2, grad_output)"


def bilinear_forward(x1: Any, weight: Any, x2: Any, bias: Any) -> Any:
    """y = ((x1 @ W) * x2).sum(1) + b: for each sample n, x1[n] W x2[n] + b, shape (N,)."""
    return ((x1 @ weight) * x2).sum(1) + bias


def bilinear_backward(x1: Any, weight: Any, x2: Any, grad_output: Any) -> tuple:
    """The gradients of y[n] = x1[n] W x2[n] + b for x1 (N, p), W (p, q), x2 (N, q) and b:
    G (x2 Wᵀ) row by row, x1ᵀ (G x2), G (x1 W) row by row, and the sum of G (shape ())."""
    column = grad_output.unsqueeze(1)  # (N, 1): each sample's gradient, along its row
    return (
        column * (x2 @ weight.T),
        x1.T @ (column * x2),
        column * (x1 @ weight),
        grad_output.sum(),
    )


def _bilinear_expected(x1: np.ndarray, w: np.ndarray, x2: np.ndarray, g: np.ndarray) -> dict:
    column = g[:, None]
    return {
        "grad_x1": column * (x2 @ w.T),
        "grad_W": x1.T @ (column * x2),
        "grad_x2": column * (x1 @ w),
        "grad_b": np.asarray(g.sum()),
    }


def _bilinear_mistakes(
    x1: np.ndarray, w: np.ndarray, x2: np.ndarray, g: np.ndarray
) -> dict[str, dict[str, np.ndarray]]:
    """For each gradient, hint -> the value a known slip gives (those whose products do not
    fit at these sizes are left out: their shape gives them away first)."""
    column = g[:, None]
    formulas = {
        "grad_x1": {
            "grad_output is missing: y[n] is scaled by its own grad_output[n], so each row "
            "of the gradient is too, grad_output.unsqueeze(1) * (x2 @ W.T).": lambda: x2 @ w.T,
            "that is grad_output * (x2 @ W): x1[n, i] meets W[i, j] x2[n, j], a sum over j, "
            "the second index of W: x2 @ W.T.": lambda: column * (x2 @ w),
            "that is x2's gradient, grad_output * (x1 @ W): the two inputs swapped places.": (
                lambda: column * (x1 @ w)
            ),
        },
        "grad_W": {
            "grad_output is missing: W[i, j] meets x1[n, i] x2[n, j] in sample n, and that "
            "sample's term is scaled by grad_output[n]: x1.T @ (grad_output.unsqueeze(1) * "
            "x2).": lambda: x1.T @ x2,
            "that is the transpose: grad_W[i, j] = sum_n grad_output[n] x1[n, i] x2[n, j], "
            "with i (x1's axis) first, like W.": lambda: (column * x2).T @ x1,
            "that is x1.T @ x2 times the sum of grad_output: each sample's outer product is "
            "scaled by its own grad_output[n] before the sum over the batch, not by the "
            "total.": lambda: (x1.T @ x2) * g.sum(),
            "that is the mean over the batch: the gradient of a sum over samples is their "
            "sum, no division by N.": lambda: x1.T @ (column * x2) / len(g),
        },
        "grad_x2": {
            "grad_output is missing: each row is scaled by its sample's grad_output[n], "
            "grad_output.unsqueeze(1) * (x1 @ W).": lambda: x1 @ w,
            "that is grad_output * (x1 @ W.T): x2[n, j] meets x1[n, i] W[i, j], a sum over i, "
            "the first index of W: x1 @ W.": lambda: column * (x1 @ w.T),
            "that is x1's gradient, grad_output * (x2 @ W.T): the two inputs swapped "
            "places.": lambda: column * (x2 @ w.T),
        },
        "grad_b": {
            "that is the mean of grad_output: b is added to every sample, so its gradient "
            "adds up all of them, grad_output.sum().": lambda: g.mean(),
            "that is N, the number of samples: each sample adds grad_output[n], not 1, so "
            "grad_b = grad_output.sum().": lambda: float(len(g)),
        },
    }
    mistakes: dict[str, dict[str, np.ndarray]] = {}
    for name, hints in formulas.items():
        mistakes[name] = {}
        for hint, formula in hints.items():
            try:
                mistakes[name][hint] = formula()
            except ValueError:  # the product does not fit at these sizes
                continue
    return mistakes


def _bilinear_shape_hints(exercise: str, grads: tuple, shapes: dict[str, tuple]) -> None:
    """Hints for the shapes the usual slips give, before the plain shape comparison."""
    (batch, p), (_, q) = shapes["x1"], shapes["x2"]
    grad_x1, grad_w, grad_x2, grad_b = (np.shape(value) for value in grads)
    if p != q and grad_x1 == (batch, q):
        check.fail(
            exercise,
            f"grad_x1 has shape {(batch, q)}, x2's shape; x1's gradient has x1's shape "
            f"{(batch, p)}. Did you swap the two inputs' gradients, or multiply by W where "
            f"W.T belongs?",
        )
    if p != q and grad_x2 == (batch, p):
        check.fail(
            exercise,
            f"grad_x2 has shape {(batch, p)}, x1's shape; x2's gradient has x2's shape "
            f"{(batch, q)}. Did you swap the two inputs' gradients, or multiply by W.T where "
            f"W belongs?",
        )
    if grad_w in ((batch, p, q), (batch, q, p)) and batch > 1:
        check.fail(
            exercise,
            f"grad_W has shape {grad_w}: one gradient per sample. W is shared by the whole "
            f"batch, so its gradient adds them up; one matrix product, x1.T @ (...), does "
            f"that sum and gives W's shape {(p, q)}.",
        )
    if grad_b == (batch,) and batch > 1:
        check.fail(
            exercise,
            f"grad_b has shape ({batch},), one number per sample; b is a single number added "
            f"to every sample, so its gradient adds them up: grad_output.sum(), shape ().",
        )
    if grad_b in ((1,), (1, 1)):
        check.fail(
            exercise,
            f"grad_b has shape {grad_b}; b is a single number, shape (), so its gradient is "
            f"one too: grad_output.sum(), without keepdim.",
        )


BILINEAR_SHAPES = (
    "Check each product's shapes against what it must give: grad_x1 has x1's shape (N, p), "
    "grad_W W's (p, q), grad_x2 x2's (N, q); grad_output is (N,), so turn it into a column, "
    "grad_output.unsqueeze(1), before multiplying it into an (N, p) or (N, q) matrix."
)


def _bilinear_diagnosis(fn: Callable[..., Any]) -> str | None:
    """When bilinear_backward fails where p != q, run it on the p = q case and name the
    known slip its values match, if any."""
    batch, p, q, seed = BILINEAR_CASES[1]
    rng = np.random.default_rng(seed)
    x1, w = rng.normal(size=(batch, p)), rng.normal(size=(p, q))
    x2, g = rng.normal(size=(batch, q)), rng.normal(size=batch)
    try:
        result = fn(_leaf(x1, False), _leaf(w, False), _leaf(x2, False), _leaf(g, False))
        grads = [np.asarray(getattr(value, "data", value), dtype=float) for value in result]
    except Exception:  # noqa: BLE001 - no diagnosis, the original error is reported
        return None
    if len(grads) != 4:
        return None
    mistakes = _bilinear_mistakes(x1, w, x2, g)
    for name, got in zip(BILINEAR_NAMES, grads):
        for hint, wrong in mistakes[name].items():
            if _same(got, np.asarray(wrong)):
                return (
                    f"With p = q, where every product fits, the function runs, and its {name} "
                    f"shows the slip: {hint}"
                )
    return None


BILINEAR_ARGUMENTS = ("x1", "W", "x2", "grad_output")


def _bilinear_inputs_unchanged(
    exercise: str, args: tuple[Variable, ...], originals: tuple[np.ndarray, ...]
) -> None:
    """A CheckError if bilinear_backward wrote into one of its inputs (x1.data *= ..., or
    x2.data = ...): as a backward that corrupts the saved inputs, and the caller's arrays."""
    for name, variable, original in zip(BILINEAR_ARGUMENTS, args, originals):
        now = np.asarray(variable.data)
        if now.shape != original.shape or not np.array_equal(now, original):
            check.fail(
                exercise,
                f"bilinear_backward changed {name} in place: compute new arrays, leave the "
                f"inputs as they are. A backward gets the inputs saved by forward, and the "
                f"caller still uses them after it.",
            )


class _BilinearWith(Function):
    """y = x1 W x2 + b per sample, with the learner's bilinear_backward as its backward."""

    @staticmethod
    def forward(ctx: Any, x1: Variable, weight: Variable, x2: Variable, bias: Variable) -> Any:
        ctx.save_for_backward(x1, weight, x2)
        return bilinear_forward(x1, weight, x2, bias)

    @classmethod
    def with_backward(cls, backward_fn: Callable[..., Any]) -> type[Function]:
        def backward(ctx: Any, grad_output: Variable) -> tuple:
            x1, weight, x2 = ctx.saved_tensors
            return tuple(backward_fn(x1, weight, x2, grad_output))

        return type("BilinearWithYourBackward", (cls,), {"backward": staticmethod(backward)})


def check_5_4(bilinear_backward: Any) -> None:
    """bilinear_backward(x1, W, x2, grad_output) -> (grad_x1, grad_W, grad_x2, grad_b) for
    y[n] = x1[n] W x2[n] + b: x1 (N, p), W (p, q), x2 (N, q), b and the answer's grad_b
    shape (), grad_output (N,)."""
    exercise = "5.4"
    fn = _callable(exercise, bilinear_backward, "bilinear_backward")
    for batch, p, q, seed in BILINEAR_CASES:
        rng = np.random.default_rng(seed)
        x1, w = rng.normal(size=(batch, p)), rng.normal(size=(p, q))
        x2 = rng.normal(size=(batch, q))
        g = rng.normal(size=batch)
        shapes = f"x1 {x1.shape}, W {w.shape}, x2 {x2.shape}, grad_output {g.shape}"
        args = (_leaf(x1, False), _leaf(w, False), _leaf(x2, False), _leaf(g, False))
        try:
            result = fn(*args)
        except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
            if check.is_stub(error):
                check.not_written(exercise)
            hint = _bilinear_diagnosis(fn) or BILINEAR_SHAPES
            check.fail(
                exercise,
                f"{BILINEAR_CALL} with {shapes} raised {type(error).__name__}: "
                f"{_sentence(error)} {hint}",
            )
        _bilinear_inputs_unchanged(exercise, args, (x1, w, x2, g))
        if not isinstance(result, (tuple, list)) or len(result) != 4:
            got = f"{len(result)} values" if isinstance(result, (tuple, list)) else (
                check.with_article(result)
            )
            check.fail(
                exercise,
                f"{BILINEAR_CALL} returned {got}; return four gradients, one per input of the "
                f"layer: (grad_x1, grad_W, grad_x2, grad_b).",
            )
        grads = tuple(
            check.as_array(exercise, name, value) for name, value in zip(BILINEAR_NAMES, result)
        )
        _bilinear_shape_hints(exercise, grads, {"x1": x1.shape, "x2": x2.shape})
        expected = _bilinear_expected(x1, w, x2, g)
        mistakes = _bilinear_mistakes(x1, w, x2, g)
        for name, got in zip(BILINEAR_NAMES, grads):
            check.expect_close(
                exercise, f"{name} (with {shapes})", got, expected[name], mistakes[name]
            )
    rng = np.random.default_rng(44)
    inputs = (
        _leaf(rng.normal(size=(3, 2))),
        _leaf(rng.normal(size=(2, 4))),
        _leaf(rng.normal(size=(3, 4))),
        _leaf(rng.normal()),
    )
    wrapped = _BilinearWith.with_backward(fn)
    _gradcheck(exercise, wrapped.apply, inputs, "a Function whose backward is bilinear_backward")
    check.passed(exercise)
