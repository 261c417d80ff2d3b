"""Benchmark (a): a long scalar chain x = tanh(x * w + b), forward + backward, µs per node.

Every node is three recorded operations on 0-d values, so this measures the engine's
per-operation overhead: building the graph, walking it, calling each backward.
The caller sets Python's garbage collector: the harness times the chain with it on, as
in real use, and off, to show the collector's share (see gc_share.py).
"""

from __future__ import annotations

import time

import minigrad

NODES = 100_000


def minigrad_chain(nodes: int = NODES) -> float:
    """µs per node for minigrad, forward plus backward."""
    x = minigrad.Variable(0.5, requires_grad=True)
    w = minigrad.Variable(0.9, requires_grad=True)
    b = minigrad.Variable(0.1, requires_grad=True)
    start = time.perf_counter()
    y = x
    for _ in range(nodes):
        y = (y * w + b).tanh()
    y.backward()
    elapsed = time.perf_counter() - start
    assert w.grad is not None and b.grad is not None
    return elapsed / nodes * 1e6


def torch_chain(nodes: int = NODES) -> float | None:
    """µs per node for PyTorch autograd, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    start = time.perf_counter()
    y = x
    for _ in range(nodes):
        y = torch.tanh(y * w + b)
    y.backward()
    elapsed = time.perf_counter() - start
    return elapsed / nodes * 1e6
