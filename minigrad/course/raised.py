"""Where an error came from, for checks that match errors by type and fields, never words.

Most of the engine's errors are typed and carry their data (minigrad.core.errors). A
few refusals are plain RuntimeError or TypeError; a check recognises those by their type
and by the place that raises them, found by making the same mistake here on purpose. And
an error in the learner's own function is explained from the values it had (the locals of
their frame when it failed), not from the message Python wrote.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import CodeType
from typing import Any

from minigrad.core.function import Function
from minigrad.core.grad_mode import enable_grad
from minigrad.core.variable import Variable


def raise_site(error: BaseException) -> CodeType | None:
    """The code object of the function whose `raise` produced `error` (the innermost frame
    of its traceback), or None for an error that was never raised."""
    traceback = error.__traceback__
    if traceback is None:
        return None
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback.tb_frame.f_code


def raised_in(error: BaseException, function: Callable) -> bool:
    """True when `error` was raised by `function`'s own code (not by something it called)."""
    code = getattr(function, "__code__", None)
    return code is not None and raise_site(error) is code


def local_of(error: BaseException, function: Callable, name: str) -> Any:
    """The value the local variable `name` had in `function`'s frame when `error` went
    through it (None when the function did not run, or has no such local)."""
    code = getattr(function, "__code__", None)
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is code:
            return traceback.tb_frame.f_locals.get(name)
        traceback = traceback.tb_next
    return None


def learner_locals(error: BaseException, function: Callable) -> list[dict[str, Any]]:
    """The local variables of every frame `error` went through that runs code from the
    same file as `function` (the learner's cell or module: their function, and any helper
    or comprehension written beside it), innermost last."""
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    found = []
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == code.co_filename:
            found.append(dict(traceback.tb_frame.f_locals))
        traceback = traceback.tb_next
    return found


def _same_kind(error: BaseException, reference: tuple[type, CodeType | None]) -> bool:
    kind, site = reference
    return type(error) is kind and site is not None and raise_site(error) is site


@functools.cache
def _leaf_in_place() -> tuple[type, CodeType | None]:
    with enable_grad():
        leaf = Variable(1.0, requires_grad=True)
        try:
            leaf -= 1.0
        except RuntimeError as error:
            return type(error), raise_site(error)
    raise AssertionError("an in-place change of a leaf that requires grad was not refused")


def is_leaf_in_place_error(error: BaseException) -> bool:
    """True for the refusal of an in-place change of a leaf that requires grad under grad
    mode (`w -= lr * w.grad` outside no_grad)."""
    return _same_kind(error, _leaf_in_place())


class _ForwardWithoutReturn(Function):
    """A forward that forgets `return`, to see how apply refuses it."""

    @staticmethod
    def forward(ctx: Any, x: Variable) -> None:
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx: Any, grad_output: Variable) -> Variable:
        return grad_output


@functools.cache
def _forward_returned_none() -> tuple[type, CodeType | None]:
    with enable_grad():
        try:
            _ForwardWithoutReturn.apply(Variable(1.0, requires_grad=True))
        except TypeError as error:
            return type(error), raise_site(error)
    raise AssertionError("a forward that returned None was not refused")


def is_forward_returned_none(error: BaseException) -> bool:
    """True for apply's refusal of a forward that returned None (a missing `return`)."""
    return _same_kind(error, _forward_returned_none())
