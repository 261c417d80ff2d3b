"""Learning-rate schedulers: each `step()` sets every `optimizer.param_groups[i]["lr"]`.

Call `scheduler.step()` once per epoch, after `optimizer.step()`, as in PyTorch. The
values are PyTorch's to the last bit: each scheduler uses the same (recursive) formula
in `get_lr()` that PyTorch does, and the closed form for `step(epoch)`.
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections import Counter
from collections.abc import Callable, Iterable
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
        if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, int)):
            # PyTorch would take a loss here as the epoch number, with a deprecation warning,
            # and set a wrong lr: a metric belongs to ReduceLROnPlateau.step(metrics) only.
            raise TypeError(
                f"{type(self).__name__}.step() takes no metric: call it with no argument once "
                f"per epoch. Only ReduceLROnPlateau.step(metrics) takes the validation loss. "
                f"(step(epoch), deprecated in PyTorch, needs an int epoch; got "
                f"{type(epoch).__name__}.)"
            )
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
            base_lr * self._factor(function)
            for function, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]

    def _factor(self, function: Callable[[int], float]) -> float:
        """lr_lambda(epoch), checked to be a number."""
        factor = function(self.last_epoch)
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
            raise TypeError(
                f"LambdaLR: lr_lambda({self.last_epoch}) returned {type(factor).__name__}; it "
                f"must return a number, the factor that multiplies the initial lr."
            )
        return factor

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
        self.gamma = check_number("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """lr = base_lr · gamma^(number of milestones passed): divided at each listed epoch."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        milestones = list(milestones)
        for milestone in milestones:
            if isinstance(milestone, bool) or not isinstance(milestone, int):
                raise TypeError(
                    f"MultiStepLR: milestones must be epochs (ints); got {milestone!r}."
                )
        self.milestones = Counter(milestones)  # a repeated milestone divides twice
        self.gamma = check_number("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma**passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr · gamma^epoch: multiplied by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = check_number("ExponentialLR", "gamma", gamma)
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
        self.eta_min = check_number("CosineAnnealingLR", "eta_min", eta_min)
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


class ReduceLROnPlateau:
    """Divide the lr by 1/factor when a metric stopped improving for `patience` epochs.

    `step(metric)` once per epoch with the validation loss (mode="min") or accuracy
    ("max"). Better means below best·(1 - threshold) ("rel") or best - threshold ("abs");
    after a reduction, `cooldown` epochs pass before counting again; no lr goes under
    min_lr, and a change smaller than eps is not made. PyTorch's rules, step for step.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"ReduceLROnPlateau schedules an optimizer's learning rate; got a "
                f"{type(optimizer).__name__}, not a minigrad.optim Optimizer."
            )
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max'; got {mode!r}.")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs'; got "
                f"{threshold_mode!r}."
            )
        if check_number("ReduceLROnPlateau", "factor", factor) >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0; got {factor!r}.")
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise ValueError(
                    f"ReduceLROnPlateau expected {groups} min_lrs (one per parameter group); "
                    f"got {len(min_lr)}."
                )
            self.min_lrs = [check_number("ReduceLROnPlateau", "min_lr", value) for value in min_lr]
        else:
            self.min_lrs = [check_number("ReduceLROnPlateau", "min_lr", min_lr)] * groups
        for name, count in (("patience", patience), ("cooldown", cooldown)):
            if isinstance(count, bool) or not isinstance(count, int):
                raise TypeError(
                    f"ReduceLROnPlateau: {name} must be a number of epochs, an int >= 0; got "
                    f"{type(count).__name__} {count!r}."
                )
            if count < 0:
                raise ValueError(
                    f"ReduceLROnPlateau: {name} must be a number of epochs, an int >= 0; got "
                    f"{count!r}."
                )
        threshold = check_number("ReduceLROnPlateau", "threshold", threshold)
        eps = check_number("ReduceLROnPlateau", "eps", eps)
        self.optimizer = optimizer
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.threshold, self.eps = factor, threshold, eps
        self.patience, self.cooldown = patience, cooldown
        self.last_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def is_better(self, current: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return current < best * (1.0 - self.threshold)
        if self.mode == "min":
            return current < best - self.threshold
        if self.threshold_mode == "rel":
            return current > best * (self.threshold + 1.0)
        return current > best + self.threshold

    def step(self, metrics: Any) -> None:
        """One epoch's metric (a number, or a 0-d Variable)."""
        try:
            current = float(metrics)
        except (TypeError, ValueError):
            raise TypeError(
                f"ReduceLROnPlateau.step() takes the epoch's metric, a number such as the "
                f"validation loss; got {type(metrics).__name__}."
            ) from None
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, floor)
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


def check_number(scheduler: str, name: str, value: Any) -> float:
    """A number, or a TypeError naming the scheduler and the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{scheduler}: {name} must be a number; got {value!r}.")
    return float(value)


__all__ = [
    "CosineAnnealingLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "MultiStepLR",
    "ReduceLROnPlateau",
    "StepLR",
]
