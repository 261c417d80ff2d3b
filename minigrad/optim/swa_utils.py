"""Weight averaging, as torch.optim.swa_utils: a copy of a model whose parameters are a
running average of the model's along training (SWA, Izmailov et al. 2018), or an
exponential moving average (EMA); SWALR, the lr schedule SWA trains with; update_bn, which
recomputes BatchNorm statistics for the averaged weights.

    swa_model = AveragedModel(model)               # equal weights: SWA
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    ...  # after optimizer.step():
    swa_model.update_parameters(model)
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_callable
from minigrad.core.grad_mode import no_grad
from minigrad.core.variable import Variable
from minigrad.dtypes import int64
from minigrad.nn.module import Module
from minigrad.nn.normalization import _BatchNorm
from minigrad.optim.lr_scheduler import LRScheduler, _check_optimizer, per_group
from minigrad.optim.optimizer import Optimizer

AverageFn = Callable[[Variable, Variable, Any], Variable]
MultiAverageFn = Callable[[list[Variable], list[Variable], Any], None]


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAverageFn:
    """For AveragedModel(multi_avg_fn=...): every averaged parameter moves, in place,
    w_ema ← decay·w_ema + (1 - decay)·w_model."""
    decay = _decay(decay)

    def ema_update(averaged: list[Variable], current: list[Variable], _: Any) -> None:
        with no_grad():
            for mine, theirs in zip(averaged, current):
                mine.copy_(_lerp(mine, theirs, 1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAverageFn:
    """For AveragedModel(multi_avg_fn=...): the equal-weight average of the n models seen,
    in place: w ← w + (w_model - w) / (n + 1)."""

    def swa_update(averaged: list[Variable], current: list[Variable], num_averaged: Any) -> None:
        weight = _equal_weight(num_averaged)
        with no_grad():
            for mine, theirs in zip(averaged, current):
                mine.copy_(_lerp(mine, theirs, weight))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AverageFn:
    """For AveragedModel(avg_fn=...): one parameter's decay·w_ema + (1 - decay)·w_model."""
    decay = _decay(decay)

    def ema_update(averaged: Variable, current: Variable, num_averaged: Any) -> Variable:
        with no_grad():
            return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AverageFn:
    """For AveragedModel(avg_fn=...): one parameter's w + (w_model - w) / (n + 1)."""

    def swa_update(averaged: Variable, current: Variable, num_averaged: Any) -> Variable:
        with no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` (in `.module`; calling it calls the copy) whose parameters
    update_parameters(model) averages with the model's: the first call copies them, each
    later one applies avg_fn (one parameter at a time, its result copied in) or
    multi_avg_fn (all at once, in place), or by default the equal-weight average
    w ← w + (w_model - w) / (n + 1). `n_averaged` counts the calls. With use_buffers the
    buffers are averaged too; otherwise they are copied from the model at each call.
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AverageFn | None = None,
        multi_avg_fn: MultiAverageFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(model, Module):
            raise TypeError(
                f"AveragedModel averages the parameters of an nn.Module; got "
                f"{type(model).__name__}."
            )
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError(
                "AveragedModel: give only one of avg_fn (one parameter at a time) and "
                "multi_avg_fn (all parameters at once), not both."
            )
        for name, function in (("avg_fn", avg_fn), ("multi_avg_fn", multi_avg_fn)):
            if function is not None:
                check_callable(function, name, "AveragedModel", "an averaging function")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", factories.tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average `model`'s current parameters into this copy's (its first call copies)."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        # Detached views: the averaging functions change the same memory, outside autograd.
        mine = [value.detach() for value in mine]
        theirs = [value.detach() for value in theirs]
        count = int(self.n_averaged.item())
        with no_grad():
            if count == 0:
                for averaged, current in zip(mine, theirs):
                    averaged.copy_(current)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            else:
                average = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for averaged, current in zip(mine, theirs):
                    averaged.copy_(average(averaged, current, self.n_averaged))
            if not self.use_buffers:
                # Buffers (BatchNorm statistics) follow the model, unaveraged.
                for averaged, current in zip(self.module.buffers(), model.buffers()):
                    averaged.detach().copy_(current.detach())
            self.n_averaged.add_(1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running mean and variance of every BatchNorm in `model` with one pass
    over `loader` (batches, or tuples whose first item is the batch): the statistics of
    averaged weights are not the average of the statistics. Each batch weighs the same
    (a cumulative average); the layers' momentum and the model's mode are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to swa_lr over anneal_epochs epochs, then keeps it there:
    lr_t = α_t·swa_lr + (1 - α_t)·lr_0, α_t = t / anneal_epochs ("linear") or
    (1 - cos(π·t / anneal_epochs)) / 2 ("cos"), computed, as in PyTorch, from the
    previous epoch's lr."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer("SWALR", optimizer)
        swa_lrs = per_group("SWALR", "swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"SWALR: anneal_strategy must be 'cos' or 'linear'; got {anneal_strategy!r}."
            )
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int):
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0; got {anneal_epochs!r}.")
        if anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0; got {anneal_epochs!r}.")
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """α for the fraction t of the annealing done."""
        if self._anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        epochs = max(1, self.anneal_epochs)
        # Undo the previous epoch's mix to find lr_0 (the lr SWALR started from), then mix.
        previous = self.anneal_func(max(0, min(1, (step - 1) / epochs)))
        starts = [
            _unmix(group["lr"], group["swa_lr"], previous) for group in self.optimizer.param_groups
        ]
        alpha = self.anneal_func(max(0, min(1, step / epochs)))
        return [
            group["swa_lr"] * alpha + start * (1 - alpha)
            for group, start in zip(self.optimizer.param_groups, starts)
        ]


def _unmix(lr: float, swa_lr: float, alpha: float) -> float:
    """lr_0 from lr = α·swa_lr + (1 - α)·lr_0 (swa_lr itself once α = 1)."""
    if alpha == 1:
        return swa_lr
    return (lr - alpha * swa_lr) / (1 - alpha)


def _lerp(start: Variable, end: Variable, weight: float) -> Variable:
    """start + weight·(end - start), written as PyTorch's lerp does for each half of
    the weights, so that the averages round alike."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _equal_weight(num_averaged: Any) -> float:
    """1 / (n + 1), the weight of the newest model in an equal average of n + 1."""
    if isinstance(num_averaged, Variable):
        # PyTorch divides its int64 n_averaged tensor, which gives a float32 weight: the
        # same rounding here, so that both averages agree.
        return float(np.float32(1 / (num_averaged.item() + 1)))
    return 1 / (num_averaged + 1)


def _decay(decay: Any) -> float:
    if isinstance(decay, bool) or not isinstance(decay, (int, float)):
        raise TypeError(f"decay must be a number in [0, 1]; got {type(decay).__name__}.")
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided: decay must be in [0, 1].")
    return float(decay)


__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]
