"""Text Functions of the engine core: concatenation (`+`) and slicing of text Variables.

Their gradients are feedback texts. Each part of a concatenation shaped the whole, so each
input receives the feedback given on the whole.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.text.template import kind_of, role_of


def _text(value: Any, side: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Variable) and value.is_text:
        return value.data
    raise TypeError(
        f"cannot concatenate text with {kind_of(value)} (the {side} operand); convert it to "
        f"text first, e.g. Variable(str(x.item()))."
    )


class Concat(Function):
    """y = a + b for texts;  each input gets the feedback on y that concerns it.

    Free-text feedback concerns the whole and goes to both; instructions of the feedback
    language (minigrad.text.feedback) go where they can act, as for join().
    """

    @staticmethod
    def forward(ctx: FunctionCtx, a: Any, b: Any) -> str:
        left, right = _text(a, "left"), _text(b, "right")
        ctx.parts = [(role_of(a, "left"), left), (role_of(b, "right"), right)]
        return left + right

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        # Imported here: the feedback language is part of minigrad.text, loaded after this.
        from minigrad.text.feedback import route

        shares = route(feedback.data, ctx.parts, list(ctx.needs_input_grad))
        grads = []
        for needed, share in zip(ctx.needs_input_grad, shares):
            # A plain str operand is not a Variable, so it gets no feedback.
            grads.append(Variable(share, role=feedback.role) if needed and share else None)
        return tuple(grads)


class Slice(Function):
    """y = x[index] for a text;  x gets the feedback on its slice."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable, index: Any) -> str:
        if not isinstance(x, Variable) or not x.is_text:
            raise TypeError(
                f"Slice takes a text Variable (text[index]); got {type(x).__name__}"
                f"{' of numbers' if isinstance(x, Variable) else ''}."
            )
        if not isinstance(index, (int, slice)):
            raise TypeError(
                f"a text Variable is indexed with an int or a slice; got {type(index).__name__}."
            )
        try:
            return x.data[index]
        except IndexError:
            raise IndexError(
                f"index {index} is out of range for a text of length {len(x.data)}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        return feedback, None
