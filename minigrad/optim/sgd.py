"""SGD with momentum and weight decay, as PyTorch defines them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.autodiff.grad_mode import no_grad
from minigrad.optim.optimizer import Optimizer, check_hyperparameter


class SGD(Optimizer):
    """p ← p - lr·v, with g = ∇p + weight_decay·p and v = momentum·v + g (v = g at first)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ) -> None:
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "momentum": check_hyperparameter("momentum", momentum),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
        }
        super().__init__(params, defaults)

    def step(self) -> None:
        with no_grad():
            # Parameters without a gradient (not used in the last backward) are left alone.
            for index, group, param in self._with_gradients():
                grad = param.grad.data
                if group["weight_decay"]:
                    grad = grad + group["weight_decay"] * param.data
                if group["momentum"]:
                    state = self.state.setdefault(index, {})
                    if "velocity" not in state:
                        state["velocity"] = grad.copy()
                    else:
                        state["velocity"] = group["momentum"] * state["velocity"] + grad
                    grad = state["velocity"]
                param.sub_(group["lr"] * grad)
