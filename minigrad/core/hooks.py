"""What the engine does around a node beyond calling its backward.

Before a node runs: its gradient hooks (`register_hook`), the gradients of non-leaves
that called `retain_grad()`, and the gradients `grad()` or `backward(inputs=...)` asked
for.
"""

from __future__ import annotations

from typing import Any

from minigrad.core import checks, kinds
from minigrad.core.function import BackwardNode
from minigrad.core.state import state
from minigrad.core.variable import Variable


def before_node(
    node: Any, grads: list, targets: dict | None, captured: dict, accumulate: bool
) -> None:
    """Run hooks, keep retained gradients, and catch the gradients `grad()` asked for."""
    if node._pre_hooks or node._retained:
        # A hook is Python code a replay would not run; grad() and backward(inputs=) only
        # pick gradients the recorded formulas made, which a replay makes too.
        state.listener.unsupported(
            "gradient hooks or retain_grad(): a replay would not call the hooks or keep "
            "those gradients; take them out of the compiled step"
        )
    for output_nr, hooks in (node._pre_hooks or {}).items():
        for hook in list(hooks):
            if grads[output_nr] is None:
                break
            replaced = hook(grads[output_nr])
            if replaced is not None:
                grads[output_nr] = checks.hook_result(hook, grads[output_nr], replaced)
    if node._retained:
        for output_nr, reference in node._retained.items():
            variable = reference()
            if variable is not None and grads[output_nr] is not None:
                accumulate_into(variable, grads[output_nr], state.grad_enabled)
    if targets is None:
        return
    for output_nr, g in enumerate(grads):
        for index, variable in targets.get((node, output_nr), ()):
            if accumulate and type(node) is BackwardNode:
                # backward(inputs=[non_leaf]) fills that Variable's .grad.
                if g is not None and not variable._retains_grad:
                    accumulate_into(variable, g, state.grad_enabled)
            elif not accumulate:
                captured[index] = g


def accumulate_into(variable: Variable | None, g: Variable | None, create_graph: bool) -> None:
    """Add `g` into `variable.grad`, the way gradients of its kind add up."""
    if variable is None or g is None:
        return
    previous = variable._grad
    # Numbers: a sum; feedback texts: joined.
    variable._grad = kinds.kind_of(variable._data).accumulate(variable, g, create_graph)
    # minigrad.compile replays this accumulation
    state.listener.accumulate(variable, previous, g)


def targets_of(inputs: list[Variable]) -> dict:
    """Map each input's place in the graph, (node, output_nr), to [(index, input)]."""
    targets: dict = {}
    for index, variable in enumerate(inputs):
        checks.target(variable, index)
        if variable._grad_fn is not None:
            edge = (variable._grad_fn, variable._output_nr)
        else:
            edge = (variable._accumulator(), 0)
        targets.setdefault(edge, []).append((index, variable))
    return targets


def leading_to(targets: dict, consumers: dict) -> set:
    """The nodes from which some target can be reached: walk the edges backwards."""
    needed = {node for node, _ in targets}
    stack = list(needed)
    while stack:
        node = stack.pop()
        for consumer in consumers.get(node, ()):
            if consumer not in needed:
                needed.add(consumer)
                stack.append(consumer)
    return needed
