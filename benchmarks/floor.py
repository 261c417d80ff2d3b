"""The floor for benchmark (a): the same chain on the barest Python graph one can write.

One slotted object per operation, raw NumPy 0-d arrays, a backward specialised to this
chain, no Function/ctx, no checks, no version counters, no hooks. No engine that keeps
PyTorch's contract can be faster than this, so it shows what the contract costs.
"""

from __future__ import annotations

import time

import numpy as np


class _Node:
    __slots__ = ("value", "parents", "kind")

    def __init__(self, value: np.ndarray, parents: tuple, kind: str) -> None:
        self.value = value
        self.parents = parents
        self.kind = kind


def bare_chain(nodes: int) -> float:
    """µs per node, forward plus backward, garbage collector on."""
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
