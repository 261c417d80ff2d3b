"""Benchmark (b): one training step of a 2-layer MLP, batch 32, 64 -> 128 -> 10.

Forward (relu hidden layer, log-softmax cross-entropy), backward and an SGD update.
The baseline is the same step written by hand in NumPy: the floor for an engine that
computes with NumPy, so the ratio is minigrad's overhead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import minigrad

BATCH, INPUTS, HIDDEN, CLASSES = 32, 64, 128, 10
LEARNING_RATE = 0.1
DTYPE = np.float32


def make_problem(seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs, one-hot labels and initial parameters, fixed by `seed`."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, size=BATCH)
    return {
        "x": rng.standard_normal((BATCH, INPUTS)).astype(DTYPE),
        "onehot": np.eye(CLASSES, dtype=DTYPE)[labels],
        "w1": (rng.standard_normal((HIDDEN, INPUTS)) / np.sqrt(INPUTS)).astype(DTYPE),
        "b1": np.zeros(HIDDEN, dtype=DTYPE),
        "w2": (rng.standard_normal((CLASSES, HIDDEN)) / np.sqrt(HIDDEN)).astype(DTYPE),
        "b2": np.zeros(CLASSES, dtype=DTYPE),
    }


def _autodiff_step_fn(lib, x, onehot, params: list) -> Callable[[], float]:
    """The step, written once: the same code runs on minigrad and on PyTorch."""
    w1, b1, w2, b2 = params

    def step() -> float:
        hidden = (x @ w1.T + b1).relu()
        logits = hidden @ w2.T + b2
        loss = -(logits.log_softmax(1) * onehot).sum() / BATCH
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= LEARNING_RATE * p.grad
                p.grad = None
        return loss.item()

    return step


def minigrad_step_fn(problem: dict[str, np.ndarray]) -> Callable[[], float]:
    """The step on minigrad."""
    x = minigrad.Variable(problem["x"])
    onehot = minigrad.Variable(problem["onehot"])
    params = [minigrad.Parameter(problem[name].copy()) for name in ("w1", "b1", "w2", "b2")]
    return _autodiff_step_fn(minigrad, x, onehot, params)


def numpy_gradients_fn(problem: dict[str, np.ndarray]) -> Callable[[], tuple]:
    """Forward and the gradients written out by hand: returns (loss, [grad of each of
    `.params`]), the parameters being w1, b1, w2, b2 in that order."""
    x, onehot = problem["x"], problem["onehot"]
    w1, b1, w2, b2 = params = [problem[name].copy() for name in ("w1", "b1", "w2", "b2")]

    def gradients() -> tuple[float, list[np.ndarray]]:
        z1 = x @ w1.T + b1
        hidden = np.maximum(z1, 0)
        logits = hidden @ w2.T + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(log_probs * onehot).sum() / BATCH
        grad_log_probs = -onehot / BATCH
        grad_logits = grad_log_probs - np.exp(log_probs) * grad_log_probs.sum(axis=1, keepdims=True)
        grad_w2 = grad_logits.T @ hidden
        grad_b2 = grad_logits.sum(axis=0)
        grad_z1 = (grad_logits @ w2) * (z1 > 0)
        grad_w1 = grad_z1.T @ x
        grad_b1 = grad_z1.sum(axis=0)
        return float(loss), [grad_w1, grad_b1, grad_w2, grad_b2]

    gradients.params = params
    return gradients


def numpy_step_fn(problem: dict[str, np.ndarray]) -> Callable[[], float]:
    """The step by hand in NumPy: forward, the gradients written out, SGD."""
    gradients = numpy_gradients_fn(problem)

    def step() -> float:
        loss, grads = gradients()
        for p, g in zip(gradients.params, grads):
            p -= LEARNING_RATE * g
        return loss

    return step


def torch_step_fn(problem: dict[str, np.ndarray]) -> Callable[[], float] | None:
    """The step on PyTorch, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    x = torch.from_numpy(problem["x"])
    onehot = torch.from_numpy(problem["onehot"])
    params = [torch.tensor(problem[name], requires_grad=True) for name in ("w1", "b1", "w2", "b2")]
    return _autodiff_step_fn(torch, x, onehot, params)


def time_step(step: Callable[[], float], steps: int = 2000, warmup: int = 50) -> float:
    """Median µs per step over `steps` steps, after `warmup` untimed ones."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6)


def step_measure(step: Callable[[], float] | None, steps: int) -> Callable[[], float] | None:
    """A measure for the harness: warms `step` up once, then times `steps` steps per call."""
    if step is None:
        return None
    for _ in range(50):
        step()
    return lambda: time_step(step, steps, warmup=0)
