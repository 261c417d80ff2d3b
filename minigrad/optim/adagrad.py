"""Adagrad: each weight's steps shrink with the sum of its squared gradients so far."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core.checks import check_flag
from minigrad.optim.optimizer import Optimizer, check_hyperparameter


class Adagrad(Optimizer):
    """s = s + g², p ← p - lr_t·g / (√s + eps), lr_t = lr / (1 + (t - 1)·lr_decay).

    g = ∇p + weight_decay·p; s starts at initial_accumulator_value.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "lr_decay": check_hyperparameter("lr_decay", lr_decay),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
            "initial_accumulator_value": check_hyperparameter(
                "initial_accumulator_value", initial_accumulator_value
            ),
            "eps": check_hyperparameter("eps", eps),
            "maximize": check_flag(maximize, "maximize", "Adagrad"),
        }
        super().__init__(params, defaults)
        # As in PyTorch, the state exists from the start (state_dict shows it before a step).
        index = 0
        for group in self.param_groups:
            for param in group["params"]:
                self.state[index] = {}
                self._start(self.state[index], param._data, group)
                index += 1

    @staticmethod
    def _start(state: dict[str, Any], param: np.ndarray, group: dict[str, Any]) -> None:
        state["step"] = 0
        state["sum"] = np.full_like(param, group["initial_accumulator_value"])

    def update(
        self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        if not state:  # a group added after construction
            self._start(state, param, group)
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        # The sum changes in place: a replay keeps reading the same array.
        total = state["sum"]
        total += grad * grad
        std = np.sqrt(total) + group["eps"]
        param -= clr * grad / std
