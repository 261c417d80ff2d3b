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

from minigrad.core import checks, fast_path, grad_mode
from minigrad.core.fast_path import finished as _finished
from minigrad.core.function import BackwardNode, zeros_for
from minigrad.core.grad_mode import state
from minigrad.core.variable import AccumulateGrad, Variable, kind_of

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
        targets = targets_of(input_list)
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
        add_to_buffer(buffers, node, output_nr, seed, True)
        root_nodes.append(node)
    dependencies, consumers = _count_dependencies(root_nodes, targets is not None)
    ready = [node for node in dict.fromkeys(root_nodes) if dependencies.get(node, 0) == 0]
    captured: dict[int, Variable] = {}
    # With targets (grad(), backward(inputs=...)) only the nodes that lead to them run.
    needed = None if targets is None else leading_to(targets, consumers)

    previous_mode, previous_log = state.grad_enabled, state.grad_assignments
    # Backward formulas are Variable operations: recorded only when create_graph asks.
    state.grad_enabled = create_graph
    # The `.grad = ...` assignments made during this pass (see _run_node).
    state.grad_assignments = assignments = GradAssignments()
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is None or (needed is not None and node not in needed):
                # No gradient here (or none wanted): skip its backward; its inputs lose a consumer.
                _release_inputs(node, dependencies, ready)
                continue
            # Raw sums in the buffers (add_raw) become Variables (_finished) where one is read.
            if node._pre_hooks or node._retained or targets is not None:
                before_node(node, _finished(grads), targets, captured, accumulate)
            for observer in _step_observers:
                observer(node, _finished(grads))
            if type(node) is AccumulateGrad:
                if accumulate and (targets is None or (node, 0) in targets):
                    accumulate_into(node.variable, _finished(grads)[0], create_graph)
                    if node._post_hooks:  # register_post_accumulate_grad_hook (ops/hooks.py)
                        node._post_hooks(node.variable)
                continue
            input_grads = _run_node(node, grads, assignments)
            if not retain_graph and node._saved:
                node._saved = None  # free the saved values (saved.free(node), inlined)
            # Send each input's gradient on: a node is ready once its last consumer has sent one.
            edges = zip(node._next_nodes, node._next_nrs, input_grads)
            for next_node, output_nr, input_grad in edges:
                if next_node is not None:
                    if input_grad is not None:
                        add_to_buffer(buffers, next_node, output_nr, input_grad, create_graph)
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
    input_grads = node._call_backward(_finished(grads))
    assignments.undo_returned(node, input_grads, since=logged)

    if state.anomaly_enabled:
        grad_mode.check_gradients(node, input_grads)
    return input_grads


# --------------------------------------------------------------------------- small helpers


def _edge_of(variable: Variable) -> tuple:
    if variable._grad_fn is not None:
        return variable._grad_fn, variable._output_nr
    return variable._accumulator(), 0


# ------------------------------------------------------------------------- buffers
#
# The engine's gradient buffers: where the gradients flowing into one node add up.
#
# A node runs once all of its consumers have sent their gradients; until then they add up
# here, one slot per output of the node.

def _number_of_outputs(node: Any) -> int:
    return 1 if type(node) is AccumulateGrad else len(node._output_metadata)


def add_to_buffer(
    buffers: dict, node: Any, output_nr: int, g: Variable, create_graph: bool
) -> None:
    """Add `g` into the gradient `node` will receive for its output `output_nr`.

    The sums are Variable additions, recorded like any op when create_graph asks."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * _number_of_outputs(node)
    held = slots[output_nr]
    if held is None:
        slots[output_nr] = g
        return
    # Without create_graph the sum may add raw arrays (fast_path.py), unless a tool must see an Add.
    if not create_graph and not state.listener.watching:
        if fast_path.add_raw(slots, output_nr, held, g):
            return
    held = fast_path.as_variable(held)
    if type(g._data) is np.ndarray:
        slots[output_nr] = held + g
    else:  # another kind of value (feedback text, ...) adds up its own way
        slots[output_nr] = kind_of(g._data).add(held, g)


# ------------------------------------------------------------------------- grad assignments
#
# afnio's textual backward sets `x.grad = feedback` and also returns it: add it once.
#
# While the engine runs backward formulas, `state.grad_assignments` is a GradAssignments
# log and Variable's `.grad` setter notes each assignment in it. After a node's backward,
# a leaf input whose .grad was set to exactly the gradient the backward also returned gets
# its previous .grad back; the engine then accumulates the returned gradient, once.

class GradAssignments:
    """The (variable, previous .grad) of each `.grad = ...` made during one backward pass."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, Any]] = []

    def note(self, variable: Any, previous: Any) -> None:
        self.entries.append((variable, previous))

    def mark(self) -> int:
        """Where the log stands before a node's backward runs."""
        return len(self.entries)

    def undo_returned(self, node: Any, input_grads: list, since: int) -> None:
        """Undo the assignments made since `since` whose gradient the node also returned."""
        if len(self.entries) == since:
            return  # the usual case: the backward set no .grad
        for variable, previous in reversed(self.entries[since:]):
            for next_node, input_grad in zip(node._next_nodes, input_grads):
                if (
                    type(next_node) is AccumulateGrad
                    and next_node.variable is variable
                    and input_grad is not None
                    and variable._grad is input_grad
                ):
                    variable._grad = previous
        del self.entries[since:]


# ------------------------------------------------------------------------- hooks
#
# What the engine does around a node beyond calling its backward.
#
# Before a node runs: its gradient hooks (`register_hook`), the gradients of non-leaves
# that called `retain_grad()`, and the gradients `grad()` or `backward(inputs=...)` asked
# for.

def before_node(
    node: Any, grads: list, targets: dict | None, captured: dict, accumulate: bool
) -> None:
    """Run hooks, keep retained gradients, and catch the gradients `grad()` asked for."""
    if node._pre_hooks or node._retained:
        # minigrad.compile decides whether it can follow them (trace.py); grad() and
        # backward(inputs=) only pick gradients the recorded formulas made.
        state.listener.gradient_hooks(node)
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
                accumulate_into(variable, grads[output_nr], state.grad_enabled)
    if targets is None:
        return
    for output_nr, g in enumerate(grads):
        for index, variable in targets.get((node, output_nr), ()):
            if accumulate and type(node) is BackwardNode:
                # backward(inputs=[non_leaf]) fills that Variable's .grad.
                if g is not None and not variable._retains_grad:
                    accumulate_into(variable, g, state.grad_enabled)
            elif not accumulate:
                captured[index] = g


def accumulate_into(variable: Variable | None, g: Variable | None, create_graph: bool) -> None:
    """Add `g` into `variable.grad`, the way gradients of its kind add up."""
    if variable is None or g is None:
        return
    previous = variable._grad
    # Numbers: a sum; feedback texts: joined.
    variable._grad = kind_of(variable._data).accumulate(variable, g, create_graph)
    # minigrad.compile replays this accumulation
    state.listener.accumulate(variable, previous, g)


def targets_of(inputs: list[Variable]) -> dict:
    """Map each input's place in the graph, (node, output_nr), to [(index, input)]."""
    targets: dict = {}
    for index, variable in enumerate(inputs):
        checks.target(variable, index)
        if variable._grad_fn is not None:
            edge = (variable._grad_fn, variable._output_nr)
        else:
            edge = (variable._accumulator(), 0)
        targets.setdefault(edge, []).append((index, variable))
    return targets


def leading_to(targets: dict, consumers: dict) -> set:
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


# ------------------------------------------------------------------------- gradients
#
# grad(): the gradients of outputs with respect to chosen inputs, without touching `.grad`.
#
# It runs the engine's walk (minigrad/core/engine.py) with the inputs as targets: only
# the nodes that lead to them run, and their gradients are caught instead of accumulated.

def grad(
    outputs: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Variable | None, ...]:
    """Return d(outputs)/d(input) for each input, without touching any `.grad`."""
    checks.modes("grad", retain_graph, create_graph, allow_unused)
    roots = checks.variables(outputs, "outputs")
    if not roots:
        raise RuntimeError(
            "grad requires non-empty outputs: pass the Variable(s) to differentiate."
        )
    input_list = checks.variables(inputs, "inputs")
    seeds = checks.seed_gradients(roots, grad_outputs, "grad_outputs")
    state.listener.constants(seeds)  # minigrad.compile keeps the seeds as constants
    checks.grad_inputs(input_list)
    if retain_graph is None:
        retain_graph = create_graph
    captured = _execute(
        roots, seeds, retain_graph, create_graph, targets_of(input_list), accumulate=False
    )
    results = []
    for index, variable in enumerate(input_list):
        found = captured.get(index)
        if found is None and not allow_unused:
            raise checks.unused(index)
        results.append(_of_dtype(found, variable))
    return tuple(results)


def _of_dtype(gradient: Variable | None, variable: Variable) -> Variable | None:
    """A gradient in its Variable's own float dtype, as PyTorch gives it (float32 weights
    times a float64 constant promote on the way back)."""
    if gradient is None or not variable.is_floating_point():
        return gradient
    if type(gradient._data) is np.ndarray and gradient._data.dtype != variable._data.dtype:
        return gradient.to(variable._data.dtype)
    return gradient


__all__ = ["backward"]
