"""once_differentiable: for a backward that works on raw values and records no graph.

(The module is not named once_differentiable: that name is the decorator, in
minigrad.autodiff.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad.core.function import BackwardNode, Function, FunctionCtx
from minigrad.core.grad_mode import _state as _grad_state
from minigrad.core.outputs import attach_outputs
from minigrad.core.variable import Variable


def once_differentiable(backward: Callable) -> Callable:
    """Mark a backward that cannot itself be differentiated (it works on raw values).

    It runs with recording off. Under create_graph=True its results are not what the
    caller asked for (they carry no graph), so each is placed behind a node that raises
    the moment a later backward reaches it: double backward fails loudly, never silently.
    """

    @functools.wraps(backward)
    def run_once(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        previous = _grad_state.enabled
        # Grad mode is on during backward only when create_graph=True was asked for.
        wants_graph = previous
        _grad_state.enabled = False
        try:
            grads = backward(ctx, *grad_outputs)
        finally:
            _grad_state.enabled = previous
        if not wants_graph or not isinstance(ctx, BackwardNode):
            return grads
        # create_graph=True asked for a graph of this backward, which it cannot give: mark
        # each result with a node that raises when a later backward reaches it.
        single = not isinstance(grads, tuple)
        marked = tuple(
            _marked_once_differentiable(g, ctx)
            if isinstance(g, (Variable, np.ndarray, np.generic))
            else g
            for g in ((grads,) if single else grads)
        )
        return marked[0] if single else marked

    return run_once


def _marked_once_differentiable(grad: Variable | np.ndarray, ctx: BackwardNode) -> Variable:
    """grad's value, behind a node that raises; it points where ctx's own node points, so
    backward() and grad() meet it on their way to the Function's inputs."""
    node = BackwardNode(_OnceDifferentiableError, ())
    node.next_functions = ctx.next_functions
    node.needs_input_grad = ctx.needs_input_grad
    node._input_shapes = ctx._input_shapes
    # NumPy arithmetic on 0-d arrays gives scalars (np.generic): those are marked too.
    marked = Variable._make(grad.data if isinstance(grad, Variable) else np.asarray(grad))
    attach_outputs(node, (marked,))
    return marked


class _OnceDifferentiableError(Function):
    """The node behind results of a @once_differentiable backward under create_graph."""

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable: its backward works on raw values and records no graph. "
            "Write the backward with Variable operations (without the decorator) to allow it."
        )
