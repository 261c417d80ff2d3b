"""grad(): the gradients of outputs with respect to chosen inputs, without touching `.grad`.

It runs the engine's walk (minigrad/core/engine.py) with the inputs as targets: only
the nodes that lead to them run, and their gradients are caught instead of accumulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minigrad.core import checks, engine
from minigrad.core.hooks import targets_of
from minigrad.core.state import state
from minigrad.core.variable import Variable


def grad(
    outputs: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Variable | None, ...]:
    """Return d(outputs)/d(input) for each input, without touching any `.grad`."""
    checks.modes("grad", retain_graph, create_graph, allow_unused)
    roots = checks.variables(outputs, "outputs")
    if not roots:
        raise RuntimeError(
            "grad requires non-empty outputs: pass the Variable(s) to differentiate."
        )
    input_list = checks.variables(inputs, "inputs")
    seeds = checks.seed_gradients(roots, grad_outputs, "grad_outputs")
    state.listener.constants(seeds)  # minigrad.compile keeps the seeds as constants
    checks.grad_inputs(input_list)
    if retain_graph is None:
        retain_graph = create_graph
    captured = engine._execute(
        roots, seeds, retain_graph, create_graph, targets_of(input_list), accumulate=False
    )
    results = []
    for index in range(len(input_list)):
        found = captured.get(index)
        if found is None and not allow_unused:
            raise checks.unused(index)
        results.append(found)
    return tuple(results)
