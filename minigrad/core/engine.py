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

from minigrad.core import anomaly, checks, fast_path, hooks
from minigrad.core.buffers import add_to_buffer as _add_to_buffer
from minigrad.core.fast_path import finished as _finished
from minigrad.core.function import BackwardNode, zeros_for
from minigrad.core.grad_assignments import GradAssignments
from minigrad.core.hooks import accumulate_into as _accumulate_into_leaf
from minigrad.core.state import state
from minigrad.core.variable import AccumulateGrad, Variable

# Called as observer(node, grads) before each node runs: see add_step_observer in
# minigrad/autodiff/graph.py (graph drawings use it).
_step_observers: list[Callable[[Any, list], None]] = []


def backward(
    tensors: Variable | Sequence[Variable],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Variable | Sequence[Variable] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's `.grad` (or only into `inputs`).

    PyTorch's signature: `grad_tensors` holds one gradient per output (None for a single
    number); `grad_variables` is its old name."""
    if grad_variables is not None:
        grad_tensors, name = grad_variables, "grad_variables"
    else:
        name = "grad_tensors"
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, name)


def run_backward(
    tensors: Any,
    gradients: Any,
    retain_graph: bool | None,
    create_graph: bool,
    inputs: Any,
    gradients_name: str,
) -> None:
    """backward(), for Variable.backward too: `gradients_name` is what messages call them."""
    checks.modes("backward", retain_graph, create_graph)
    roots = checks.variables(tensors, "tensors")
    if not roots:
        raise RuntimeError("backward() needs at least one Variable to differentiate; got none.")
    input_list = None if inputs is None else checks.variables(inputs, "inputs")
    seeds = checks.seed_gradients(roots, gradients, gradients_name)
    # minigrad.compile keeps the seeds as constants
    state.listener.constants(seeds)
    targets = None
    if input_list is not None:
        if not input_list:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = hooks.targets_of(input_list)
    if retain_graph is None:
        retain_graph = create_graph
    _execute(roots, seeds, retain_graph, create_graph, targets, accumulate=True)


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
    dependencies, consumers = _count_dependencies(root_nodes, targets is not None)
    ready = [node for node in dict.fromkeys(root_nodes) if dependencies.get(node, 0) == 0]
    captured: dict[int, Variable] = {}
    # With targets (grad(), backward(inputs=...)) only the nodes that lead to them run.
    needed = None if targets is None else hooks.leading_to(targets, consumers)

    previous_mode, previous_log = state.grad_enabled, state.grad_assignments
    # Backward formulas are Variable operations: recorded only when create_graph asks.
    state.grad_enabled = create_graph
    # The `.grad = ...` assignments made during this pass (see _run_node).
    state.grad_assignments = assignments = GradAssignments()
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
                hooks.before_node(node, grads, targets, captured, accumulate)
            for observer in _step_observers:
                observer(node, grads)
            if type(node) is AccumulateGrad:
                if accumulate and (targets is None or (node, 0) in targets):
                    _accumulate_into_leaf(node.variable, grads[0], create_graph)
                continue
            input_grads = _run_node(node, grads, assignments)
            if not retain_graph and node._saved:
                node._saved = None  # free the saved values (saved.free(node), inlined)
            # Send each input's gradient on; the node it feeds has one consumer less, and
            # is ready once its last consumer has sent its gradient.
            edges = zip(node._next_nodes, node._next_nrs, input_grads)
            for next_node, output_nr, input_grad in edges:
                if next_node is not None:
                    if input_grad is not None:
                        _add_to_buffer(buffers, next_node, output_nr, input_grad, create_graph)
                    dependencies[next_node] -= 1
                    if not dependencies[next_node]:
                        ready.append(next_node)
    finally:
        state.grad_enabled = previous_mode
        state.grad_assignments = previous_log
    return captured


def _count_dependencies(root_nodes: list, with_consumers: bool) -> tuple[dict, dict | None]:
    """For each reachable node, the number of edges that point at it, and (if asked) the
    nodes they come from."""
    dependencies: dict[Any, int] = {}
    consumers: dict[Any, list] | None = {} if with_consumers else None
    seen = set(root_nodes)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for next_node in node._next_nodes:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            if consumers is not None:
                consumers.setdefault(next_node, []).append(node)
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies, consumers


def _release_inputs(node: Any, dependencies: dict, ready: list) -> None:
    """`node` is done: each node it feeds has one consumer less; the last one makes it ready."""
    for next_node in node._next_nodes:
        if next_node is not None:
            dependencies[next_node] -= 1
            if dependencies[next_node] == 0:
                ready.append(next_node)


def _run_node(node: BackwardNode, grads: list, assignments: GradAssignments) -> tuple:
    """Call one node's backward with its complete output gradients."""
    if len(grads) > 1 or grads[0] is None:
        if all(g is None for g in grads):
            # Nothing flows through this node; its inputs get nothing either.
            return (None,) * len(node._next_nodes)
        if node.materialize_grads:
            grads = [zeros_for(m) if g is None else g for g, m in zip(grads, node._output_metadata)]

    # A built-in op's formula runs on bare arrays when nobody wants a graph of it, no tool
    # watches the operations (minigrad.compile records them) and anomaly mode is off.
    if node._function.backward_on_arrays and not state.grad_enabled and not state.anomaly_enabled:
        arrays = None if state.listener.watching else fast_path.arrays_of(grads)
        if arrays is not None:  # None: some gradient is not a NumPy array (a device's)
            return node._call_backward(arrays, on_arrays=True)
    # afnio's backward may set `x.grad = g` and return g: undo the logged set, add g once.
    logged = assignments.mark()
    input_grads = node._call_backward(grads)
    assignments.undo_returned(node, input_grads, since=logged)

    if state.anomaly_enabled:
        anomaly.check_gradients(node, input_grads)
    return input_grads


# --------------------------------------------------------------------------- small helpers


def _edge_of(variable: Variable) -> tuple:
    if variable._grad_fn is not None:
        return variable._grad_fn, variable._output_nr
    return variable._accumulator(), 0


__all__ = ["backward"]
