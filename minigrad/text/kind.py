"""Text as a kind of value: how the engine handles text Variables and their feedback.

The engine knows values only through the table of value kinds (minigrad/core/variable.py).
This module adds the row for `str`: the gradient of a text is feedback (a text too), two pieces of
feedback for the same text are joined with a blank line, and an evaluator's explanation is
its own feedback. It also registers what `+` and `[]` do on text (Concat, Slice).
"""

from __future__ import annotations

from typing import Any

from minigrad.core.variable import Kind, Variable, register_kind
from minigrad.ops.table import TEXT_OPERATORS
from minigrad.text.concat import Concat, Slice


def join_feedback(first: Variable, second: Variable, role: str | None = None) -> Variable:
    """Two pieces of textual feedback for the same Variable, separated by a blank line."""
    joined = Variable._make(first.data + "\n\n" + second.data)
    joined.role = role
    return joined


def _accumulate(leaf: Variable, feedback: Variable, create_graph: bool) -> Variable:
    """The leaf's feedback so far and the new piece; it gets the role "feedback to <role>"."""
    role = f"feedback to {leaf.role}" if leaf.role else "feedback"
    if leaf._grad is None:
        fresh = Variable._make(feedback.data)
        fresh.role = feedback.role or role
        return fresh
    return join_feedback(leaf._grad, feedback, role)


def _seed(output: Variable, index: int) -> str:
    """An evaluator's explanation is its own feedback; any other text needs one given."""
    node = output.grad_fn  # None for a text leaf
    if node is not None and getattr(node._function, "explains", False):
        return output.data
    raise RuntimeError(
        f"element {index} is a text Variable: its gradient is feedback, which "
        f"cannot be created implicitly. Pass it: "
        f"output.backward(Variable('...your feedback...'))."
    )


def _zeros(shape: Any, dtype: Any) -> str:
    return ""  # no feedback


TEXT = Kind(
    "text", zeros=_zeros, add=join_feedback, accumulate=_accumulate, seed=_seed, has_shape=False
)
register_kind(str, TEXT)
TEXT_OPERATORS["__add__"] = Concat.apply
TEXT_OPERATORS["__getitem__"] = Slice.apply
