"""What a recorded graph costs the garbage collector, and that the savings change nothing.

Counted with Python's own `gc.get_objects()` (the collector's list of what it tracks), not
with a counter of ours: the chain x = tanh(x * w + b) records three nodes a step.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import minigrad
from minigrad.autodiff import graph
from minigrad.core.errors import InplaceModifiedError


def tracked_per_step(steps: int = 2000) -> float:
    x, w, b = (minigrad.Variable(v, requires_grad=True) for v in (0.5, 0.9, 0.1))
    gc.collect()
    before = len(gc.get_objects())
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    gc.collect()  # what is alive, not garbage waiting for a collection
    after = len(gc.get_objects())
    assert y.grad_fn is not None  # the graph is alive until both counts are taken
    return (after - before) / steps


def test_a_chain_step_keeps_at_most_nine_tracked_objects_three_per_node() -> None:
    per_step = tracked_per_step()
    assert per_step <= 9.0
    assert per_step / 3 <= 3.0


def test_next_functions_reads_as_pytorch_pairs() -> None:
    x = minigrad.Variable(2.0, requires_grad=True)
    c = minigrad.Variable(3.0)
    y = (x * x).tanh() * c
    (mul_node, output_nr), (constant, constant_nr) = y.grad_fn.next_functions
    assert mul_node.name() == "TanhBackward" and output_nr == 0
    assert constant is None and constant_nr == 0
    leaf_edges = mul_node.next_functions[0][0].next_functions
    assert [type(node).__name__ for node, _ in leaf_edges] == ["AccumulateGrad"] * 2
    assert leaf_edges[0][0].next_functions == ()


def test_a_result_saved_as_a_bare_array_still_refuses_an_in_place_change() -> None:
    x = minigrad.Variable(np.array([0.1, 0.2]), requires_grad=True)
    y = x.tanh()  # saves its own output, kept bare while it has no version counter
    y.add_(1.0)
    with pytest.raises(InplaceModifiedError):
        y.sum().backward()


def test_a_change_through_a_view_of_a_saved_result_is_refused_too() -> None:
    x = minigrad.Variable(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    y = x.exp()
    loss = y.sum()
    view = y[1:]
    del y
    with minigrad.no_grad():  # a change the graph cannot record, but its counter sees
        view.mul_(2.0)
    with pytest.raises(InplaceModifiedError):
        loss.backward()


def test_a_result_saved_bare_gives_the_same_gradients_and_double_backward() -> None:
    x = minigrad.Variable(np.array([0.3, -0.7]), requires_grad=True)
    y = x.tanh()
    (g,) = minigrad.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 1 - np.tanh([0.3, -0.7]) ** 2)
    (gg,) = minigrad.autograd.grad(g.sum(), x)
    t = np.tanh([0.3, -0.7])
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t**2))


def test_saved_values_and_saved_result_name_the_bare_output() -> None:
    x = minigrad.Variable(np.array([0.5]), requires_grad=True)
    y = x.tanh()
    (value,) = graph.saved_values(y.grad_fn)
    assert value.output_nr == 0
    np.testing.assert_array_equal(value.value, y.detach().numpy())
    np.testing.assert_array_equal(y.grad_fn._saved_result.detach().numpy(), y.detach().numpy())
    assert y.grad_fn._saved_result.grad_fn is y.grad_fn


def test_a_drawing_still_finds_results_the_caller_holds() -> None:
    """Nodes keep no references to their outputs: graph.output asks the collector."""
    x = minigrad.Variable(2.0, requires_grad=True)
    hidden = x * 3
    y = hidden + 1
    assert graph.output(hidden.grad_fn, 0) is hidden
    assert graph.input_variable(y.grad_fn, 0) is hidden
    del hidden
    gc.collect()
    assert graph.output(y.grad_fn.next_functions[0][0], 0) is None


# What a fresh reviewer found after nodes stopped holding their outputs (each failed before).


def test_a_drawing_keeps_the_users_result_after_a_create_graph_backward() -> None:
    """A create_graph backward rebuilds tanh's saved output as a second Variable of the
    same node: drawings and graph.output still take the one the user holds."""
    x = minigrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = x.tanh()
    y.name = "y"
    y.retain_grad()
    loss = (y * 3).sum()
    (g,) = minigrad.autograd.grad(loss, x, create_graph=True)
    loss.backward()
    assert graph.output(y.grad_fn, 0) is y
    source = minigrad.viz.draw(loss).source
    assert "<b>y</b>" in source and "grad [6, 6]" in source
    assert g.grad_fn is not None


def test_reading_saved_result_does_not_replace_the_output_in_drawings() -> None:
    x = minigrad.Variable(np.array([1.0, 2.0]), requires_grad=True)
    y = x.exp()
    y.name = "y2"
    assert y.grad_fn._saved_result is not y
    assert graph.output(y.grad_fn, 0) is y
    assert "<b>y2</b>" in minigrad.viz.draw(y.sum()).source


def test_a_drawing_notes_a_result_overwritten_in_place() -> None:
    x = minigrad.Variable(np.array([2.0, 3.0]), requires_grad=True)
    y = x * 2
    y.add_(1)
    assert "overwritten in place" in minigrad.viz.draw(y).source
    assert graph.output(y.grad_fn, 0) is y
