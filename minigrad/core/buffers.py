"""The engine's gradient buffers: where the gradients flowing into one node add up.

A node runs once all of its consumers have sent their gradients; until then they add up
here, one slot per output of the node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import fast_path, kinds
from minigrad.core.state import state
from minigrad.core.variable import AccumulateGrad, Variable


def _number_of_outputs(node: Any) -> int:
    return 1 if type(node) is AccumulateGrad else len(node._output_metadata)


def add_to_buffer(
    buffers: dict, node: Any, output_nr: int, g: Variable, create_graph: bool
) -> None:
    """Add `g` into the gradient `node` will receive for its output `output_nr`.

    The sums are Variable additions, recorded like any op when create_graph asks."""
    if type(g) is np.ndarray:  # from a backward run on arrays; not the engine's to change
        g = Variable._make(g)
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * _number_of_outputs(node)
    held = slots[output_nr]
    if held is None:
        slots[output_nr] = g
        return
    # Without create_graph nobody differentiates the sum: it may add raw arrays
    # (fast_path.py). A watching listener (minigrad.compile) must see it as an Add.
    if not create_graph and not state.listener.watching:
        if fast_path.add_raw(slots, output_nr, held, g):
            return
    held = fast_path.as_variable(held)
    if type(g._data) is np.ndarray:
        slots[output_nr] = held + g
    else:  # another kind of value (feedback text, ...) adds up its own way
        slots[output_nr] = kinds.kind_of(g._data).add(held, g)
