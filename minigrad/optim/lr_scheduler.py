"""Learning-rate schedulers: each `step()` sets every `optimizer.param_groups[i]["lr"]`.

Call `scheduler.step()` once per epoch, after `optimizer.step()`, as in PyTorch. The
values are PyTorch's to the last bit: each scheduler uses the same (recursive) formula
in `get_lr()` that PyTorch does, and the closed form for `step(epoch)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from minigrad.optim.optimizer import Optimizer
from minigrad.tracing import traced_as_one_call


class LRScheduler:
    """Base class: holds the optimizer, `base_lrs` (each group's initial lr), `last_epoch`.

    Subclasses write `get_lr()`: the next lr of each group, from the current ones.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(self).__name__} schedules an optimizer's learning rate; got a "
                f"{type(optimizer).__name__}, not a minigrad.optim Optimizer."
            )
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{index}] when "
                        f"resuming a scheduler with last_epoch={last_epoch}; load the "
                        f"optimizer's state_dict first, or start with last_epoch=-1."
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()  # epoch 0: sets each lr to its starting value
        self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr().")

    def get_last_lr(self) -> list[float]:
        """The lr of each parameter group, as the last step() set it."""
        return self._last_lr

    # minigrad.compile records a step() as one call and replays it by calling it again.
    @traced_as_one_call
    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`, deprecated in PyTorch) and set the lrs."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (save the optimizer's own state_dict beside it)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


class LambdaLR(LRScheduler):
    """lr = base_lr · lr_lambda(epoch); one function, or one per parameter group."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        groups = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(
                    f"LambdaLR expected {groups} lr_lambdas (one per parameter group); got "
                    f"{len(lr_lambda)}."
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        for function in self.lr_lambdas:
            if not callable(function):
                raise TypeError(
                    f"LambdaLR's lr_lambda must be a function of the epoch; got "
                    f"{type(function).__name__}."
                )
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base_lr * function(self.last_epoch)
            for function, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]

    def state_dict(self) -> dict[str, Any]:
        """As the base class, without the functions (they cannot be saved)."""
        state = super().state_dict()
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = {key: value for key, value in state_dict.items() if key != "lr_lambdas"}
        super().load_state_dict(state)


class StepLR(LRScheduler):
    """lr = base_lr · gamma^(epoch // step_size): divided by 1/gamma every step_size epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise ValueError(f"StepLR: step_size must be an int >= 1; got {step_size!r}.")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """lr = base_lr · gamma^epoch: multiplied by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min)·(1 + cos(π·epoch / T_max)) / 2.

    From base_lr down to eta_min over T_max epochs, then back up (a cosine of period
    2·T_max). Computed, as in PyTorch, from the previous lr at each step.
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, int) or T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be an int >= 1; got {T_max!r}.")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        epoch, period, floor = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:
            return [
                floor + (base_lr - floor) * (1 + math.cos(epoch * math.pi / period)) / 2
                for base_lr in self.base_lrs
            ]
        if (epoch - 1 - period) % (2 * period) == 0:
            return [
                lr + (base_lr - floor) * (1 - math.cos(math.pi / period)) / 2
                for base_lr, lr in zip(self.base_lrs, self._current_lrs())
            ]
        return [
            (1 + math.cos(math.pi * epoch / period))
            / (1 + math.cos(math.pi * (epoch - 1) / period))
            * (lr - floor)
            + floor
            for lr in self._current_lrs()
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "StepLR"]
