"""Text Functions that assemble and take apart texts: Format, Join and Split.

Their backward routes feedback by role (see feedback.route): each input gets the lines
that concern it, so a template's fixed words never receive feedback they cannot act on.
"""

from __future__ import annotations

import string
from typing import Any

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.text import feedback as language


def text_of(value: Any, who: str, position: str) -> str:
    """The str behind a text Variable or a str; a TypeError naming what came instead."""
    if isinstance(value, str):
        return value
    if isinstance(value, Variable) and value.is_text:
        return value.data
    raise TypeError(
        f"{who}: {position} must be text (a text Variable or a str); got {kind_of(value)}."
    )


def kind_of(value: Any) -> str:
    """What a value that should have been text is, for error messages."""
    if isinstance(value, Variable):
        return f"a numeric Variable of shape {value.shape}"
    return type(value).__name__


def role_of(value: Any, fallback: str) -> str:
    """The role of a text Variable, or `fallback` for a str or a Variable without one."""
    return value.role if isinstance(value, Variable) and value.role else fallback


def _routed(ctx: FunctionCtx, feedback: Variable, skip: int) -> tuple:
    """One feedback Variable (or None) per input after the first `skip` plain arguments."""
    if feedback is None:
        return (None,) * (skip + len(ctx.parts))
    trainable = list(ctx.needs_input_grad[skip:])
    shares = language.route(feedback.data, ctx.parts, trainable)
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
        if not isinstance(names, tuple) or not all(isinstance(name, str) for name in names):
            raise TypeError(
                f"Format.apply(template, names, *values): names must be a tuple of the fields' "
                f"names (str); got {names!r}. Call minigrad.text.format(template, **values)."
            )
        texts = {name: text_of(v, "format", f"{name}=") for name, v in zip(names, values)}
        _check_fields(template)
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
        ctx.parts = [(role_of(v, name), texts[name]) for name, v in zip(names, values)]
        return filled

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        return _routed(ctx, feedback, skip=2)


def _check_fields(template: str) -> None:
    """Only plain named fields: {title}, not {title.upper} or {0} or {items[0]}."""
    try:
        fields = [
            field for _, field, _, _ in string.Formatter().parse(template) if field is not None
        ]
    except ValueError as error:
        raise ValueError(f"format: the template {template!r} is malformed: {error}.") from None
    for field in fields:
        if not field.isidentifier():
            raise ValueError(
                f"format: the field {{{field}}} is not a plain name; templates take named "
                f"fields such as {{title}} (no attributes, indexes or positions)."
            )


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
        texts = [text_of(p, "join", f"part {i}") for i, p in enumerate(parts)]
        ctx.parts = [(role_of(p, f"part {i}"), t) for i, (p, t) in enumerate(zip(parts, texts))]
        return separator.join(texts)

    @staticmethod
    def backward(ctx: FunctionCtx, feedback: Variable) -> tuple:
        return _routed(ctx, feedback, skip=1)


def join(parts: list[Variable | str], separator: str = " ") -> Variable:
    """The parts joined with `separator` between them."""
    if not isinstance(parts, (list, tuple)):
        raise TypeError(
            f"join expects a non-empty list of texts, e.g. join([title, body]); got "
            f"{type(parts).__name__}."
        )
    if not parts:
        raise TypeError(
            "join expects a non-empty list of texts, e.g. join([title, body]); got an empty "
            "list."
        )
    return Join.apply(separator, *parts)


class Split(Function):
    """(y₀, y₁, ...) = x split at `separator` (whitespace when None); x gets all their feedback."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Any, separator: str | None) -> tuple:
        text = text_of(x, "split", "the input")
        if separator is not None and (not isinstance(separator, str) or not separator):
            raise ValueError(
                f"split: the separator must be a non-empty str or None; got {separator!r}."
            )
        pieces = text.split(separator)
        if not pieces:
            raise ValueError("split: the text is empty (or only whitespace): nothing to split.")
        ctx.pieces = pieces
        ctx.role = role_of(x, "text")
        ctx.whole_count = len(language.words_of(text))
        return tuple(pieces)

    @staticmethod
    def backward(ctx: FunctionCtx, *feedbacks: Variable) -> tuple:
        if not ctx.needs_input_grad[0]:
            return None, None
        lines = []
        for index, (piece, item) in enumerate(zip(ctx.pieces, feedbacks)):
            if item is None or not item.data.strip():
                continue
            for line in item.data.splitlines():
                lines.append(f'In part {index} ("{piece}"): {_for_whole(ctx, piece, line)}')
        if not lines:
            return None, None
        return Variable("\n".join(lines), role=f"feedback to {ctx.role}"), None


def _for_whole(ctx: FunctionCtx, piece: str, line: str) -> str:
    """A word limit on one piece, restated for the whole text (the other pieces stay)."""
    instructions = language.parse(line)
    if not instructions or instructions[0].kind not in ("at_most", "at_least"):
        return line
    limit, _ = instructions[0].argument
    whole_limit = ctx.whole_count - len(language.words_of(piece)) + limit
    if instructions[0].kind == "at_most":
        return language.at_most_words(whole_limit, ctx.whole_count)
    return language.at_least_words(whole_limit, ctx.whole_count)


def split(x: Variable | str, separator: str | None = None) -> tuple[Variable, ...]:
    """The pieces of `x` between separators (whitespace runs when None)."""
    return Split.apply(x, separator)
