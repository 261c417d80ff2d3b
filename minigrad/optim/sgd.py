"""SGD with momentum, dampening, Nesterov momentum and weight decay, as PyTorch defines them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag
from minigrad.optim.optimizer import Optimizer, check_hyperparameter


class SGD(Optimizer):
    """p ← p - lr·d, with g = ∇p + weight_decay·p and, with momentum,
    b = momentum·b + (1 - dampening)·g (b = g at first) and d = b, or d = g + momentum·b
    with nesterov; without momentum d = g. maximize climbs (g = -∇p + ...)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "momentum": check_hyperparameter("momentum", momentum),
            "dampening": check_hyperparameter("dampening", dampening),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
            "nesterov": check_flag(nesterov, "nesterov", "SGD"),
            "maximize": check_flag(maximize, "maximize", "SGD"),
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                f"Nesterov momentum needs momentum > 0 and dampening = 0; got momentum="
                f"{momentum!r}, dampening={dampening!r}."
            )
        super().__init__(params, defaults)

    def update(
        self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        momentum = group["momentum"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if momentum:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = grad.copy()
            else:
                buffer *= momentum
                buffer += (1 - group["dampening"]) * grad if group["dampening"] else grad
            grad = grad + momentum * buffer if group["nesterov"] else buffer
        param -= group["lr"] * grad
