"""Adam: a step per parameter scaled by running averages of the gradient and its square."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag
from minigrad.optim.optimizer import Optimizer, check_betas, check_hyperparameter


class Adam(Optimizer):
    """m = β1·m + (1-β1)·g, v = β2·v + (1-β2)·g², p ← p - lr·m̂ / (√v̂ + eps),

    where m̂ = m / (1 - β1ᵗ) and v̂ = v / (1 - β2ᵗ) undo the bias of starting from zero.
    g = ∇p + weight_decay·p; with decoupled_weight_decay=True (AdamW) g = ∇p and first
    p ← p·(1 - lr·weight_decay). amsgrad uses the largest v̂ so far; maximize climbs.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        betas = check_betas(betas)
        owner = type(self).__name__  # Adam, or AdamW
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "betas": betas,
            "eps": check_hyperparameter("eps", eps),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
            "amsgrad": check_flag(amsgrad, "amsgrad", owner),
            "maximize": check_flag(maximize, "maximize", owner),
            "decoupled_weight_decay": check_flag(
                decoupled_weight_decay, "decoupled_weight_decay", owner
            ),
        }
        super().__init__(params, defaults)

    def update(
        self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if weight_decay and group["decoupled_weight_decay"]:
            param *= 1 - lr * weight_decay
        elif weight_decay:
            grad = grad + weight_decay * param
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(grad)
            state["exp_avg_sq"] = np.zeros_like(grad)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(grad)
        state["step"] += 1
        # The running averages change in place: a replay keeps reading the same arrays.
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg *= beta1
        exp_avg += (1 - beta1) * grad
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        second = exp_avg_sq
        if group["amsgrad"]:
            second = np.maximum(state["max_exp_avg_sq"], second, out=state["max_exp_avg_sq"])
        m_hat = exp_avg / (1 - beta1 ** state["step"])
        v_hat = second / (1 - beta2 ** state["step"])
        param -= lr * m_hat / (np.sqrt(v_hat) + group["eps"])
