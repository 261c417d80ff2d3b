"""afnio's textual backward sets `x.grad = feedback` and also returns it: add it once.

While the engine runs backward formulas, `state.grad_assignments` is a GradAssignments
log and Variable's `.grad` setter notes each assignment in it. After a node's backward,
a leaf input whose .grad was set to exactly the gradient the backward also returned gets
its previous .grad back; the engine then accumulates the returned gradient, once.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.variable import AccumulateGrad


class GradAssignments:
    """The (variable, previous .grad) of each `.grad = ...` made during one backward pass."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, Any]] = []

    def note(self, variable: Any, previous: Any) -> None:
        self.entries.append((variable, previous))

    def mark(self) -> int:
        """Where the log stands before a node's backward runs."""
        return len(self.entries)

    def undo_returned(self, node: Any, input_grads: list, since: int) -> None:
        """Undo the assignments made since `since` whose gradient the node also returned."""
        if len(self.entries) == since:
            return  # the usual case: the backward set no .grad
        for variable, previous in reversed(self.entries[since:]):
            for next_node, input_grad in zip(node._next_nodes, input_grads):
                if (
                    type(next_node) is AccumulateGrad
                    and next_node.variable is variable
                    and input_grad is not None
                    and variable._grad is input_grad
                ):
                    variable._grad = previous
        del self.entries[since:]
