"""Adagrad: each weight's steps shrink with the sum of its squared gradients so far."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.autodiff.grad_mode import no_grad
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
            "maximize": bool(maximize),
        }
        super().__init__(params, defaults)
        # As in PyTorch, the state exists from the start (state_dict shows it before a step).
        for index, (group, param) in enumerate(self._groups_and_params()):
            self.state[index] = self._initial_state(group, param)

    def _groups_and_params(self) -> list[tuple[dict[str, Any], Any]]:
        return [(group, param) for group in self.param_groups for param in group["params"]]

    @staticmethod
    def _initial_state(group: dict[str, Any], param: Any) -> dict[str, Any]:
        return {"step": 0, "sum": np.full_like(param.data, group["initial_accumulator_value"])}

    def step(self) -> None:
        with no_grad():
            for index, group, param in self._with_gradients():
                if index not in self.state:  # a group added after construction
                    self.state[index] = self._initial_state(group, param)
                state = self.state[index]
                grad = -param.grad.data if group["maximize"] else param.grad.data
                state["step"] += 1
                if group["weight_decay"]:
                    grad = grad + group["weight_decay"] * param.data
                clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
                state["sum"] = state["sum"] + grad * grad
                std = np.sqrt(state["sum"]) + group["eps"]
                param.sub_(clr * grad / std)
