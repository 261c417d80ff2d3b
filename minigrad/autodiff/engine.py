"""The engine: run a graph's backward nodes, each once, after all of its consumers.

1. Count, for every node reachable from the outputs, how many edges point at it.
2. Start from the outputs' nodes with their seed gradients.
3. Pop a ready node, call its backward, add each input gradient into the buffer of the
   node it flows to, and mark that node ready once its last consumer has finished.
Leaves are reached through AccumulateGrad nodes, which add into `.grad`. The walk is a
loop with an explicit stack, never recursion, so a chain of a million nodes works.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad.autodiff import anomaly, checks, kinds
from minigrad.autodiff.function import BackwardNode
from minigrad.autodiff.grad_mode import _state as _grad_state
from minigrad.variable import AccumulateGrad, Variable

# Called as observer(node, grads) before each node runs: see add_step_observer in
# minigrad/autodiff/graph.py (graph drawings use it).
_step_observers: list[Callable[[Any, list], None]] = []


def backward(
    variables: Variable | Sequence[Variable],
    grad_variables: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Variable | Sequence[Variable] | None = None,
) -> None:
    """Accumulate d(variables)/d(leaf) into each leaf's `.grad` (or only into `inputs`)."""
    roots = checks.variables(variables, "variables")
    if not roots:
        raise RuntimeError("backward() needs at least one Variable to differentiate; got none.")
    seeds = checks.seed_gradients(roots, grad_variables, "grad_variables")
    targets = None
    if inputs is not None:
        input_list = checks.variables(inputs, "inputs")
        if not input_list:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = _targets_of(input_list)
    if retain_graph is None:
        retain_graph = create_graph
    _execute(roots, seeds, retain_graph, create_graph, targets, accumulate=True)


def grad(
    outputs: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Variable | None, ...]:
    """Return d(outputs)/d(input) for each input, without touching any `.grad`."""
    roots = checks.variables(outputs, "outputs")
    if not roots:
        raise RuntimeError(
            "grad requires non-empty outputs: pass the Variable(s) to differentiate."
        )
    seeds = checks.seed_gradients(roots, grad_outputs, "grad_outputs")
    input_list = checks.variables(inputs, "inputs")
    checks.grad_inputs(input_list)
    if retain_graph is None:
        retain_graph = create_graph
    captured = _execute(
        roots, seeds, retain_graph, create_graph, _targets_of(input_list), accumulate=False
    )
    results = []
    for index in range(len(input_list)):
        found = captured.get(index)
        if found is None and not allow_unused:
            raise checks.unused(index)
        results.append(found)
    return tuple(results)


# --------------------------------------------------------------------------- the walk


def _execute(
    roots: list[Variable],
    seeds: list[Variable],
    retain_graph: bool,
    create_graph: bool,
    targets: dict | None,
    accumulate: bool,
) -> dict[int, Variable]:
    buffers: dict[Any, list] = {}
    root_nodes = []
    for root, seed in zip(roots, seeds):
        node, output_nr = _edge_of(root)
        _add_to_buffer(buffers, node, output_nr, seed, True)
        root_nodes.append(node)
    dependencies, consumers = _count_dependencies(root_nodes)
    ready = [node for node in dict.fromkeys(root_nodes) if dependencies.get(node, 0) == 0]
    captured: dict[int, Variable] = {}
    # With targets (grad(), backward(inputs=...)) only the nodes that lead to them run.
    needed = None if targets is None else _leading_to(targets, consumers)

    previous_mode, previous_log = _grad_state.enabled, _grad_state.grad_assignments
    # Backward formulas are Variable operations: recorded only when create_graph asks.
    _grad_state.enabled = create_graph
    # The `.grad = ...` assignments made during this pass (see _run_node).
    _grad_state.grad_assignments = assignments = []
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is not None and not create_graph:
                grads = _finished(grads)
            if grads is None or (needed is not None and node not in needed):
                # No gradient reached this node (or none is wanted from it): skip its
                # backward, but its inputs still lose a consumer.
                _release_inputs(node, dependencies, ready)
                continue
            if node._pre_hooks or node._retained or targets is not None:
                _before_node(node, grads, targets, captured, accumulate)
            for observer in _step_observers:
                observer(node, grads)
            if type(node) is AccumulateGrad:
                if accumulate and (targets is None or (node, 0) in targets):
                    _accumulate_into_leaf(node.variable, grads[0], create_graph)
                continue
            input_grads = _run_node(node, grads, assignments)
            if not retain_graph and node._saved:
                node._saved = None  # free the saved values (node._free_saved(), inlined)
            # Send each input's gradient on; the node each one feeds has a consumer less,
            # and is ready once its last consumer has sent its gradient.
            for (next_node, output_nr), input_grad in zip(node.next_functions, input_grads):
                if next_node is not None:
                    if input_grad is not None:
                        _add_to_buffer(buffers, next_node, output_nr, input_grad, create_graph)
                    left = dependencies[next_node] - 1
                    dependencies[next_node] = left
                    if not left:
                        ready.append(next_node)
    finally:
        _grad_state.enabled = previous_mode
        _grad_state.grad_assignments = previous_log
    return captured


def _count_dependencies(root_nodes: list) -> tuple[dict[Any, int], dict[Any, list]]:
    """For each reachable node, the number of edges that point at it, and who they come from."""
    dependencies: dict[Any, int] = {}
    consumers: dict[Any, list] = {}
    seen = set(root_nodes)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            consumers.setdefault(next_node, []).append(node)
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies, consumers


def _leading_to(targets: dict, consumers: dict) -> set:
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


def _release_inputs(node: Any, dependencies: dict, ready: list) -> None:
    """`node` is done: each node it feeds has one consumer less; the last one makes it ready."""
    for next_node, _ in node.next_functions:
        if next_node is not None:
            dependencies[next_node] -= 1
            if dependencies[next_node] == 0:
                ready.append(next_node)


def _run_node(node: BackwardNode, grads: list, assignments: list) -> tuple:
    """Call one node's backward with its complete output gradients."""
    if len(grads) > 1 or grads[0] is None:
        if all(g is None for g in grads):
            # Nothing flows through this node; its inputs get nothing either.
            return (None,) * len(node.next_functions)
        if node.materialize_grads:
            grads = [
                _zeros_for(m) if g is None else g for g, m in zip(grads, node._output_metadata)
            ]

    # A backward may assign `x.grad = g` and also return g (afnio's style). The grad setter
    # logs such assignments; undo them, so the returned gradient is accumulated once.
    logged = len(assignments)
    input_grads = node._call_backward(grads)
    if len(assignments) > logged:
        _undo_returned_assignments(node, input_grads, assignments[logged:])
        del assignments[logged:]

    if anomaly._enabled:
        anomaly.check_gradients(node, input_grads)
    return input_grads


def _undo_returned_assignments(node: BackwardNode, input_grads: tuple, assignments: list) -> None:
    """A leaf input whose .grad the backward set to exactly the gradient it also returned
    gets its previous .grad back; the engine then accumulates the returned one, once."""
    for variable, previous in reversed(assignments):
        for (next_node, _), input_grad in zip(node.next_functions, input_grads):
            if (
                type(next_node) is AccumulateGrad
                and next_node.variable is variable
                and input_grad is not None
                and variable._grad is input_grad
            ):
                variable._grad = previous


def _before_node(
    node: Any, grads: list, targets: dict | None, captured: dict, accumulate: bool
) -> None:
    """Run hooks, keep retained gradients, and catch the gradients `grad()` asked for."""
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
                _accumulate_into_leaf(variable, grads[output_nr], _grad_state.enabled)
    if targets is None:
        return
    for output_nr, g in enumerate(grads):
        for index, variable in targets.get((node, output_nr), ()):
            if accumulate and type(node) is BackwardNode:
                # backward(inputs=[non_leaf]) fills that Variable's .grad.
                if g is not None and not variable._retains_grad:
                    _accumulate_into_leaf(variable, g, _grad_state.enabled)
            elif not accumulate:
                captured[index] = g


def _accumulate_into_leaf(
    variable: Variable | None, g: Variable | None, create_graph: bool
) -> None:
    if variable is None or g is None:
        return
    # How gradients of this kind add up (numbers: a sum; feedback texts: joined).
    variable._grad = kinds.kind_of(variable._data).accumulate(variable, g, create_graph)


# --------------------------------------------------------------------------- small helpers


def _edge_of(variable: Variable) -> tuple:
    if variable.grad_fn is not None:
        return variable.grad_fn, variable._output_nr
    return variable._accumulator(), 0


def _number_of_outputs(node: Any) -> int:
    return 1 if type(node) is AccumulateGrad else len(node._output_metadata)


_FLOAT64 = np.dtype(np.float64)
_RAW = (float, np.ndarray)  # what the engine's own sums are held as


def _add_to_buffer(
    buffers: dict, node: Any, output_nr: int, g: Variable, create_graph: bool
) -> None:
    """Add `g` into the gradient `node` will receive for its output `output_nr`.

    Without create_graph nobody differentiates these sums, so, as PyTorch's engine does,
    NumPy gradients add up as raw arrays in a buffer the engine owns (`_finished` wraps
    it again). With create_graph they add up as Variables, recorded like any op."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * _number_of_outputs(node)
    held = slots[output_nr]
    if held is None:
        slots[output_nr] = g
        return
    data = g._data
    if type(data) is np.ndarray and not create_graph:
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


def _finished(grads: list) -> list:
    """A node's gradients, the engine's raw sums wrapped as Variables again."""
    for index, g in enumerate(grads):
        if type(g) is np.ndarray:
            grads[index] = Variable._make(g)
        elif type(g) is float:
            grads[index] = Variable._make(np.array(g))
    return grads


def _zeros_for(metadata: Any) -> Variable | None:
    """The gradient of an output that received none: zeros of its shape, dtype and kind."""
    if metadata is None:
        return None  # not a Variable (a plain value forward passed through): no gradient
    if len(metadata) == 3:  # (shape, dtype, kind): not a NumPy array
        shape, dtype, kind = metadata
        return Variable._make(kind.zeros(shape, dtype))
    shape, dtype = metadata
    return Variable._make(np.zeros(shape, dtype=dtype))


def _targets_of(inputs: list[Variable]) -> dict:
    """Map each input's place in the graph, (node, output_nr), to [(index, input)]."""
    targets: dict = {}
    for index, variable in enumerate(inputs):
        checks.target(variable, index)
        targets.setdefault(_edge_of(variable), []).append((index, variable))
    return targets


def _backward_method(
    self: Variable,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Compute the gradient of this Variable with respect to the graph's leaves.

    `gradient` is d(loss)/d(self), needed unless self has a single element (then 1)."""
    backward(self, gradient, retain_graph, create_graph, inputs)


# variable.py does not import the engine (the engine imports it); it is attached here.
_backward_method.__name__ = _backward_method.__qualname__ = "backward"
Variable.backward = _backward_method
