"""Per-operation overhead: one minigrad operation against the NumPy call it wraps.

Each case is timed timeit-style (the statement inlined in a loop of many calls; the
collector stays on, as in real use) in three ways on the same arrays:

- NumPy: the bare call on the ndarrays, the floor;
- no grad: minigrad on Variables that do not require grad (nothing is recorded);
- recorded: minigrad with one input requiring grad; the output, and with it the
  recorded node, is dropped right away, so this is the forward apply alone.

PyTorch is timed the same two ways, for comparison. Results are µs per call.
"""

from __future__ import annotations

import gc
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minigrad


@dataclass(frozen=True)
class OpCase:
    """One operation on one pair of inputs."""

    label: str
    statement: str  # evaluated with names a and b
    a: np.ndarray
    b: np.ndarray


def op_cases(seed: int = 0) -> list[OpCase]:
    """The operations the table reports, on fixed random inputs."""
    rng = np.random.default_rng(seed)

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    return [
        OpCase("`a * b`, float32 (32, 128)", "a * b", f32(32, 128), f32(32, 128)),
        OpCase("`a * b`, 0-d float64", "a * b", np.asarray(0.5), np.asarray(0.9)),
        OpCase("`a @ b`, float32 (32, 64) @ (64, 128)", "a @ b", f32(32, 64), f32(64, 128)),
    ]


def per_call_us(statement: str, a: object, b: object, calls: int) -> float:
    """µs per evaluation of `statement` over `calls` evaluations, garbage collector on."""
    timer = timeit.Timer(statement, setup="gc.enable()", globals={"a": a, "b": b, "gc": gc})
    return timer.timeit(calls) / calls * 1e6


def _timer(statement: str, a: object, b: object, calls: int) -> Callable[[], float]:
    """A measure for the harness: warms up once, then times `calls` calls per call."""
    per_call_us(statement, a, b, max(calls // 20, 10))
    return lambda: per_call_us(statement, a, b, calls)


def numpy_measure(case: OpCase, calls: int) -> Callable[[], float]:
    """The bare NumPy call."""
    return _timer(case.statement, case.a, case.b, calls)


def minigrad_measure(case: OpCase, calls: int, recorded: bool) -> Callable[[], float]:
    """minigrad's operation; with `recorded`, input a requires grad."""
    a = minigrad.Variable(case.a, requires_grad=recorded)
    b = minigrad.Variable(case.b)
    return _timer(case.statement, a, b, calls)


def torch_measure(case: OpCase, calls: int, recorded: bool) -> Callable[[], float] | None:
    """PyTorch's operation, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    a = torch.tensor(case.a, requires_grad=recorded)
    b = torch.tensor(case.b)
    return _timer(case.statement, a, b, calls)
