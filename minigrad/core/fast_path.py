"""The fast paths: the usual cases of apply and backward, done in fewer steps.

Every function here is a shortcut for a case the plain code also handles (function.py,
record_inputs, attach_outputs, add_to_buffer, ops/arithmetic.py). Each either finishes its case or
answers False/None, and then the plain code runs: read the plain code first, this file
later. tests/test_fast_path.py checks that both give the same graphs and gradients.

Why they pay: a small op's NumPy work takes about a microsecond, so the engine's Python
bookkeeping (tuples, isinstance calls, wrapping arrays) is most of its cost. These paths
skip bookkeeping the usual case does not need. "Where the time still goes" in
site/benchmark-history.md has the profile (benchmarks/profile_eager.py).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minigrad.core.grad_mode import state
from minigrad.core.variable import Parameter, Variable

# A model's weights are Parameters: the usual cases take them as Variables.
PLAIN = frozenset((Variable, Parameter))

_FLOAT64 = np.dtype(np.float64)

# --------------------------------------------------------------------------- shared tuples

# Every 0-d op has the same input shapes, most saved values have version 0: nodes hold one
# shared copy of each such tuple, so a node has fewer objects for the garbage collector.
SHARED: dict = {}


def shared(value: tuple) -> tuple:
    """The shared copy of `value` (the first one seen), or `value` once the table is full."""
    found = SHARED.get(value)
    if found is None:
        if len(SHARED) >= 4096:
            return value
        found = SHARED[value] = value
    return found


# --------------------------------------------------------------------------- inputs

_BOTH = (True, True)
# For n inputs of which only the first is a Variable: its flags, the others' (missing)
# edges and shapes.
_FIRST_ONLY = [(), *((True,) + (False,) * (n - 1) for n in range(1, 5))]
_NO_NODES = [(), (), *((None,) * (n - 1) for n in range(2, 5))]
_NO_SHAPES = [(), (), *((None,) * (n - 1) for n in range(2, 5))]
_ZEROS = [(0,) * n for n in range(5)]  # output numbers: every edge to an output 0


def _next_node(variable: Variable) -> Any:
    if variable._grad_fn is None:
        return variable._accumulator()
    return variable._grad_fn


def record_usual_inputs(node: Any, args: tuple) -> bool:
    """inputs.record_inputs for the usual calls: two NumPy Variables that both require
    grad (a + b), or one first and then only plain values (x.T, x / 2)."""
    count = len(args)
    if count == 2:
        a, b = args
        if (
            type(a) in PLAIN
            and type(b) in PLAIN
            and a._requires_grad
            and b._requires_grad
            and type(a._data) is np.ndarray
            and type(b._data) is np.ndarray
        ):
            node.needs_input_grad = _BOTH
            node._next_nodes = (_next_node(a), _next_node(b))
            nrs = (a._output_nr, b._output_nr)
            node._next_nrs = SHARED.get(nrs) or shared(nrs)
            shapes = (a._data.shape, b._data.shape)
            node._input_shapes = SHARED.get(shapes) or shared(shapes)
            return True
    if not 0 < count < 5:
        return False
    a = args[0]
    if type(a) not in PLAIN or not a._requires_grad or type(a._data) is not np.ndarray:
        return False
    for value in args[1:]:
        if isinstance(value, Variable):
            return False
    node.needs_input_grad = _FIRST_ONLY[count]
    node._next_nodes = (_next_node(a), *_NO_NODES[count])
    nrs = (a._output_nr, *_ZEROS[count - 1])
    node._next_nrs = SHARED.get(nrs) or shared(nrs)
    shapes = (a._data.shape, *_NO_SHAPES[count])
    node._input_shapes = SHARED.get(shapes) or shared(shapes)
    return True


def usual_gradients(node: Any, grads: tuple) -> list | None:
    """BackwardNode._call_backward's check of the usual answer: NumPy Variables of the
    inputs' shapes (None for an input that needs none). Anything else (a None it needs): None."""
    shapes = node._input_shapes
    checked = []
    for index, grad in enumerate(grads):
        if grad is None and not node.needs_input_grad[index]:
            checked.append(None)
        elif (
            type(grad) is Variable
            and type(grad._data) is np.ndarray
            and grad._data.shape == shapes[index]
        ):
            checked.append(grad if node.needs_input_grad[index] else None)
        else:
            return None
    return checked


# --------------------------------------------------------------------------- outputs


def fresh_output(cls: type, ctx: Any, raw: Any) -> tuple | None:
    """outputs.collect's wrapping for a forward that returned one new NumPy array and
    changed no input in place: one new Variable. None for any other result."""
    if type(raw) is np.ndarray and not ctx.dirty and not cls._output_is_view:
        return (Variable._make(raw),)
    return None


def attach_one_float_output(node: Any, outputs: tuple) -> bool:
    """outputs.attach_outputs for one float NumPy output, the usual case."""
    if len(outputs) != 1 or node.non_differentiable:
        return False
    output = outputs[0]
    if type(output) is not Variable:
        return False
    data = output._data
    if type(data) is not np.ndarray or data.dtype.kind != "f":
        return False
    metadata = ((data.shape, data.dtype),)
    node._output_metadata = SHARED.get(metadata) or shared(metadata)
    output._grad_fn = node
    output._output_nr = 0
    output._requires_grad = True
    return True


# --------------------------------------------------------------------------- gradient buffers

_RAW = (float, np.ndarray)  # what the engine's own sums are held as


def add_raw(slots: list, output_nr: int, held: Any, g: Variable) -> bool:
    """buffers.add_to_buffer without create_graph: nobody differentiates these sums, so,
    as PyTorch's engine does, NumPy gradients add up as raw arrays the engine owns (and
    0-d float64 ones as Python floats: the same IEEE doubles, several times faster)."""
    data = g._data
    if type(data) is not np.ndarray:
        return False
    if type(held) is float:  # the engine's own sum of 0-d float64 gradients
        if data.dtype is _FLOAT64 and not data.shape:
            slots[output_nr] = held + data.item()
            return True
        return False
    if type(held) is np.ndarray:  # the engine's own array: add in place
        if held.dtype == data.dtype and held.shape == data.shape:
            held += data
            return True
        return False
    own = held._data
    if type(own) is not np.ndarray or own.dtype != data.dtype or own.shape != data.shape:
        return False
    if own.dtype is _FLOAT64 and not own.shape:
        slots[output_nr] = own.item() + data.item()
        return True
    own = own.copy()  # a new array the engine owns, added into from now on
    own += data
    slots[output_nr] = own
    return True


def as_variable(held: Any) -> Any:
    """A buffer's value as a Variable again (the engine's raw sums are wrapped)."""
    if type(held) is float:
        return Variable._make(np.array(held))
    if type(held) is np.ndarray:
        return Variable._make(held)
    return held


def arrays_of(grads: list) -> list | None:
    """A node's gradients as NumPy arrays (raw sums as they are; None stays None), for a
    backward run on arrays; None when one is not NumPy's (a device's): it gets Variables."""
    arrays = []
    for g in grads:
        if g is None:
            arrays.append(None)
        elif type(g) is np.ndarray:
            arrays.append(g)
        elif type(g) is float:  # the engine's sum of 0-d float64 gradients
            arrays.append(np.array(g))
        elif type(g) is Variable and type(g._data) is np.ndarray:
            arrays.append(g._data)
        else:
            return None
    return arrays


def as_variables(arrays: list) -> list:
    """A backward's arrays as Variables, one per array: the same array given to two inputs
    (a + b's) is the same Variable for both, as on the Variable path."""
    made = {id(array): Variable._make(array) for array in arrays if array is not None}
    return [None if array is None else made[id(array)] for array in arrays]


def finished(grads: list) -> list:
    """A node's gradients, the engine's raw sums wrapped as Variables again."""
    for index, g in enumerate(grads):
        if type(g) in _RAW:
            grads[index] = as_variable(g)
    return grads


# --------------------------------------------------------------------------- arithmetic

_ON_FLOATS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul}


def on_floats(compute: Any, a: Any, b: Any) -> np.ndarray | None:
    """a + b, a - b, a * b of two 0-d float64 values (or one and a Python number) through
    Python floats, which give the same IEEE doubles faster than NumPy's 0-d arithmetic."""
    python = _ON_FLOATS.get(compute)
    if python is None:
        return None
    if type(a) in PLAIN and type(b) in PLAIN:  # the usual pair, checked in one go
        x, y = a._data, b._data
        if type(x) is np.ndarray and type(y) is np.ndarray and not (x.shape or y.shape):
            if x.dtype is _FLOAT64 and y.dtype is _FLOAT64:
                return np.array(python(x.item(), y.item()))
        return None
    x, y = _as_float(a), _as_float(b)
    if x is None or y is None or (type(x) is not float and type(y) is not float):
        return None
    return np.array(python(x, y))


def in_place(compute: Any, x: Any, other: Any) -> bool:
    """x += other (-=, *=, /=) with no graph to record and no tool watching, as an
    optimizer's update runs: NumPy writes straight into x's array, no new array and no
    Function. False when any condition fails (the plain in-place path then runs): a dtype
    the result would need casting to, a shape the result would not keep, a read-only view."""
    if state.grad_enabled or state.listener.watching or type(x) not in PLAIN or x._inference:
        return False  # (an inference Variable takes the plain path, which checks it)
    data = x._data
    if type(data) is not np.ndarray or not data.flags.writeable:
        return False
    if type(other) in PLAIN and type(other._data) is np.ndarray:
        value = other._data
    elif type(other) is float or type(other) is int:
        value = other
    else:
        return False
    if np.result_type(data, value) != data.dtype or np.broadcast_shapes(
        data.shape, np.shape(value)
    ) != data.shape:
        return False
    compute(data, value, out=data)
    x._shared_version_counter().value += 1
    return True


def _as_float(value: Any) -> float | int | None:
    """A 0-d float64 Variable's value as a Python float (small ints pass); else None."""
    kind = type(value)
    if kind in PLAIN:
        data = value._data
        if type(data) is np.ndarray and data.dtype is _FLOAT64 and not data.shape:
            return data.item()
        return None
    if kind is float or (kind is int and -(2**53) < value < 2**53):
        return value
    return None
