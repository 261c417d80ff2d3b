"""The floor for benchmark (a): the same chain on the barest Python graph one can write.

One slotted object per operation, raw NumPy 0-d arrays, a backward specialised to this
chain, no Function/ctx, no checks, no version counters, no hooks. No engine that keeps
PyTorch's contract can be faster than this, so it shows what the contract costs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


class _Node:
    __slots__ = ("value", "parents", "kind")

    def __init__(self, value: np.ndarray, parents: tuple, kind: str) -> None:
        self.value = value
        self.parents = parents
        self.kind = kind


def bare_chain(nodes: int) -> float:
    """µs per node, forward plus backward (the caller sets the garbage collector)."""
    w = _Node(np.asarray(0.9), (), "leaf")
    b = _Node(np.asarray(0.1), (), "leaf")
    y = _Node(np.asarray(0.5), (), "leaf")
    start = time.perf_counter()
    for _ in range(nodes):
        product = _Node(y.value * w.value, (y, w), "mul")
        total = _Node(product.value + b.value, (product, b), "add")
        y = _Node(np.tanh(total.value), (total,), "tanh")
    # The chain is a line, so backward walks it from the end with one running gradient.
    grad, grad_w, grad_b = np.asarray(1.0), 0.0, 0.0
    node = y
    while node.kind != "leaf":
        if node.kind == "tanh":
            grad = grad * (1 - node.value * node.value)
        elif node.kind == "add":
            grad_b = grad_b + grad
        else:
            grad_w = grad_w + grad * node.parents[0].value
            grad = grad * node.parents[1].value
        node = node.parents[0]
    return (time.perf_counter() - start) / nodes * 1e6


class _Tape:
    """The barest reverse mode: each operation appends a closure that adds its inputs'
    gradients into a dict keyed by id; backward runs the closures in reverse order."""

    def __init__(self) -> None:
        self.steps: list = []

    def record(self, backward_step) -> None:
        self.steps.append(backward_step)

    def backward(self, output: np.ndarray) -> dict[int, np.ndarray]:
        grads = {id(output): np.ones_like(output)}
        for step in reversed(self.steps):
            step(grads)
        return grads


def _add_grad(grads: dict, array: np.ndarray, grad: np.ndarray) -> None:
    key = id(array)
    grads[key] = grads[key] + grad if key in grads else grad


def bare_mlp_step_fn(
    problem: dict[str, np.ndarray], learning_rate: float, batch: int
) -> Callable[[], float]:
    """The MLP step of benchmark (b) on the tape above: one closure per operation."""
    x, onehot = problem["x"], problem["onehot"]
    params = [problem[name].copy() for name in ("w1", "b1", "w2", "b2")]

    def step() -> float:
        tape = _Tape()
        w1, b1, w2, b2 = params

        def linear(inputs, weight, bias):
            out = inputs @ weight.T + bias

            def back(grads):
                g = grads[id(out)]
                _add_grad(grads, weight, g.T @ inputs)
                _add_grad(grads, bias, g.sum(axis=0))
                _add_grad(grads, inputs, g @ weight)

            tape.record(back)
            return out

        def relu(z):
            out = np.maximum(z, 0)
            tape.record(lambda grads: _add_grad(grads, z, grads[id(out)] * (z > 0)))
            return out

        def cross_entropy(logits):
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss = np.asarray(-(log_probs * onehot).sum() / batch)

            def back(grads):
                g_log_probs = -onehot / batch * grads[id(loss)]
                g = g_log_probs - np.exp(log_probs) * g_log_probs.sum(axis=1, keepdims=True)
                _add_grad(grads, logits, g)

            tape.record(back)
            return loss

        loss = cross_entropy(linear(relu(linear(x, w1, b1)), w2, b2))
        grads = tape.backward(loss)
        for p in params:
            p -= learning_rate * grads[id(p)]
        return float(loss)

    return step
