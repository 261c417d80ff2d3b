"""Reading a recorded graph: what drawings (minigrad.viz) and curious learners may use.

A graph is made of BackwardNodes (one per recorded call of a Function) and AccumulateGrad
nodes (one per leaf that requires grad). `node.next_functions` gives its edges; the
functions here give the rest, without reaching into private attributes:

- the Variables a node was called with, those that take no gradient included (held
  weakly: a drawing never keeps a value alive);
- the Variables it made, and what is known of each (shape, dtype, kind) once they are gone;
- the values it saved for backward;
- observers that the engine calls before it runs each node;
- `saved_tensors_hooks`, which changes how the values saved for backward are kept, and
  `save_on_cpu`, hooks that keep them in host memory.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, NamedTuple

from minigrad.core import engine, function
from minigrad.core.function import (
    BackwardNode,
    PackedValue,
    SavedOutput,
    save_on_cpu,
    saved_tensors_hooks,
)
from minigrad.core.variable import NUMBERS, AccumulateGrad, Variable

StepObserver = Callable[[Any, list], None]


def add_step_observer(observer: StepObserver) -> None:
    """Call `observer(node, grads)` before the engine runs each node, in every backward.

    `grads` is the list of gradients the node received, one per output (None where none
    arrived); an observer reads it and must not change it."""
    engine._step_observers.append(observer)


def remove_step_observer(observer: StepObserver) -> None:
    """Stop calling an observer given to add_step_observer (nothing if it is not there)."""
    if observer in engine._step_observers:
        engine._step_observers.remove(observer)


def _check_node(node: Any, caller: str) -> None:
    """A TypeError unless node is a graph node: a Variable's grad_fn (or next_functions)."""
    if not isinstance(node, (BackwardNode, AccumulateGrad)):
        raise TypeError(
            f"{caller}() takes a graph node, such as y.grad_fn or an entry of "
            f"node.next_functions; got {type(node).__name__}."
        )


def _check_index(index: Any, label: str, caller: str) -> None:
    """A TypeError unless index is an int, a ValueError if it is negative."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{caller}(): {label} must be an int; got {type(index).__name__}.")
    if index < 0:
        raise ValueError(f"{caller}(): {label} must be >= 0; got {index}.")


def input_variable(node: Any, index: int, alive: dict | None = None) -> Variable | None:
    """The Variable that input `index` of `node` was, if it is still alive.

    An input that requires grad is found through its edge: the leaf of an AccumulateGrad,
    or the output of the node that made it (see output(); `alive` is a live_outputs()
    to reuse). An input that takes no gradient has no edge; the node holds it weakly,
    only for this function."""
    _check_node(node, "input_variable")
    _check_index(index, "index", "input_variable")
    if type(node) is AccumulateGrad or index >= len(node._next_nodes):
        return None
    next_node, output_nr = node._next_nodes[index], node._next_nrs[index]
    if next_node is None:
        refs = node._input_refs
        return refs[index]() if refs and refs[index] is not None else None
    if type(next_node) is AccumulateGrad:
        return next_node.variable
    return output(next_node, output_nr, alive)


def input_edges(node: Any) -> list[tuple[int, Any, int]]:
    """(index, next_node, output_nr) for every input of `node`, in the order forward took
    them: next_functions without its filter (it lists Variable inputs only, as PyTorch),
    so that `index` is the input's position, as input_variable(node, index) takes it."""
    _check_node(node, "input_edges")
    return list(zip(range(len(node._next_nodes)), node._next_nodes, node._next_nrs))


def live_outputs() -> dict[tuple, Variable]:
    """(node, output_nr) -> that output, for every result Variable still alive.

    A node keeps no reference to its outputs (each output holds its node; PyTorch's nodes
    keep none either), so a tool that wants them asks the garbage collector, which tracks
    every Variable: one pass over the live objects, made for a drawing, never by backward."""
    found: dict[tuple, Variable] = {}
    for value in gc.get_objects():
        # type(), not isinstance(): the latter asks each object its __class__, which some
        # objects answer with a warning or an error.
        if issubclass(type(value), Variable) and value._grad_fn is not None:
            key = (value._grad_fn, value._output_nr)
            # A saved output rebuilt for a backward stands in only once the output is gone.
            if key not in found or _rebuilt(found[key]) and not _rebuilt(value):
                found[key] = value
    return found


def _rebuilt(variable: Variable) -> bool:
    return function.REBUILT.get(id(variable)) is variable


def output(node: Any, output_nr: int, alive: dict | None = None) -> Variable | None:
    """Output `output_nr` of `node`, while it is alive (the leaf itself for AccumulateGrad).
    Each call looks through the live objects; pass `alive`, a live_outputs(), for many."""
    _check_node(node, "output")
    _check_index(output_nr, "output_nr", "output")
    if type(node) is AccumulateGrad:
        return node.variable if output_nr == 0 else None
    if alive is None:
        alive = live_outputs()
    found = alive.get((node, output_nr))
    overwritten = node._overwritten
    if found is None and overwritten is not None and overwritten[0] == output_nr:
        return overwritten[1]()  # changed in place since: its grad_fn is a later node now
    return found


def output_nr(variable: Variable) -> int:
    """Which output of its grad_fn `variable` is (0 for a leaf)."""
    if not isinstance(variable, Variable):
        raise TypeError(f"output_nr() takes a Variable; got {type(variable).__name__}.")
    return variable._output_nr


def number_of_outputs(node: Any) -> int:
    """How many outputs `node` has (1 for an AccumulateGrad: its leaf)."""
    _check_node(node, "number_of_outputs")
    return 1 if type(node) is AccumulateGrad else len(node._output_metadata)


class OutputInfo(NamedTuple):
    """What a node remembers of an output: enough to make zeros for it, or to label it."""

    shape: Any
    dtype: Any
    kind: str  # "numeric", "text", ...


def output_info(node: Any, output_nr: int) -> OutputInfo | None:
    """Shape, dtype and kind of output `output_nr` (None if it was not a Variable)."""
    _check_node(node, "output_info")
    _check_index(output_nr, "output_nr", "output_info")
    if type(node) is AccumulateGrad:
        return None
    metadata = node._output_metadata
    if output_nr >= len(metadata) or metadata[output_nr] is None:
        return None
    entry = metadata[output_nr]
    kind = entry[2].name if len(entry) == 3 else NUMBERS.name
    return OutputInfo(entry[0], entry[1], kind)


class SavedValue(NamedTuple):
    """One value a node saved for backward.

    `output_nr` is set when the node saved one of its own outputs; `value` is then its data
    (the output Variable itself is not kept, it would hold the node in a cycle)."""

    value: Any
    output_nr: int | None


def saved_values(node: Any) -> list[SavedValue] | None:
    """The values `node` saved for backward, or None once a backward has freed them."""
    if not isinstance(node, BackwardNode):
        return []
    if node._saved is None:
        return None
    values = []
    for position, value in enumerate(node._saved):
        if type(value) is PackedValue:  # what a saved_tensors_hooks pack hook returned
            values.append(SavedValue(value.packed, value.output_nr))
            continue
        output_nr = function.output_nr_at(node, position)
        if type(value) is SavedOutput:
            value = value.array
        values.append(SavedValue(value, output_nr))
    return values


def saved_attribute(node: Any, name: str) -> Variable:
    """PyTorch's `node._saved_self`, `_saved_other`, `_saved_<argument>`, `_saved_result`
    (minigrad/core/function.py), for a node and a name given as arguments."""
    if not isinstance(node, BackwardNode) or not isinstance(name, str):
        raise AttributeError(f"{type(node).__name__!r} object has no attribute {name!r}")
    return function.attribute(node, name)


__all__ = [
    "OutputInfo",
    "SavedValue",
    "add_step_observer",
    "input_edges",
    "input_variable",
    "live_outputs",
    "number_of_outputs",
    "output",
    "output_info",
    "output_nr",
    "remove_step_observer",
    "save_on_cpu",
    "saved_attribute",
    "saved_tensors_hooks",
    "saved_values",
]
