"""BackwardNode's general case of recording inputs: any number, some not Variables.

The usual calls (one or two NumPy Variables that require grad, then plain values) are
recorded straight in BackwardNode.__init__; everything else comes here.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from minigrad.core import kinds
from minigrad.core.fast_path import shared
from minigrad.core.variable import Variable


def record_inputs(node: Any, args: tuple) -> None:
    """Fill needs_input_grad, next_functions and the input shapes of `node`."""
    needs_input_grad, edges, shapes = [], [], []
    # Inputs that take no gradient have no edge; drawings still want to show them
    # (data, constants), so the node keeps weak references that never extend a lifetime.
    for index, value in enumerate(args):
        if isinstance(value, Variable):
            needs_input_grad.append(value._requires_grad)
            data = value._data
            shapes.append(data.shape if type(data) is np.ndarray else kinds.shape_of(data))
            if value._requires_grad:
                if value._grad_fn is not None:
                    edges.append((value._grad_fn, value._output_nr))
                else:
                    edges.append(value._edge_to_accumulator())
                continue
            edges.append((None, 0))
            if not node._input_refs:
                node._input_refs = [None] * len(args)
            node._input_refs[index] = weakref.ref(value)
        else:
            needs_input_grad.append(False)
            edges.append((None, 0))
            shapes.append(None)
    node.needs_input_grad = tuple(needs_input_grad)
    node._next_nodes, next_nrs = tuple(zip(*edges)) or ((), ())
    node._next_nrs = shared(next_nrs)  # a pair per edge would be one more object each
    node._input_shapes = tuple(shapes)
