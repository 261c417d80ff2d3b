"""The engine's gradient buffers: where the gradients flowing into one node add up.

A node runs once all of its consumers have sent their gradients; until then they add up
here, one slot per output of the node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import kinds
from minigrad.core.tracing import tracer
from minigrad.core.variable import AccumulateGrad, Variable


def _number_of_outputs(node: Any) -> int:
    return 1 if type(node) is AccumulateGrad else len(node._output_metadata)


_FLOAT64 = np.dtype(np.float64)
_RAW = (float, np.ndarray)  # what the engine's own sums are held as


def add_to_buffer(
    buffers: dict, node: Any, output_nr: int, g: Variable, create_graph: bool
) -> None:
    """Add `g` into the gradient `node` will receive for its output `output_nr`.

    Without create_graph nobody differentiates these sums, so, as PyTorch's engine does,
    NumPy gradients add up as raw arrays in a buffer the engine owns (`finished` wraps
    it again). With create_graph they add up as Variables, recorded like any op."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * _number_of_outputs(node)
    held = slots[output_nr]
    if held is None:
        slots[output_nr] = g
        return
    data = g._data
    # While minigrad.compile traces, sums go through Add, so that the trace sees them.
    if type(data) is np.ndarray and not create_graph and tracer.recorder is None:
        if type(held) is float:  # the engine's own sum of 0-d float64 gradients
            if data.dtype is _FLOAT64 and not data.shape:
                slots[output_nr] = held + data.item()
                return
            held = Variable._make(np.array(held))
        elif type(held) is np.ndarray:  # the engine's own array: add in place
            if held.dtype == data.dtype and held.shape == data.shape:
                held += data
                return
            held = Variable._make(held)
        else:
            own = held._data
            if type(own) is np.ndarray and own.dtype == data.dtype and own.shape == data.shape:
                if own.dtype is _FLOAT64 and not own.shape:
                    # 0-d: Python floats add the same IEEE doubles, several times faster.
                    slots[output_nr] = own.item() + data.item()
                    return
                own = own.copy()  # a new array the engine owns, added into from now on
                own += data
                slots[output_nr] = own
                return
    elif type(held) in _RAW:
        held = Variable._make(np.array(held) if type(held) is float else held)
    if type(data) is np.ndarray:
        slots[output_nr] = held + g
    else:  # another kind of value (feedback text, ...) adds up its own way
        slots[output_nr] = kinds.kind_of(data).add(held, g)


def finished(grads: list) -> list:
    """A node's gradients, the engine's raw sums wrapped as Variables again."""
    for index, g in enumerate(grads):
        if type(g) is np.ndarray:
            grads[index] = Variable._make(g)
        elif type(g) is float:
            grads[index] = Variable._make(np.array(g))
    return grads
