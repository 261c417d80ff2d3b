"""SGD with momentum and weight decay, as PyTorch defines them."""

from __future__ import annotations

from collections.abc import Iterable

from minigrad.autodiff.grad_mode import no_grad
from minigrad.optim.optimizer import Optimizer, check_hyperparameter
from minigrad.variable import Variable


class SGD(Optimizer):
    """p ← p - lr·v, with g = ∇p + weight_decay·p and v = momentum·v + g (v = g at first)."""

    def __init__(
        self,
        params: Iterable[Variable],
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
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def step(self) -> None:
        with no_grad():
            for index, param in enumerate(self.params):
                if param.grad is None:
                    continue  # not used in the last backward: leave it alone
                grad = param.grad.data
                if self.weight_decay:
                    grad = grad + self.weight_decay * param.data
                if self.momentum:
                    state = self.state.setdefault(index, {})
                    if "velocity" not in state:
                        state["velocity"] = grad.copy()
                    else:
                        state["velocity"] = self.momentum * state["velocity"] + grad
                    grad = state["velocity"]
                param.sub_(self.lr * grad)
