"""Benchmarks (d) and (e): minigrad.compile against eager minigrad, PyTorch eager and NumPy.

(d) the MLP step of mlp.py, compiled; its baseline is the same step by hand in NumPy.
(e) a 100-step scalar training loop of y = tanh(w * x + b) with a squared error, manual
    SGD and zeroed gradients, per graph node (5 recorded nodes a step: *, +, tanh, -, **2).
    Each repeat compiles afresh, so the loop includes tracing; the steady state (replays
    only) is reported beside it, and so is the time the tracing calls took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import mlp

import minigrad

LOOP_STEPS = 100
NODES_PER_STEP = 5
LEARNING_RATE = 0.01


def compiled_mlp_step_fn(problem: dict) -> Callable[[], float]:
    return minigrad.compile(mlp.minigrad_step_fn(problem))


def trace_seconds_of_mlp(problem: dict) -> float:
    """Seconds the tracing calls of a fresh compiled MLP step take (its first three calls)."""
    step = compiled_mlp_step_fn(problem)
    for _ in range(3):
        step()
    return step.trace_seconds


def _scalar_step(lib: Any, x: Any, w: Any, b: Any, target: Any) -> Callable[[], float]:
    """The step, written once for minigrad and for PyTorch."""

    def step() -> float:
        y = (w * x + b).tanh()
        loss = (y - target) ** 2
        loss.backward()
        with lib.no_grad():
            w.sub_(LEARNING_RATE * w.grad)
            b.sub_(LEARNING_RATE * b.grad)
        w.grad = None
        b.grad = None
        return loss.item()

    return step


def _scalar_problem(lib: Any) -> tuple:
    dtype = {"dtype": lib.float64} if lib is not minigrad else {}
    x = lib.tensor(0.5, **dtype)
    target = lib.tensor(0.3, **dtype)
    w = lib.tensor(0.9, requires_grad=True, **dtype)
    b = lib.tensor(0.1, requires_grad=True, **dtype)
    return x, w, b, target


def scalar_loop_measure(kind: str) -> Callable[[], float | None] | None:
    """µs per node of the 100-step loop: "eager", "compiled" (tracing included),
    "replay" (an already traced step) or "torch"."""
    if kind == "torch":
        try:
            import torch
        except ImportError:
            return None
        torch.set_num_threads(1)
        lib = torch
    else:
        lib = minigrad

    def run() -> float:
        x, w, b, target = _scalar_problem(lib)
        step = _scalar_step(lib, x, w, b, target)
        if kind == "replay":
            step = minigrad.compile(step)
            for _ in range(3):
                step()
        elif kind == "compiled":
            step = minigrad.compile(step)
        start = time.perf_counter()
        for _ in range(LOOP_STEPS):
            step()
        elapsed = time.perf_counter() - start
        return elapsed / (LOOP_STEPS * NODES_PER_STEP) * 1e6

    return run


def scalar_trace_seconds() -> float:
    x, w, b, target = _scalar_problem(minigrad)
    step = minigrad.compile(_scalar_step(minigrad, x, w, b, target))
    for _ in range(3):
        step()
    return step.trace_seconds
