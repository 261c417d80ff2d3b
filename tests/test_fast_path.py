"""The fast paths (minigrad/core/fast_path.py) are shortcuts for cases the plain code also
handles: with every shortcut turned off, the same programs build the same graphs and give
the same gradients, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import nn
from minigrad.core import fast_path


def _without_fast_paths(patch: pytest.MonkeyPatch) -> None:
    """Every fast path answers "not my case", so the plain code runs."""
    patch.setattr(fast_path, "record_usual_inputs", lambda node, args: False)
    patch.setattr(fast_path, "attach_one_float_output", lambda node, outputs: False)
    patch.setattr(fast_path, "add_raw", lambda slots, output_nr, held, g: False)
    patch.setattr(fast_path, "on_floats", lambda compute, a, b: None)
    patch.setattr(fast_path, "arrays_of", lambda grads: None)  # backward on Variables
    patch.setattr(fast_path, "in_place", lambda compute, x, other: False)


def _graph(root: minigrad.Variable) -> list:
    """The graph's shape, node by node, in a fixed order: names, flags, shapes, edges."""
    described, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        row = [node.name()]
        if hasattr(node, "needs_input_grad"):
            metadata = [None if m is None else (m[0], str(m[1])) for m in node._output_metadata]
            row += [node.needs_input_grad, node._input_shapes, metadata]
        row.append([None if n is None else (n.name(), nr) for n, nr in node.next_functions])
        described.append(row)
        stack.extend(n for n, _ in node.next_functions)
    return described


def _scalar_chain(x: minigrad.Variable, depth: int) -> minigrad.Variable:
    y = x
    for index in range(depth):
        y = y * 1.01 + x * 0.5 if index % 2 else (y - 0.25) * y
    return y


def _mlp_step(seed: int) -> tuple:
    minigrad.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    inputs = minigrad.randn(16, 5)
    labels = minigrad.randint(0, 3, (16,))
    loss = nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    return loss, [p.grad.data.copy() for p in model.parameters()]


def _run_everything() -> dict:
    results = {}
    x = minigrad.tensor(0.7, dtype=minigrad.float64, requires_grad=True)
    chain = _scalar_chain(x, 30)
    results["chain graph"] = _graph(chain)
    chain.backward()
    results["chain grad"] = x.grad.data.copy()
    loss, grads = _mlp_step(0)
    results["mlp graph"] = _graph(loss)
    results["mlp grads"] = grads
    # One input used many times: gradients add up in the engine's buffers.
    w = minigrad.randn(3, 4, requires_grad=True)
    total = (w * w).sum() + (w * 2).sum() + w.exp().mean() + (w.T @ w).sum()
    total.backward()
    results["shared input grad"] = w.grad.data.copy()
    # Double backward: create_graph makes the buffers' sums Variables again.
    z = minigrad.tensor([0.3, -1.2], requires_grad=True)
    (first,) = minigrad.autograd.grad((z * z * z).sum(), z, create_graph=True)
    first.sum().backward()
    results["double backward"] = z.grad.data.copy()
    # An optimizer's update by hand: in place, under no_grad.
    with minigrad.no_grad():
        w -= 0.1 * w.grad
        w *= 2
        w /= 3.0
        w += 1
    results["updated"] = (w.data.copy(), w._version)
    return results


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def test_fast_paths_change_nothing_but_speed(monkeypatch: pytest.MonkeyPatch):
    fast = _run_everything()
    with monkeypatch.context() as patch:
        _without_fast_paths(patch)
        slow = _run_everything()
    for name in fast:
        assert _equal(fast[name], slow[name]), name


def test_the_fast_paths_are_taken(monkeypatch: pytest.MonkeyPatch):
    """Each shortcut finishes the usual case (else the test above compares nothing)."""
    taken = {}
    names = ("record_usual_inputs", "attach_one_float_output", "add_raw", "in_place")
    for name in names:
        original = getattr(fast_path, name)

        def spy(*args, _original=original, _name=name):
            answer = _original(*args)
            taken[_name] = taken.get(_name, 0) + bool(answer)
            return answer

        monkeypatch.setattr(fast_path, name, spy)
    _run_everything()
    assert all(taken.get(name, 0) > 0 for name in taken) and len(taken) == 4, taken
    x = minigrad.tensor(2.0)
    assert fast_path.on_floats(np.add, x, 0.5) is not None


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=4),
    ops=st.lists(st.sampled_from(["add", "sub", "mul", "tanh", "mean"]), min_size=1, max_size=12),
)
def test_random_programs_agree_with_and_without_fast_paths(values, ops):
    def run() -> tuple:
        x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
        s = minigrad.tensor(values[0], dtype=minigrad.float64, requires_grad=True)
        y = x
        for op in ops:
            if op == "add":
                y = y + s
            elif op == "sub":
                y = s - y
            elif op == "mul":
                y = y * x
            elif op == "tanh":
                y = y.tanh()
            else:
                y = y - y.mean()
        y.sum().backward()
        grads = [None if v.grad is None else v.grad.data.copy() for v in (x, s)]
        return grads, _graph(y)

    fast = run()
    with pytest.MonkeyPatch.context() as patch:
        _without_fast_paths(patch)
        slow = run()
    assert _equal(list(fast), list(slow))
