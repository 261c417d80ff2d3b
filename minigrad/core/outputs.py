"""The less usual outputs of a Function: apply's helpers beyond one fresh array.

Forward may return several values, plain numbers, an input unchanged (an identity), an
input it changed in place (marked with ctx.mark_dirty), or a view of an input's memory.
Each is turned into the Variables apply returns, with the graph and version bookkeeping
PyTorch gives it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import checks, fast_path, kinds
from minigrad.core.state import state
from minigrad.core.variable import Variable


def is_input(value: Any, args: tuple) -> bool:
    """Whether `value` is one of `args` itself (identity: Variables compare elementwise)."""
    for arg in args:
        if value is arg:
            return True
    return False


def wrap(cls: type, raw: Any) -> tuple:
    """Turn what forward returned into a tuple of Variables (other values pass through)."""
    if type(raw) is np.ndarray:
        return (Variable._make(raw),)
    if isinstance(raw, np.generic):
        # NumPy gives scalars for 0-d results; Variables always hold arrays.
        return (Variable._make(np.asarray(raw)),)
    if raw is None:
        raise checks.forward_returned_none(cls)
    values = raw if isinstance(raw, tuple) else (raw,)
    outputs = []
    for value in values:
        if isinstance(value, np.ndarray) or kinds.kind_of(value) is not None:
            value = Variable._make(value)
        elif isinstance(value, (np.generic, int, float)) and not isinstance(value, bool):
            value = Variable._make(np.asarray(value))
        outputs.append(value)
    return tuple(outputs)


def collect(cls: type, ctx: Any, args: tuple, raw: Any, outputs: tuple | None) -> tuple:
    """forward's result as a tuple of outputs (Variables), with inputs changed in place
    marked and views sharing their base's version counter."""
    if outputs is None:
        outputs = wrap(cls, raw)
    # Only a forward that returned Variables can have returned one of its inputs.
    if isinstance(raw, (Variable, tuple)):
        outputs = copy_returned_inputs(outputs, args, ctx)
    if ctx.dirty:
        mark_dirty_inputs(ctx, outputs)
    if cls._output_is_view:
        share_version_counter(outputs[0], args[0])
    return outputs


def copy_returned_inputs(outputs: tuple, args: tuple, ctx: Any) -> tuple:
    """An input returned unchanged (an identity forward) comes back as a new Variable sharing
    its data, so the input's own grad_fn is never rewritten. Inputs marked dirty (changed in
    place) stay the same object: their history is rebased onto the new node."""
    copied = []
    for value in outputs:
        if isinstance(value, Variable) and is_input(value, args) and not is_input(value, ctx.dirty):
            value = Variable._make(value.data, value._shared_version_counter())
        copied.append(value)
    return tuple(copied)


def mark_dirty_inputs(ctx: Any, outputs: tuple) -> None:
    """Inputs forward changed in place (ctx.mark_dirty): returned, and a version newer."""
    for variable in ctx.dirty:
        if not is_input(variable, outputs):
            raise checks.dirty_not_returned()
        if state.grad_enabled and variable._grad_fn is None and variable._requires_grad:
            raise checks.leaf_changed_in_place(
                "Apply the Function under `with minigrad.no_grad():`, or to a .clone()."
            )
        variable._shared_version_counter().value += 1


def share_version_counter(output: Any, source: Any) -> None:
    """A view (reshape, transpose, ...) shares its base's version counter."""
    if isinstance(output, Variable) and isinstance(source, Variable):
        if type(output._data) is np.ndarray and _is_view_of(output._data, source._data):
            output._version_counter = source._shared_version_counter()
            output._version_counter.add_view(output)
            output._is_view = True


def _is_view_of(data: np.ndarray, source: Any) -> bool:
    # NumPy points a view's .base at the array that owns the memory: a cheap first test.
    owner = data.base
    if owner is not None and (owner is source or owner is getattr(source, "base", None)):
        return True
    return bool(np.may_share_memory(data, source))


def make_results_not_require_grad(outputs: tuple, args: tuple) -> None:
    for output in outputs:
        # Fresh Variables made inside forward (afnio's style) are results, not leaves.
        if isinstance(output, Variable) and output._grad_fn is None and not is_input(output, args):
            output._requires_grad = False


def attach_outputs(node: Any, outputs: tuple) -> None:
    """Make each differentiable output a non-leaf whose gradient goes to `node`."""
    if fast_path.attach_one_float_output(node, outputs):
        return  # the usual case, one float array: fast_path.py
    metadata = []
    for index, output in enumerate(outputs):
        if not isinstance(output, Variable):
            metadata.append(None)
            continue
        data = output._data
        # Shape and dtype (and the kind, if not NumPy's) let the engine hand backward zeros
        # for an output that got no gradient, non-differentiable ones included (as PyTorch).
        kind = None if type(data) is np.ndarray else kinds.kind_of(data)
        if kind is None:
            metadata.append((data.shape, data.dtype))
        else:
            metadata.append((data.shape, data.dtype, kind) if kind.has_shape else ((), None, kind))
        if (
            (kind is None or kind.has_shape)
            and data.dtype.kind != "f"
            or is_input(output, node.non_differentiable)
        ):
            output._requires_grad = False
            continue
        # The node keeps no reference to its outputs (each output holds the node): a
        # drawing finds those still alive through the garbage collector (autodiff/graph.py).
        output._grad_fn = node
        output._output_nr = index
        output._requires_grad = True
    node._output_metadata = tuple(metadata)


def zeros_for(metadata: Any) -> Variable | None:
    """The gradient of an output that received none: zeros of its shape, dtype and kind."""
    if metadata is None:
        return None  # not a Variable (a plain value forward passed through): no gradient
    if len(metadata) == 3:  # (shape, dtype, kind): not a NumPy array
        shape, dtype, kind = metadata
        return Variable._make(kind.zeros(shape, dtype))
    shape, dtype = metadata
    zeros = Variable._make(np.zeros(shape, dtype=dtype))
    state.listener.constants([zeros])  # minigrad.compile keeps these zeros as a constant
    return zeros
