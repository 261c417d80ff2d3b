"""RMSprop: each step divided by a running root mean square of the gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag
from minigrad.optim.optimizer import Optimizer, check_hyperparameter


class RMSprop(Optimizer):
    """s = α·s + (1-α)·g², p ← p - lr·g / (√s + eps), with g = ∇p + weight_decay·p.

    centered: √(s - ḡ²) instead of √s, ḡ = α·ḡ + (1-α)·g the running mean gradient.
    momentum: b = momentum·b + g / (√s + eps), p ← p - lr·b.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "alpha": check_hyperparameter("alpha", alpha),
            "eps": check_hyperparameter("eps", eps),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
            "momentum": check_hyperparameter("momentum", momentum),
            "centered": check_flag(centered, "centered", "RMSprop"),
            "maximize": check_flag(maximize, "maximize", "RMSprop"),
        }
        super().__init__(params, defaults)

    def update(
        self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        alpha = group["alpha"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(grad)
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(grad)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(grad)
        state["step"] += 1
        # The running averages change in place: a replay keeps reading the same arrays.
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (1 - alpha) * (grad - grad_avg)
            average = np.sqrt(square_avg - grad_avg**2)
        else:
            average = np.sqrt(square_avg)
        average += group["eps"]
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"]
            buffer *= group["momentum"]
            buffer += grad / average
            param -= group["lr"] * buffer
        else:
            param -= group["lr"] * grad / average
