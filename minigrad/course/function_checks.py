"""Running a learner's Function inside a check, and explaining what goes wrong by type.

Lessons 05, 06, 07 and 09 ask for custom Functions. The checks run them through a *spy*, a
subclass that records what forward and backward returned, so a hint can say what the
learner's code produced ("backward returned a list of 2 values") instead of parsing the
engine's message. Errors are told apart by their type and fields only: the engine's typed
errors (GradientCountError.expected and .got, GradientShapeError.index, ...) and
AttributeError's `.name` and `.obj`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad.core.errors import (
    GradientCountError,
    GradientForNonVariableError,
    GradientShapeError,
)
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.course import check

# What forward returned, before apply wraps it.
NOTHING = object()


class Spied:
    """The last values a spied Function's forward and backward returned (NOTHING before
    the first call)."""

    def __init__(self) -> None:
        self.forward: Any = NOTHING
        self.backward: Any = NOTHING


def spy(cls: type[Function], seen: Spied) -> type[Function]:
    """A subclass of `cls` whose forward and backward record what they return in `seen`.

    The wrappers keep the learner's signatures (functools.wraps sets __wrapped__, which
    inspect.signature follows), so apply still tells the two forward styles apart and still
    explains a forward whose parameters do not fit."""
    namespace: dict[str, Any] = {}
    forward = cls._forward  # the forward the learner wrote (apply calls it as _forward)
    if forward is not Function._forward:

        @functools.wraps(forward)
        def spied_forward(*args: Any, **kwargs: Any) -> Any:
            seen.forward = forward(*args, **kwargs)
            return seen.forward

        namespace["forward"] = staticmethod(spied_forward)
    backward = cls.backward

    @functools.wraps(backward)
    def spied_backward(*args: Any, **kwargs: Any) -> Any:
        seen.backward = backward(*args, **kwargs)
        return seen.backward

    namespace["backward"] = staticmethod(spied_backward)
    spied = type(cls.__name__, (cls,), namespace)
    spied.__qualname__ = cls.__qualname__
    return spied


def count(number: int, noun: str) -> str:
    """'1 value', '2 values'."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def apply(
    exercise: str,
    cls: type[Function],
    args: tuple,
    call: str,
    seen: Spied,
    hints: Sequence[check.HintRule] = (),
) -> Any:
    """spy(cls, seen).apply(*args); an error becomes a hint. A forward that returned None
    is named from what it returned, every other error through `hints` (see
    check.explain_error)."""
    seen.forward = NOTHING
    try:
        return spy(cls, seen).apply(*args)
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if seen.forward is None:
            check.fail(exercise, f"{call}: forward returned None; did you forget `return`?")
        check.explain_error(exercise, call, error, hints)


def one_output(exercise: str, output: Any, call: str) -> Variable:
    """The single Variable a one-output Function returns, or a hint about what it is."""
    if isinstance(output, tuple):
        check.fail(
            exercise,
            f"{call} returned a tuple of {count(len(output), 'value')}; forward has one "
            f"output, so return it alone, not inside a tuple.",
        )
    if not isinstance(output, Variable):
        check.fail(exercise, f"{call} returned {check.with_article(output)}, not a Variable.")
    return output


def reads_missing_ctx_attribute(error: BaseException) -> bool:
    """An AttributeError raised by reading an attribute of a ctx that forward never set."""
    return isinstance(error, AttributeError) and isinstance(
        getattr(error, "obj", None), FunctionCtx
    )


def run_backward(
    exercise: str,
    output: Variable,
    upstream: Any,
    seen: Spied,
    *,
    returns: str,
    count_hint: str,
    number_hint: str,
    shape_hint: Callable[[GradientShapeError], str] | None = None,
    hints: Sequence[check.HintRule] = (),
) -> None:
    """output.backward(upstream) through a spied Function; what goes wrong becomes a hint.

    `returns` is what backward should return, e.g. "grad_a, grad_b"; `count_hint` follows
    a wrong number of gradients, `number_hint` a gradient for a plain-number input,
    `shape_hint(error)` a gradient of the wrong shape (default: a gradient has its input's
    shape)."""
    if output.grad_fn is None:
        check.fail(
            exercise,
            "the output has no grad_fn, so nothing was recorded: forward should return a "
            "floating-point result computed from its inputs.",
        )
    seen.backward = NOTHING
    try:
        output.backward(upstream if isinstance(upstream, Variable) else Variable(upstream))
    except Exception as error:  # noqa: BLE001 - any error in the learner's code becomes a hint
        if check.is_stub(error):
            check.not_written(exercise)
        returned = seen.backward
        if isinstance(returned, list):
            listed = f"backward returned a list of {count(len(returned), 'value')}"
            if "," not in returns:
                check.fail(exercise, f"{listed}: return the gradient itself, `return {returns}`.")
            check.fail(
                exercise,
                f"{listed}: return a tuple ({returns}), not a list; `return {returns}` makes one.",
            )
        if isinstance(error, GradientCountError):
            check.fail(
                exercise,
                f"backward returned {count(error.got, 'gradient')}, expected {error.expected}: "
                f"{count_hint}",
            )
        if isinstance(error, GradientForNonVariableError):
            check.fail(exercise, number_hint)
        if isinstance(error, GradientShapeError):
            hint = (
                shape_hint(error)
                if shape_hint is not None
                else "A gradient has its input's shape: multiply elementwise, do not sum."
            )
            check.fail(
                exercise,
                f"backward returned a gradient of shape {error.got} for input {error.index}, "
                f"whose shape is {error.expected}. {hint}",
            )
        if reads_missing_ctx_attribute(error):
            check.fail(
                exercise,
                f"backward reads ctx.{error.name}, which forward never set: store what "
                f"backward needs on ctx in forward, and read it under the name forward "
                f"gave it.",
            )
        check.explain_error(exercise, "backward", error, hints)


def grad_of(exercise: str, leaf: Variable, name: str) -> np.ndarray:
    """The gradient stored on a leaf, or a hint when backward gave it none."""
    if leaf.grad is None:
        check.fail(
            exercise,
            f"{name}.grad is None after backward: did backward return None for {name}, or "
            f"return the gradients in another order than forward's inputs?",
        )
    return np.asarray(leaf.grad.data, dtype=np.float64)


def leaf(values: Any, requires_grad: bool = True) -> Variable:
    """A float64 Variable (gradcheck wants float64)."""
    return Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)


__all__ = [
    "NOTHING",
    "Spied",
    "apply",
    "count",
    "grad_of",
    "leaf",
    "one_output",
    "reads_missing_ctx_attribute",
    "run_backward",
    "spy",
]
