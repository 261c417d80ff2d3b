"""A LeNet-sized training step: minigrad eager and compiled against PyTorch eager.

    .venv/bin/python benchmarks/cnn.py [--steps 30]

Batch 64 of 1x28x28 images; conv(1→6, 5x5, padding 2) → relu → max-pool 2 →
conv(6→16, 5x5) → relu → max-pool 2 → linear(400→120) → relu → linear(120→10); cross
entropy, `optim.SGD(lr=0.01)`, `optimizer.zero_grad()`, `loss.backward()`,
`optimizer.step()`, `return loss`: the step as PyTorch users write it, the same code on
both libraries. PyTorch on one thread (`torch.set_num_threads(1)`), NumPy's BLAS on one
thread (`make bench` sets OPENBLAS_NUM_THREADS=1), float32 and float64, medians of
interleaved repeats in one process.

Budgets (issue 33): eager <= 3x PyTorch eager; compiled <= 1.5x PyTorch eager.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from steps import interleaved_medians

import minigrad

BATCH = 64
EAGER_BUDGET = 3.0
COMPILED_BUDGET = 1.5


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((BATCH, 1, 28, 28))
    labels = rng.integers(0, 10, BATCH)
    return images, labels


def build(lib: Any, dtype: Any) -> tuple[Any, Any]:
    """The model and its optimizer on `lib` (minigrad or torch)."""
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
        nn.Linear(120, 10),
    ).to(dtype)
    return model, lib.optim.SGD(model.parameters(), lr=0.01)


def step_fn(lib: Any, model: Any, optimizer: Any) -> Callable[[Any, Any], Any]:
    criterion = lib.nn.CrossEntropyLoss()

    def step(x: Any, y: Any) -> Any:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def copy_weights(source: Any, target: Any) -> None:
    """minigrad's initial weights into the torch model, so both train the same net."""
    import torch

    with torch.no_grad():
        for p, q in zip(source.parameters(), target.parameters()):
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))


def measure(dtype_name: str, steps: int, repeats: int) -> dict[str, float | None]:
    images, labels = make_data()
    dtype = getattr(minigrad, dtype_name)
    model, optimizer = build(minigrad, dtype)
    x, y = minigrad.tensor(images, dtype=dtype), minigrad.tensor(labels)
    eager = step_fn(minigrad, model, optimizer)
    compiled_model, compiled_optimizer = build(minigrad, dtype)
    compiled = minigrad.compile(step_fn(minigrad, compiled_model, compiled_optimizer))
    runs: dict[str, tuple[Callable, Any, Any]] = {
        "minigrad eager": (eager, x, y),
        "minigrad compiled": (compiled, x, y),
    }
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        torch_dtype = getattr(torch, dtype_name)
        torch_model, torch_optimizer = build(torch, torch_dtype)
        copy_weights(model, torch_model)
        runs["torch eager"] = (
            step_fn(torch, torch_model, torch_optimizer),
            torch.from_numpy(images).to(torch_dtype),
            torch.from_numpy(labels),
        )
    return interleaved_medians(runs, steps, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"LeNet step, batch {BATCH}, 1x28x28, optim.SGD; medians of {args.repeats} "
        f"interleaved repeats of {args.steps} steps\n"
    )
    print(
        "| dtype | minigrad eager ms | minigrad compiled ms | PyTorch eager ms | eager vs "
        "PyTorch | compiled vs PyTorch | budgets (3x, 1.5x) |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for dtype_name in ("float32", "float64"):
        m = measure(dtype_name, args.steps, args.repeats)
        eager, compiled, torch_ms = m["minigrad eager"], m["minigrad compiled"], m["torch eager"]
        if torch_ms is None:
            ratios, verdict = ("n/a", "n/a"), "PyTorch not installed"
        else:
            ratios = (f"{eager / torch_ms:.2f}x", f"{compiled / torch_ms:.2f}x")
            met = (eager / torch_ms <= EAGER_BUDGET, compiled / torch_ms <= COMPILED_BUDGET)
            verdict = ", ".join("met" if ok else "not met" for ok in met)
        shown = "n/a" if torch_ms is None else f"{torch_ms:.2f}"
        print(
            f"| {dtype_name} | {eager:.2f} | {compiled:.2f} | {shown} | {ratios[0]} | "
            f"{ratios[1]} | {verdict} |"
        )


if __name__ == "__main__":
    main()
