"""Python's garbage collector and the chain of benchmark (a).

Every object the collector tracks is walked by each collection of its generation, so an
engine that builds many tracked objects per recorded operation pays for them over and
over while a graph is alive. This module counts those objects and switches the collector
on or off around a timed run, so that the harness can report the collector's share of
the chain's time.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import minigrad

# Each step of the chain x = tanh(x * w + b) records three operations: mul, add, tanh.
RECORDED_PER_STEP = 3


# The threshold site/benchmark-history.md suggests to a program that records graphs of
# 100,000 nodes: the youngest generation is collected every 100,000 allocations instead of
# every 700, so a long recording rarely stops to walk its own (still alive) graph.
RAISED_THRESHOLD = (100_000, 10, 10)


@contextmanager
def gc_state(enabled: bool, threshold: tuple[int, int, int] | None = None) -> Iterator[None]:
    """Collect garbage, then run the block with the collector on or off (and, if given,
    at `threshold`); restore both after."""
    was_enabled = gc.isenabled()
    was_threshold = gc.get_threshold()
    gc.collect()
    if enabled:
        gc.enable()
    else:
        gc.disable()
    if threshold is not None:
        gc.set_threshold(*threshold)
    try:
        yield
    finally:
        gc.set_threshold(*was_threshold)
        if was_enabled:
            gc.enable()
        else:
            gc.disable()


def with_gc(
    measure: Callable[[], float | None],
    enabled: bool,
    threshold: tuple[int, int, int] | None = None,
) -> Callable[[], float | None]:
    """`measure` wrapped so that each call runs under `gc_state(enabled, threshold)`."""

    def wrapped() -> float | None:
        with gc_state(enabled, threshold):
            return measure()

    return wrapped


def _tracked_per_step(leaves: tuple[Any, Any, Any], tanh: Callable, steps: int) -> float:
    """Objects the collector tracks per chain step while the chain's graph is alive."""
    x, w, b = leaves
    with gc_state(True):
        before = len(gc.get_objects())
        y = x
        for _ in range(steps):
            y = tanh(y * w + b)
        gc.collect()  # count live objects only, not garbage a collection would free
        after = len(gc.get_objects())
        del y  # the graph stays alive until both counts are taken
    return (after - before) / steps


def minigrad_tracked_per_step(steps: int) -> float:
    """GC-tracked objects per chain step that minigrad keeps alive in the graph."""
    leaves = tuple(minigrad.Variable(v, requires_grad=True) for v in (0.5, 0.9, 0.1))
    return _tracked_per_step(leaves, lambda v: v.tanh(), steps)


def torch_tracked_per_step(steps: int) -> float | None:
    """The same count for PyTorch autograd, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    leaves = tuple(
        torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.5, 0.9, 0.1)
    )
    return _tracked_per_step(leaves, torch.tanh, steps)


def gc_share(time_gc_on: float | None, time_gc_off: float | None) -> float | None:
    """The fraction of the time with the collector on that the collector accounts for."""
    if time_gc_on is None or time_gc_off is None:
        return None
    return (time_gc_on - time_gc_off) / time_gc_on
