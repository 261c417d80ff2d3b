"""Benchmarks (d) and (e): minigrad.compile against eager minigrad, PyTorch eager and NumPy.

(d) the MLP step of mlp.py, compiled; its baseline is the same step by hand in NumPy.
(d') the same step written as PyTorch users write it: `optimizer.zero_grad()`, forward,
    `loss.backward()`, `optimizer.step()`, `return loss`, with optim.SGD and with
    optim.Adam; the baselines are the same steps by hand in NumPy (SGD, Adam).
(f) falling back: the (d') SGD step made unreplayable two common ways (it logs the
    gradient norm with NumPy on `.grad.data`; it takes the step number as an int argument,
    a new variant each call until the limit), compiled against the same step eager, after
    the compiler has given up: the cost of a compile that does not help.
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
import numpy as np

import minigrad
from minigrad import optim

LOOP_STEPS = 100
NODES_PER_STEP = 5
LEARNING_RATE = 0.01


def compiled_mlp_step_fn(problem: dict) -> Callable[[], float]:
    return minigrad.compile(mlp.minigrad_step_fn(problem))


ADAM_LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8


def optimizer_mlp_step_fn(problem: dict, optimizer: str) -> Callable[[], Any]:
    """(d'): the MLP step with minigrad.optim ("sgd" or "adam"), compiled, returning loss."""
    x = minigrad.Variable(problem["x"])
    onehot = minigrad.Variable(problem["onehot"])
    w1, b1, w2, b2 = (minigrad.Parameter(problem[n].copy()) for n in ("w1", "b1", "w2", "b2"))
    if optimizer == "sgd":
        opt = optim.SGD([w1, b1, w2, b2], lr=mlp.LEARNING_RATE)
    else:
        opt = optim.Adam([w1, b1, w2, b2], lr=ADAM_LR, betas=(BETA1, BETA2), eps=EPS)

    @minigrad.compile
    def step() -> minigrad.Variable:
        opt.zero_grad()
        hidden = (x @ w1.T + b1).relu()
        logits = hidden @ w2.T + b2
        loss = -(logits.log_softmax(1) * onehot).sum() / mlp.BATCH
        loss.backward()
        opt.step()
        return loss

    return step


def fallback_step_fn(problem: dict, how: str, compiled: bool) -> Callable[[], Any]:
    """(f): the MLP step with optim.SGD that cannot replay: how="numpy" reads .grad.data
    to log the gradient norm; how="int" passes the call number as an int argument."""
    x = minigrad.Variable(problem["x"])
    onehot = minigrad.Variable(problem["onehot"])
    params = [minigrad.Parameter(problem[n].copy()) for n in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    opt = optim.SGD(params, lr=mlp.LEARNING_RATE)

    def step(number: int) -> tuple:
        opt.zero_grad()
        hidden = (x @ w1.T + b1).relu()
        logits = hidden @ w2.T + b2
        loss = -(logits.log_softmax(1) * onehot).sum() / mlp.BATCH
        loss.backward()
        grad_norm = 0.0
        if how == "numpy":
            grad_norm = float(np.sqrt(sum(float((p.grad.data**2).sum()) for p in params)))
        opt.step()
        return loss.item(), grad_norm, number

    run = minigrad.compile(step) if compiled else step
    count = [0]

    def call() -> Any:
        count[0] += 1
        return run(count[0] if how == "int" else 0)

    return call


def numpy_adam_step_fn(problem: dict) -> Callable[[], float]:
    """(d')'s Adam baseline: mlp.py's NumPy step with Adam's update by hand."""
    gradients = mlp.numpy_gradients_fn(problem)
    params = gradients.params
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    count = [0]

    def step() -> float:
        loss, grads = gradients()
        count[0] += 1
        for p, g, m, v in zip(params, grads, moments, squares):
            m *= BETA1
            m += (1 - BETA1) * g
            v *= BETA2
            v += (1 - BETA2) * g * g
            m_hat = m / (1 - BETA1 ** count[0])
            v_hat = v / (1 - BETA2 ** count[0])
            p -= ADAM_LR * m_hat / (np.sqrt(v_hat) + EPS)
        return loss

    return step


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
