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

import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from minigrad.core import engine, kinds
from minigrad.core import saved as saved_module
from minigrad.core.accumulate_grad import AccumulateGrad
from minigrad.core.function import BackwardNode
from minigrad.core.saved import (
    PackedValue,
    SavedOutput,
    save_on_cpu,
    saved_tensors_hooks,
)
from minigrad.core.variable import Variable

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


def input_variable(node: Any, index: int) -> Variable | None:
    """The Variable that input `index` of `node` was, if it is still alive.

    An input that requires grad is found through its edge: the leaf of an AccumulateGrad,
    or the output of the node that made it. An input that takes no gradient has no edge;
    the node holds it weakly, only for this function."""
    _check_node(node, "input_variable")
    _check_index(index, "index", "input_variable")
    if type(node) is AccumulateGrad or index >= len(node.next_functions):
        return None
    next_node, output_nr = node.next_functions[index]
    if next_node is None:
        refs = node._input_refs
        return refs[index]() if refs and refs[index] is not None else None
    if type(next_node) is AccumulateGrad:
        return next_node.variable
    return output(next_node, output_nr)


def output(node: Any, output_nr: int) -> Variable | None:
    """Output `output_nr` of `node`, while it is alive (the leaf itself for AccumulateGrad)."""
    _check_node(node, "output")
    _check_index(output_nr, "output_nr", "output")
    if type(node) is AccumulateGrad:
        return node.variable if output_nr == 0 else None
    refs = node._output_refs
    if type(refs) is weakref.ref:  # a single output's reference is kept bare
        return refs() if output_nr == 0 else None
    if output_nr < len(refs) and refs[output_nr] is not None:
        return refs[output_nr]()
    return None


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
    kind = entry[2].name if len(entry) == 3 else kinds.NUMBERS.name
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
    for value in node._saved:
        if type(value) is SavedOutput:
            values.append(SavedValue(value.data, value.output_nr))
        elif type(value) is PackedValue:  # what a saved_tensors_hooks pack hook returned
            values.append(SavedValue(value.packed, value.output_nr))
        else:
            values.append(SavedValue(value, None))
    return values


def saved_attribute(node: Any, name: str) -> Variable:
    """PyTorch's `node._saved_self`, `_saved_other`, `_saved_<argument>`, `_saved_result`
    (minigrad/core/saved.py), for a node and a name given as arguments."""
    if not isinstance(node, BackwardNode) or not isinstance(name, str):
        raise AttributeError(f"{type(node).__name__!r} object has no attribute {name!r}")
    return saved_module.attribute(node, name)


__all__ = [
    "OutputInfo",
    "SavedValue",
    "add_step_observer",
    "input_variable",
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
