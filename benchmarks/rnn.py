"""An LSTM training step over 32 time steps: minigrad eager (and compiled) against PyTorch
eager.

    .venv/bin/python benchmarks/rnn.py [--steps 20] [--repeats 3]

Batch 16 of sequences of 32 steps with 32 features; nn.LSTM(32 → 64), the last step's h
through nn.Linear(64 → 10); cross entropy, `optim.SGD(lr=0.01)`, `optimizer.zero_grad()`,
`loss.backward()`, `optimizer.step()`, `return loss`: the step as PyTorch users write it,
the same code on both libraries, the same initial weights. PyTorch on one thread
(`torch.set_num_threads(1)`), NumPy's BLAS on one thread (`make bench` sets
OPENBLAS_NUM_THREADS=1), float32 and float64, medians of interleaved repeats in one
process. minigrad's LSTM layer is one matmul projecting every step's input, then one
Function running the time loop in NumPy, its backward BPTT written out
(minigrad/nn/_functions/lstm.py); PyTorch's runs one fused kernel per layer. Compiling
adds little here: there are few nodes left to replay, and under minigrad.compile the
layer's backward is recorded as Variable operations, step by step.

Budget: eager <= 3x PyTorch eager. The compiled column is shown for comparison.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from steps import interleaved_medians

import minigrad

STEPS_IN_TIME, BATCH, FEATURES, HIDDEN, CLASSES = 32, 16, 32, 64, 10
EAGER_BUDGET = 3.0


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sequences = rng.standard_normal((STEPS_IN_TIME, BATCH, FEATURES))
    labels = rng.integers(0, CLASSES, BATCH)
    return sequences, labels


def build(lib: Any, dtype: Any) -> tuple[Any, Any]:
    """The model and its optimizer on `lib` (minigrad or torch)."""
    nn = lib.nn

    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(FEATURES, HIDDEN)
            self.head = nn.Linear(HIDDEN, CLASSES)

        def forward(self, x: Any) -> Any:
            output, _ = self.lstm(x)
            return self.head(output[-1])

    model = Classifier().to(dtype)
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
    sequences, labels = make_data()
    dtype = getattr(minigrad, dtype_name)
    model, optimizer = build(minigrad, dtype)
    x, y = minigrad.tensor(sequences, dtype=dtype), minigrad.tensor(labels)
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
            torch.from_numpy(sequences).to(torch_dtype),
            torch.from_numpy(labels),
        )
    return interleaved_medians(runs, steps, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"LSTM step, {STEPS_IN_TIME} time steps, batch {BATCH}, {FEATURES} → {HIDDEN} → "
        f"Linear {CLASSES}, optim.SGD; medians of {args.repeats} interleaved repeats of "
        f"{args.steps} steps\n"
    )
    print(
        "| dtype | minigrad eager ms | minigrad compiled ms | PyTorch eager ms | eager vs "
        "PyTorch | compiled vs PyTorch | budget eager <= 3x PyTorch |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for dtype_name in ("float32", "float64"):
        m = measure(dtype_name, args.steps, args.repeats)
        eager, compiled, torch_ms = m["minigrad eager"], m["minigrad compiled"], m["torch eager"]
        if torch_ms is None:
            ratios, verdict = ("n/a", "n/a"), "PyTorch not installed"
        else:
            ratios = (f"{eager / torch_ms:.2f}x", f"{compiled / torch_ms:.2f}x")
            verdict = "met" if eager / torch_ms <= EAGER_BUDGET else "not met"
        shown = "n/a" if torch_ms is None else f"{torch_ms:.2f}"
        print(
            f"| {dtype_name} | {eager:.2f} | {compiled:.2f} | {shown} | {ratios[0]} | "
            f"{ratios[1]} | {verdict} |"
        )


if __name__ == "__main__":
    main()
