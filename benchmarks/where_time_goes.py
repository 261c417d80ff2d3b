"""Where each microsecond of (a) and (b) goes: the steps split into phases, each phase
against the same phase in NumPy by hand (b) or in PyTorch (a), and the difference divided
by the operations, nodes and updates that phase runs.

    .venv/bin/python benchmarks/where_time_goes.py

The phases are timed with time.perf_counter around each one, medians over many steps;
the counts come from a separate, untimed run that counts calls of `Function.apply`, of the
engine's `_run_node` and of the in-place updates. The result is a table of "µs over the
baseline per operation", which is the engine's bookkeeping, phase by phase.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mlp  # noqa: E402

import minigrad  # noqa: E402
from minigrad.core import engine, function  # noqa: E402

STEPS = 3000
CHAIN_NODES = 30_000
PHASES = ("forward", "backward", "update")


def _phased(step_parts: Callable[[], tuple[Callable, Callable, Callable]]) -> dict[str, float]:
    """Median µs of each phase over STEPS steps; step_parts() gives the three phases."""
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    forward, backward, update = step_parts()
    for index in range(STEPS + 100):
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        grads = backward(loss)
        t2 = time.perf_counter()
        update(grads)
        t3 = time.perf_counter()
        if index >= 100:
            times["forward"].append(t1 - t0)
            times["backward"].append(t2 - t1)
            times["update"].append(t3 - t2)
    return {phase: statistics.median(values) * 1e6 for phase, values in times.items()}


def _autodiff_parts(lib: object, x: object, onehot: object, params: list) -> Callable:
    w1, b1, w2, b2 = params

    def parts() -> tuple[Callable, Callable, Callable]:
        def forward() -> object:
            hidden = (x @ w1.T + b1).relu()
            logits = hidden @ w2.T + b2
            return -(logits.log_softmax(1) * onehot).sum() / mlp.BATCH

        def backward(loss: object) -> None:
            loss.backward()

        def update(_: object) -> None:
            with lib.no_grad():
                for p in params:
                    p -= mlp.LEARNING_RATE * p.grad
                    p.grad = None

        return forward, backward, update

    return parts


def _numpy_parts(problem: dict[str, np.ndarray]) -> Callable:
    x, onehot = problem["x"], problem["onehot"]
    params = [problem[name].copy() for name in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params

    def parts() -> tuple[Callable, Callable, Callable]:
        def forward() -> tuple:
            z1 = x @ w1.T + b1
            hidden = np.maximum(z1, 0)
            logits = hidden @ w2.T + b2
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss = -(log_probs * onehot).sum() / mlp.BATCH
            return loss, z1, hidden, log_probs

        def backward(saved: tuple) -> list:
            _, z1, hidden, log_probs = saved
            grad_log_probs = -onehot / mlp.BATCH
            total = grad_log_probs.sum(axis=1, keepdims=True)
            grad_logits = grad_log_probs - np.exp(log_probs) * total
            grad_z1 = (grad_logits @ w2) * (z1 > 0)
            return [grad_z1.T @ x, grad_z1.sum(axis=0), grad_logits.T @ hidden,
                    grad_logits.sum(axis=0)]

        def update(grads: list) -> None:
            for p, g in zip(params, grads):
                p -= mlp.LEARNING_RATE * g

        return forward, backward, update

    return parts


def _counts(parts: Callable) -> dict[str, int]:
    """Operations recorded in forward, nodes run in backward, operations in the update."""
    counted = {"apply": 0, "node": 0}
    apply, run_node = function.Function._apply_eagerly.__func__, engine._run_node

    def counting_apply(cls: type, args: tuple, kwargs: dict) -> object:
        counted["apply"] += 1
        return apply(cls, args, kwargs)

    def counting_run_node(*args: object) -> object:
        counted["node"] += 1
        return run_node(*args)

    function.Function._apply_eagerly = classmethod(counting_apply)
    engine._run_node = counting_run_node
    try:
        forward, backward, update = parts()
        loss = forward()
        recorded = counted["apply"]
        backward(loss)
        nodes, backward_applies = counted["node"], counted["apply"] - recorded
        update(None)
        update_applies = counted["apply"] - recorded - backward_applies
    finally:
        function.Function._apply_eagerly = classmethod(apply)
        engine._run_node = run_node
    return {"forward": recorded, "backward": nodes, "update": update_applies}


def mlp_table() -> str:
    problem = mlp.make_problem()
    x, onehot = minigrad.Variable(problem["x"]), minigrad.Variable(problem["onehot"])
    params = [minigrad.Parameter(problem[n].copy()) for n in ("w1", "b1", "w2", "b2")]
    ours_parts = _autodiff_parts(minigrad, x, onehot, params)
    counts = _counts(ours_parts)
    # 4 parameters, each `p -= lr * p.grad` (a multiply and an in-place subtract under
    # no_grad: the subtract takes fast_path.in_place, no Function) and `p.grad = None`.
    counts["update"] = max(counts["update"], 0)
    ours, numpy_times = {}, {}
    for _ in range(3):  # alternate, keep the medians' median
        for phase, value in _phased(ours_parts).items():
            ours.setdefault(phase, []).append(value)
        for phase, value in _phased(_numpy_parts(problem)).items():
            numpy_times.setdefault(phase, []).append(value)
    lines = [
        "| phase of (b) | minigrad µs | NumPy by hand µs | over NumPy µs | what runs | µs over "
        "NumPy per operation, node or leaf |",
        "|---|---:|---:|---:|---|---:|",
    ]
    what = {
        "forward": "{} recorded operations (apply)",
        "backward": "{} nodes' backwards, then 4 leaves' `.grad` filled",
        "update": "4 x (`lr * p.grad`: {} applies in all; `p -= ...` in place; `p.grad = None`)",
    }
    divisor = {"forward": counts["forward"], "backward": counts["backward"] + 4, "update": 4}
    total_ours = total_numpy = 0.0
    for phase in PHASES:
        mine, theirs = statistics.median(ours[phase]), statistics.median(numpy_times[phase])
        total_ours, total_numpy = total_ours + mine, total_numpy + theirs
        over = mine - theirs
        lines.append(
            f"| {phase} | {mine:.0f} | {theirs:.0f} | {over:.0f} | "
            f"{what[phase].format(counts[phase])} | {over / divisor[phase]:.1f} |"
        )
    lines.append(
        f"| the step | {total_ours:.0f} | {total_numpy:.0f} | {total_ours - total_numpy:.0f} | "
        f"{total_ours / total_numpy:.2f}x NumPy | |"
    )
    return "\n".join(lines)


def _chain_phases(tanh: Callable, leaves: tuple) -> tuple[float, float]:
    """µs per node of the chain's forward and of its backward, medians of 5 runs."""
    forward_times, backward_times = [], []
    for _ in range(5):
        x, w, b = leaves()
        t0 = time.perf_counter()
        y = x
        for _ in range(CHAIN_NODES):
            y = tanh(y * w + b)
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        forward_times.append((t1 - t0) / CHAIN_NODES * 1e6)
        backward_times.append((t2 - t1) / CHAIN_NODES * 1e6)
        del y
    return statistics.median(forward_times), statistics.median(backward_times)


def chain_table() -> str:
    def ours() -> tuple:
        return tuple(minigrad.Variable(v, requires_grad=True) for v in (0.5, 0.9, 0.1))

    mine = _chain_phases(lambda v: v.tanh(), ours)
    try:
        import torch
    except ImportError:
        torch = None
    theirs: tuple[float | None, float | None] = (None, None)
    if torch is not None:
        torch.set_num_threads(1)

        def leaves() -> tuple:
            return tuple(
                torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.5, 0.9, 0.1)
            )

        theirs = _chain_phases(torch.tanh, leaves)
    lines = [
        "| phase of (a), per chain step (3 operations) | minigrad µs | PyTorch µs | ratio | "
        "minigrad µs per operation |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, m, t in zip(("forward", "backward"), mine, theirs):
        ratio = "n/a" if t is None else f"{m / t:.2f}x"
        shown = "n/a" if t is None else f"{t:.1f}"
        lines.append(f"| {name} | {m:.1f} | {shown} | {ratio} | {m / 3:.1f} |")
    return "\n".join(lines)


def main() -> None:
    print(f"(a) the chain, {CHAIN_NODES:,} steps, gc on\n")
    print(chain_table())
    print(f"\n(b) the MLP step 32x64->128->10, {STEPS} steps, 3 alternating runs\n")
    print(mlp_table())


if __name__ == "__main__":
    main()
