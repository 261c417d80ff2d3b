"""Adam: a step per parameter scaled by running averages of the gradient and its square."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from minigrad.autodiff.grad_mode import no_grad
from minigrad.optim.optimizer import Optimizer, check_hyperparameter
from minigrad.variable import Variable


class Adam(Optimizer):
    """m = β1·m + (1-β1)·g, v = β2·v + (1-β2)·g², p ← p - lr·m̂ / (√v̂ + eps),

    where m̂ = m / (1 - β1ᵗ) and v̂ = v / (1 - β2ᵗ) undo the bias of starting from zero.
    """

    def __init__(
        self,
        params: Iterable[Variable],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2); got {betas!r}.")
        for name, beta in zip(("betas[0]", "betas[1]"), betas):
            if check_hyperparameter(name, beta) >= 1:
                raise ValueError(f"{name} must be in [0, 1); got {beta!r}.")
        defaults = {
            "lr": check_hyperparameter("lr", lr),
            "betas": tuple(betas),
            "eps": check_hyperparameter("eps", eps),
            "weight_decay": check_hyperparameter("weight_decay", weight_decay),
        }
        super().__init__(params, defaults)
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay

    def step(self) -> None:
        beta1, beta2 = self.betas
        with no_grad():
            for index, param in enumerate(self.params):
                if param.grad is None:
                    continue
                grad = param.grad.data
                if self.weight_decay:
                    grad = grad + self.weight_decay * param.data
                state = self.state.setdefault(index, {"step": 0})
                if state["step"] == 0:
                    state["m"] = np.zeros_like(grad)
                    state["v"] = np.zeros_like(grad)
                state["step"] += 1
                state["m"] = beta1 * state["m"] + (1 - beta1) * grad
                state["v"] = beta2 * state["v"] + (1 - beta2) * grad * grad
                m_hat = state["m"] / (1 - beta1 ** state["step"])
                v_hat = state["v"] / (1 - beta2 ** state["step"])
                param.sub_(self.lr * m_hat / (np.sqrt(v_hat) + self.eps))
