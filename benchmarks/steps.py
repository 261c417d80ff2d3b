"""What the training-step benchmarks (cnn.py, gpt.py, rnn.py) share: timing one step
function, and interleaving the runs so that a busy machine slows them all alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(step: Callable, x: Any, y: Any, steps: int) -> float:
    """Median ms per step over `steps` steps (after 3 untimed ones)."""
    for _ in range(3):
        step(x, y)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step(x, y).item()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def interleaved_medians(
    runs: dict[str, tuple[Callable, Any, Any]], steps: int, repeats: int
) -> dict[str, float | None]:
    """name -> median ms per step over `repeats` rounds, each round timing every run once
    in turn; "torch eager" is None when PyTorch is not installed."""
    results: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (step, step_x, step_y) in runs.items():
            results[name].append(timed(step, step_x, step_y, steps))
    medians: dict[str, float | None] = {
        name: statistics.median(values) for name, values in results.items()
    }
    medians.setdefault("torch eager", None)
    return medians
