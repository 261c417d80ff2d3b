"""Learning-rate schedulers: each `step()` sets every `optimizer.param_groups[i]["lr"]`.

Call `scheduler.step()` once per epoch, after `optimizer.step()`, as in PyTorch. The
values are PyTorch's to the last bit: each scheduler uses the same (recursive) formula
in `get_lr()` that PyTorch does, and the closed form for `step(epoch)`.
"""

from __future__ import annotations

import bisect
import math
import numbers
import types
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from minigrad.core.checks import check_callable, check_flag, check_iterable, check_state_dict
from minigrad.core.grad_mode import traced_as_one_call
from minigrad.optim.optimizer import Optimizer


class LRScheduler:
    """Base class: holds the optimizer, `base_lrs` (each group's initial lr), `last_epoch`.

    Subclasses write `get_lr()`: the next lr of each group, from the current ones.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int):
            raise TypeError(
                f"{type(self).__name__}: last_epoch must be an int (-1 to start afresh); got "
                f"{type(last_epoch).__name__}."
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
        self._initial_step()

    def _initial_step(self) -> None:
        """Epoch 0: set each lr to its starting value (SequentialLR calls it again)."""
        self._step_count = 0
        self._is_initial = True
        self.step()
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
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Set the lrs of the next epoch, or (closed form) of `epoch`, without counting a
        step: SequentialLR restarts a scheduler at its milestone with _update_lr(0)."""
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
        self.__dict__.update(check_state_dict(state_dict, type(self).__name__))

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


class _FunctionScheduler(LRScheduler):
    """A scheduler driven by functions (lr_lambdas), which its state dict leaves out."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _lambdas(type(self).__name__, optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """As the base class, without the functions (they cannot be saved)."""
        state = super().state_dict()
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        check_state_dict(state_dict, type(self).__name__)
        state = {key: value for key, value in state_dict.items() if key != "lr_lambdas"}
        super().load_state_dict(state)


class LambdaLR(_FunctionScheduler):
    """lr = base_lr · lr_lambda(epoch); one function, or one per parameter group."""

    def get_lr(self) -> list[float]:
        return [
            base_lr * _factor("LambdaLR", function, self.last_epoch)
            for function, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]


class MultiplicativeLR(_FunctionScheduler):
    """lr = previous lr · lr_lambda(epoch), from epoch 1 on; one function, or one per
    parameter group. With lr_lambda = lambda epoch: 0.95 it is ExponentialLR(gamma=0.95)."""

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [
            lr * _factor("MultiplicativeLR", function, self.last_epoch)
            for function, lr in zip(self.lr_lambdas, self._current_lrs())
        ]


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
        milestones = check_iterable(milestones, "milestones", "MultiStepLR", "epochs (ints)")
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


class ConstantLR(LRScheduler):
    """lr = base_lr · factor for the first total_iters epochs, then base_lr (a warm-up)."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        factor = check_number("ConstantLR", "factor", factor)
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be between 0 and 1; got {factor!r}.")
        self.factor = factor
        self.total_iters = _epochs_count("ConstantLR", "total_iters", total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        reached = self.last_epoch >= self.total_iters
        return [base_lr * (self.factor + reached * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = base_lr · (start_factor + (end_factor - start_factor)·min(epoch, total_iters) /
    total_iters): a straight line from start_factor·base_lr to end_factor·base_lr.
    Computed, as in PyTorch, from the previous lr at each step."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        start_factor = check_number("LinearLR", "start_factor", start_factor)
        end_factor = check_number("LinearLR", "end_factor", end_factor)
        if not 0 < start_factor <= 1:
            raise ValueError(
                f"LinearLR: start_factor must be greater than 0 and at most 1; got "
                f"{start_factor!r}."
            )
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be between 0 and 1; got {end_factor!r}.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = _epochs_count("LinearLR", "total_iters", total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        if self.last_epoch == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._is_initial or self.last_epoch > total:
            return self._current_lrs()
        ratio = 1.0 + (end - start) / (total * start + (self.last_epoch - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        return [
            base_lr * (start + (end - start) * min(total, self.last_epoch) / total)
            for base_lr in self.base_lrs
        ]


class PolynomialLR(LRScheduler):
    """lr = base_lr · (1 - min(epoch, total_iters) / total_iters)^power: down to 0 at
    total_iters. Computed, as in PyTorch, from the previous lr at each step."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = _epochs_count("PolynomialLR", "total_iters", total_iters)
        self.power = check_number("PolynomialLR", "power", power)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        epoch, total = self.last_epoch, self.total_iters
        if self._is_initial or epoch > total:
            return self._current_lrs()
        decay = ((1.0 - epoch / total) / (1.0 - (epoch - 1) / total)) ** self.power
        return [lr * decay for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left**self.power for base_lr in self.base_lrs]


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


class SequentialLR(LRScheduler):
    """One scheduler after another: schedulers[i] runs from milestones[i - 1] on, and is
    started again (at its epoch 0, from the initial lrs) when its milestone comes.

        SequentialLR(optimizer, [ConstantLR(optimizer, 0.1, 20), ExponentialLR(optimizer,
        0.9)], milestones=[20])   # 20 warm-up epochs at lr/10, then lr·0.9^(epoch - 20)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        schedulers = _same_optimizer("SequentialLR", optimizer, schedulers)
        milestones = check_iterable(milestones, "milestones", "SequentialLR", "epochs (ints)")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects one milestone fewer than schedulers (the epochs where "
                f"the next one takes over); got {len(schedulers)} schedulers and "
                f"{len(milestones)} milestones."
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what the schedulers' first steps did
            group["lr"] = group["initial_lr"]
        self._undo_first_steps(self)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo_first_steps(self, scheduler: Any) -> None:
        """Each scheduler (inside nested ones too) counted its first step: take it back."""
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_first_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    @traced_as_one_call
    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch: the scheduler whose stretch it is steps (or starts over)."""
        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """As the base class, with each scheduler's own state_dict."""
        state = {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "_schedulers")
        }
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        inner = check_state_dict(state_dict, type(self).__name__).get("_schedulers")
        if not isinstance(inner, list):
            raise ValueError(
                f"{type(self).__name__}.load_state_dict expects what its state_dict() "
                f"returned, with the '_schedulers' list; got keys {sorted(map(str, state_dict))}."
            )
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, state in zip(self._schedulers, inner):
            scheduler.load_state_dict(state)


class ChainedScheduler(LRScheduler):
    """Several schedulers stepped together, each on the lr the one before it set:

        ChainedScheduler([ConstantLR(optimizer, 0.1, 20), ExponentialLR(optimizer, 0.9)])
        # lr·0.9^epoch, divided by 10 for the first 20 epochs
    """

    def __init__(
        self, schedulers: list[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        schedulers = check_iterable(schedulers, "schedulers", "ChainedScheduler", "schedulers")
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler to chain; got none.")
        if optimizer is None:
            optimizer = getattr(schedulers[0], "optimizer", None)
        elif not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"ChainedScheduler: optimizer must be the schedulers' Optimizer (or None); got "
                f"{type(optimizer).__name__}."
            )
        self._schedulers = _same_optimizer("ChainedScheduler", optimizer, schedulers)
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    @traced_as_one_call
    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class CyclicLR(LRScheduler):
    """The lr cycles between base_lr and max_lr, one step per batch (Smith, 2017):

        cycle = ⌊1 + t / (up + down)⌋,  x = 1 + t / (up + down) - cycle  (in [0, 1))
        scale = x / r if x <= r else (x - 1) / (r - 1),  r = up / (up + down)
        lr = base_lr + (max_lr - base_lr) · scale · scale_fn(cycle or t)

    mode "triangular" keeps the height (scale_fn = 1), "triangular2" halves it every
    cycle (1 / 2^(cycle - 1)), "exp_range" multiplies it by gamma^t; a scale_fn of your
    own replaces the mode and is called on the cycle or on t, as scale_mode says. With
    cycle_momentum the momentum (or Adam's beta1) runs the other way, from max_momentum
    down to base_momentum while the lr climbs.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer("CyclicLR", optimizer)
        base_lrs = per_group("CyclicLR", "base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = per_group("CyclicLR", "max_lr", optimizer, max_lr)
        up = _positive_size("step_size_up", step_size_up)
        down = up if step_size_down is None else _positive_size("step_size_down", step_size_down)
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(
                f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' (or give "
                f"a scale_fn of your own); got mode={mode!r} and no scale_fn."
            )
        if scale_fn is not None:
            check_callable(scale_fn, "scale_fn", "CyclicLR", "a function of the cycle or step")
            if scale_mode not in ("cycle", "iterations"):
                raise ValueError(
                    f"CyclicLR: scale_mode must be 'cycle' or 'iterations' (what scale_fn is "
                    f"called on); got {scale_mode!r}."
                )
        self.mode = mode
        self.gamma = check_number("CyclicLR", "gamma", gamma)
        self._scale_fn_custom = scale_fn
        # The built-in modes fix what their scale is a function of.
        if scale_fn is None:
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = check_flag(cycle_momentum, "cycle_momentum", "CyclicLR")
        if self.cycle_momentum:
            self.use_beta1 = _uses_beta1("CyclicLR", optimizer)
            self.base_momentums = per_group("CyclicLR", "base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("CyclicLR", "max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for group, top, bottom in zip(
                    optimizer.param_groups, self.max_momentums, self.base_momentums
                ):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The height of cycle x (or of step x, with scale_mode "iterations") relative to
        the first one."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        cycle = math.floor(1 + step / self.total_size)
        x = 1.0 + step / self.total_size - cycle
        if x <= self.step_ratio:
            climbed = x / self.step_ratio
        else:
            climbed = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else step)
        lrs = [
            base_lr + (max_lr - base_lr) * climbed * scale
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, bottom, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                _set_momentum(group, top - (top - bottom) * climbed * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As the base class; a scale_fn that is a function or lambda is left out (None),
        a callable object is saved as its attributes (as in PyTorch)."""
        state = super().state_dict()
        custom = self._scale_fn_custom
        if custom is None or isinstance(custom, types.FunctionType):
            state["_scale_fn_custom"] = None
        else:
            state["_scale_fn_custom"] = dict(vars(custom))
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        check_state_dict(state_dict, "CyclicLR")
        saved = state_dict.get("_scale_fn_custom")
        self.__dict__.update(
            {key: value for key, value in state_dict.items() if key != "_scale_fn_custom"}
        )
        if saved is not None and self._scale_fn_custom is not None:
            vars(self._scale_fn_custom).update(saved)


class CosineAnnealingWarmRestarts(LRScheduler):
    """lr = eta_min + (base_lr - eta_min)·(1 + cos(π·T_cur / T_i)) / 2, restarting at base_lr
    (SGDR, Loshchilov & Hutter): T_cur counts the epochs since the last restart, the first
    period is T_0 epochs and each next one T_mult times longer.

    step(epoch) takes a fractional epoch too (epoch + batch / batches), to anneal within
    an epoch.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(
                f"CosineAnnealingWarmRestarts: T_0 must be a positive int (the epochs before "
                f"the first restart); got {T_0!r}."
            )
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(
                f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1 (how much longer "
                f"each period is than the last); got {T_mult!r}."
            )
        if isinstance(eta_min, bool) or not isinstance(eta_min, (int, float)):
            raise ValueError(
                f"CosineAnnealingWarmRestarts: eta_min must be a number (the lowest lr); got "
                f"{type(eta_min).__name__} {eta_min!r}."
            )
        self.T_0 = self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        floor = self.eta_min
        return [
            floor + (base_lr - floor) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    @traced_as_one_call
    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to `epoch` (a float: epoch + batch / batches)."""
        if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, numbers.Real)):
            raise TypeError(
                f"CosineAnnealingWarmRestarts.step() takes no argument, or the epoch to go to "
                f"(a number, fractional within an epoch); got {type(epoch).__name__}."
            )
        if epoch is not None and not math.isfinite(epoch):
            # The classes math.floor raises in PyTorch's step().
            error = ValueError if math.isnan(epoch) else OverflowError
            raise error(
                f"CosineAnnealingWarmRestarts.step(epoch) needs a finite epoch; got {epoch!r}."
            )
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: float | None = None) -> None:
        """Move T_cur (and T_i) to the next epoch or to `epoch`, then set the lrs."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(
                f"CosineAnnealingWarmRestarts.step(epoch) needs an epoch >= 0; got {epoch!r}."
            )
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # Periods T_0, T_0·m, T_0·m², ...: restart n is at T_0·(mⁿ - 1) / (m - 1).
            m = self.T_mult
            restarts = int(math.log(epoch / self.T_0 * (m - 1) + 1, m))
            self.T_cur = epoch - self.T_0 * (m**restarts - 1) / (m - 1)
            self.T_i = self.T_0 * m**restarts
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._current_lrs()


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin), one step per batch: the lr anneals from
    max_lr / div_factor up to max_lr over the first pct_start of total_steps, then down to
    max_lr / (div_factor · final_div_factor); the momentum (or beta1) runs the other way,
    max_momentum -> base_momentum -> max_momentum.

    Annealing is cosine (end + (start - end)·(1 + cos(π·pct)) / 2) or linear. three_phase
    comes back down to the initial lr symmetrically first, then anneals to the minimum.
    total_steps, or epochs · steps_per_epoch; one step more raises a ValueError.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer("OneCycleLR", optimizer)
        if total_steps is not None:
            self.total_steps = _positive_count("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            epochs = _positive_count("epochs", epochs)
            self.total_steps = epochs * _positive_count("steps_per_epoch", steps_per_epoch)
        else:
            raise ValueError(
                "OneCycleLR needs the length of the cycle: total_steps, or both epochs and "
                f"steps_per_epoch; got total_steps={total_steps!r}, epochs={epochs!r}, "
                f"steps_per_epoch={steps_per_epoch!r}."
            )
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(
                f"OneCycleLR: pct_start must be a float between 0 and 1 (the share of the "
                f"cycle spent raising the lr); got {pct_start!r}."
            )
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"OneCycleLR: anneal_strategy must be 'cos' or 'linear'; got {anneal_strategy!r}."
            )
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = _one_cycle_phases(
            pct_start, self.total_steps, check_flag(three_phase, "three_phase", "OneCycleLR")
        )
        max_lrs = per_group("OneCycleLR", "max_lr", optimizer, max_lr)
        div_factor = check_number("OneCycleLR", "div_factor", div_factor)
        final_div_factor = check_number("OneCycleLR", "final_div_factor", final_div_factor)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = check_flag(cycle_momentum, "cycle_momentum", "OneCycleLR")
        if self.cycle_momentum:
            self.use_beta1 = _uses_beta1("OneCycleLR", optimizer)
            tops = per_group("OneCycleLR", "max_momentum", optimizer, max_momentum)
            bottoms = per_group("OneCycleLR", "base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, top, bottom in zip(optimizer.param_groups, tops, bottoms):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From start (pct = 0) to end (pct = 1), along a half cosine or a line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR was stepped {step} times, but its cycle has total_steps="
                f"{self.total_steps}; make total_steps (or epochs · steps_per_epoch) cover "
                f"every scheduler.step() of the run."
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for index, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or index == last:
                    pct = (step - start) / (end - start)
                    break
                start = end
            lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal(
                    group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                )
                _set_momentum(group, momentum, self.use_beta1)
        return lrs


def _one_cycle_phases(pct_start: float, total: int, three_phase: bool) -> list[dict[str, Any]]:
    """OneCycleLR's phases: the step each ends at and the group keys it anneals between."""
    rise = float(pct_start * total) - 1
    if not three_phase:
        return [
            _phase(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            _phase(total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
        ]
    return [
        _phase(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
        _phase(float(2 * pct_start * total) - 2, "max_lr", "initial_lr", "base_momentum",
               "max_momentum"),
        _phase(total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
    ]  # fmt: skip


def _phase(end: float, start_lr: str, end_lr: str, start_m: str, end_m: str) -> dict[str, Any]:
    return {
        "end_step": end,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_m,
        "end_momentum": end_m,
    }


def _check_optimizer(scheduler: str, optimizer: Any) -> None:
    """A TypeError unless `optimizer` is one (schedulers that set group values before
    calling the base class check it first)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{scheduler} schedules an optimizer's learning rate; got a "
            f"{type(optimizer).__name__}, not a minigrad.optim Optimizer."
        )


def per_group(scheduler: str, name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per parameter group: a list of them as given, or one value repeated."""
    groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != groups:
            raise ValueError(
                f"{scheduler}: {name} must have one value per parameter group ({groups}); "
                f"got {len(value)} values."
            )
        return list(value)
    return [value] * groups


def _uses_beta1(scheduler: str, optimizer: Optimizer) -> bool:
    """Whether the momentum a scheduler cycles is the optimizer's beta1 (Adam's family)
    rather than its "momentum"; a ValueError when it has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"{scheduler} with cycle_momentum=True needs an optimizer with a momentum or "
            f"betas setting (SGD, RMSprop, Adam, ...); {type(optimizer).__name__} has "
            f"neither. Pass cycle_momentum=False."
        )
    return "betas" in optimizer.defaults


def _set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _positive_size(name: str, value: Any) -> float:
    """CyclicLR's half-cycle length in steps: a number > 0, as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"CyclicLR: {name} must be a number of steps > 0; got {value!r}.")
    return float(value)


def _positive_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"OneCycleLR: {name} must be a positive int; got {value!r}.")
    return value


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
        if not isinstance(mode, str) or mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max'; got {mode!r}.")
        if not isinstance(threshold_mode, str) or threshold_mode not in ("rel", "abs"):
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

    @traced_as_one_call
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
        self.__dict__.update(check_state_dict(state_dict, type(self).__name__))


def _lambdas(scheduler: str, optimizer: Any, lr_lambda: Any) -> list[Callable[[int], float]]:
    """lr_lambda as one function per parameter group, checked to be functions."""
    groups = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != groups:
            raise ValueError(
                f"{scheduler} expected {groups} lr_lambdas (one per parameter group); got "
                f"{len(lr_lambda)}."
            )
        functions = list(lr_lambda)
    else:
        functions = [lr_lambda] * groups
    for function in functions:
        if not callable(function):
            raise TypeError(
                f"{scheduler}'s lr_lambda must be a function of the epoch; got "
                f"{type(function).__name__}."
            )
    return functions


def _factor(scheduler: str, function: Callable[[int], float], epoch: int) -> float:
    """function(epoch), checked to be a number."""
    factor = function(epoch)
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
        raise TypeError(
            f"{scheduler}: lr_lambda({epoch}) returned {type(factor).__name__}; it must "
            f"return a number, the factor that multiplies the lr."
        )
    return factor


def _epochs_count(scheduler: str, name: str, value: Any) -> int:
    """A number of epochs: an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{scheduler}: {name} must be an int >= 1; got {value!r}.")
    return value


def _same_optimizer(combiner: str, optimizer: Any, schedulers: Any) -> list[LRScheduler]:
    """The schedulers a SequentialLR or ChainedScheduler combines: at least one, each an
    LRScheduler (ReduceLROnPlateau needs a metric, so it cannot be one) of `optimizer`."""
    schedulers = check_iterable(schedulers, "schedulers", combiner, "schedulers")
    if not schedulers:
        raise ValueError(f"{combiner} expects at least one scheduler; got none.")
    for index, scheduler in enumerate(schedulers):
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{combiner} does not take ReduceLROnPlateau (at index {index}): its step() "
                f"needs the epoch's metric."
            )
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(
                f"{combiner}: schedulers[{index}] must be a learning-rate scheduler; got "
                f"{type(scheduler).__name__}."
            )
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"{combiner} expects all schedulers to belong to the same optimizer; "
                f"schedulers[{index}] ({type(scheduler).__name__}) schedules another one."
            )
    return schedulers


def check_number(scheduler: str, name: str, value: Any) -> float:
    """A number, or a TypeError naming the scheduler and the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{scheduler}: {name} must be a number; got {value!r}.")
    return float(value)


__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
