"""Text Functions that assemble and take apart texts: Format, Join and Split.

Their backward routes feedback by role (see feedback.route): each input gets the lines
that concern it, so a template's fixed words never receive feedback they cannot act on.
"""

from __future__ import annotations

from typing import Any

from minigrad.autodiff.function import Function, FunctionCtx
from minigrad.text import feedback as language
from minigrad.variable import Variable


def _text_of(value: Any, who: str, position: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Variable) and value.is_text:
        return value.data
    kind = (
        f"a numeric Variable of shape {value.shape}"
        if isinstance(value, Variable)
        else (type(value).__name__)
    )
    raise TypeError(f"{who}: {position} must be text (a text Variable or a str); got {kind}.")


def _role_of(value: Any, fallback: str) -> str:
    return value.role if isinstance(value, Variable) and value.role else fallback


def _routed(ctx: FunctionCtx, feedback: Variable, skip: int) -> tuple:
    """One feedback Variable (or None) per input after the first `skip` plain arguments."""
    if feedback is None:
        return (None,) * (skip + len(ctx.parts))
    shares = language.route(feedback.data, ctx.parts)
    grads: list[Any] = [None] * skip
    for (role, _), share, needed in zip(ctx.parts, shares, ctx.needs_input_grad[skip:]):
        grads.append(Variable(share, role=f"feedback to {role}") if needed and share else None)
    return tuple(grads)


class Format(Function):
    """y = template filled with the named texts; each input gets the feedback that concerns it."""

    @staticmethod
    def forward(ctx: FunctionCtx, template: str, names: tuple, *values: Any) -> str:
        if not isinstance(template, str):
            raise TypeError(f"format: the template must be a str; got {type(template).__name__}.")
        texts = {name: _text_of(v, "format", f"{name}=") for name, v in zip(names, values)}
        try:
            filled = template.format(**texts)
        except KeyError as error:
            raise ValueError(
                f"format: the template uses {{{error.args[0]}}} but no text was given for it; "
                f"given: {', '.join(names) or 'none'}."
            ) from None
        except (IndexError, ValueError) as error:
            raise ValueError(
                f"format: the template {template!r} cannot be filled ({error}); use named "
                f"fields such as {{title}}, and {{{{ }}}} for literal braces."
            ) from None
        ctx.parts = [(_role_of(v, name), texts[name]) for name, v in zip(names, values)]
        return filled

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        return _routed(ctx, feedback, skip=2)


def format(template: str, **values: Variable | str) -> Variable:  # noqa: A001 (afnio's name)
    """Fill `template` ("Write about {topic}") from named text Variables (or str)."""
    names = tuple(values)
    return Format.apply(template, names, *values.values())


class Join(Function):
    """y = separator.join(parts); each part gets the feedback that concerns it."""

    @staticmethod
    def forward(ctx: FunctionCtx, separator: str, *parts: Any) -> str:
        if not isinstance(separator, str):
            raise TypeError(f"join: the separator must be a str; got {type(separator).__name__}.")
        texts = [_text_of(p, "join", f"part {i}") for i, p in enumerate(parts)]
        ctx.parts = [(_role_of(p, f"part {i}"), t) for i, (p, t) in enumerate(zip(parts, texts))]
        return separator.join(texts)

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        return _routed(ctx, feedback, skip=1)


def join(parts: list[Variable | str], separator: str = " ") -> Variable:
    """The parts joined with `separator` between them."""
    if not isinstance(parts, (list, tuple)) or not parts:
        raise TypeError("join expects a non-empty list of texts.")
    return Join.apply(separator, *parts)


class Split(Function):
    """(y₀, y₁, ...) = x split at `separator` (whitespace when None); x gets all their feedback."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, separator: str | None) -> tuple:
        text = _text_of(x, "split", "the input")
        if separator is not None and (not isinstance(separator, str) or not separator):
            raise ValueError(
                f"split: the separator must be a non-empty str or None; got {separator!r}."
            )
        pieces = text.split(separator)
        if not pieces:
            raise ValueError("split: the text is empty (or only whitespace): nothing to split.")
        ctx.pieces = pieces
        return tuple(pieces)

    @staticmethod
    def backward(ctx: FunctionCtx, *feedbacks: Variable) -> tuple:
        if not ctx.needs_input_grad[0]:
            return None, None
        lines = []
        for index, (piece, item) in enumerate(zip(ctx.pieces, feedbacks)):
            if item is not None and item.data.strip():
                for line in item.data.splitlines():
                    lines.append(f'In part {index} ("{piece}"): {line}')
        if not lines:
            return None, None
        return Variable("\n".join(lines), role="feedback to the split text"), None


def split(x: Variable | str, separator: str | None = None) -> tuple[Variable, ...]:
    """The pieces of `x` between separators (whitespace runs when None)."""
    return Split.apply(x, separator)
