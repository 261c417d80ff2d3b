"""Loss functions as Modules; each calls its nn.functional form with the stored settings."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.variable import Variable
from minigrad.nn import functional as F
from minigrad.nn.module import Module

REDUCTIONS = F.REDUCTIONS


def _as_buffer(value: Any) -> Variable | None:
    """A class weight (or pos_weight) as a Variable, so it can be a buffer moved by .to()."""
    if value is None or (isinstance(value, Variable) and not value.is_text):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            array = np.asarray(value)
        except ValueError:  # a ragged list: no array
            array = np.asarray(None)
        if array.dtype.kind in "biuf":
            return Variable(array)
    raise TypeError(
        f"a loss's weight (or pos_weight) must be a numeric Variable, a list of numbers or "
        f"None; got {type(value).__name__}."
    )


class _Loss(Module):
    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        if not isinstance(reduction, str):  # a ValueError, as PyTorch's for reduction=None
            raise ValueError(
                f"{type(self).__name__}: reduction must be one of mean, sum, none; got "
                f"{type(reduction).__name__} {reduction!r}."
            )
        self.reduction = F.legacy_reduction(size_average, reduce, reduction)

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        weight = _as_buffer(weight)  # its kind first, as PyTorch checks it
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """(prediction - target)², reduced: prediction and target of the same shape."""

    def forward(self, prediction: Variable, target: Any) -> Variable:
        return F.mse_loss(prediction, target, reduction=self.reduction)


class L1Loss(_Loss):
    """|prediction - target|, reduced: prediction and target of the same shape."""

    def forward(self, prediction: Variable, target: Any) -> Variable:
        return F.l1_loss(prediction, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """-weight[y]·log_probabilities[y]: log-probabilities (N, C), class indices (N,)."""

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, log_probabilities: Variable, target: Any) -> Variable:
        return F.nll_loss(
            log_probabilities,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """-log softmax(logits)[target]: logits (N, C), target (N,) class indices in [0, C).

    Or target as class probabilities of the logits' shape. Averaged over the batch with
    reduction="mean". The softmax is inside: pass raw scores. See F.cross_entropy for
    weight, ignore_index and label_smoothing.
    """

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, logits: Variable, target: Any) -> Variable:
        return F.cross_entropy(
            logits,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    """-weight·(t·log p + (1 - t)·log(1 - p)): probabilities p and targets t of one shape."""

    def forward(self, probabilities: Variable, target: Any) -> Variable:
        return F.binary_cross_entropy(
            probabilities, target, weight=self.weight, reduction=self.reduction
        )


class BCEWithLogitsLoss(_Loss):
    """BCELoss(sigmoid(x), t) computed stably from raw scores x; pos_weight scales positives."""

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Any = None,
    ) -> None:
        weight, pos_weight = _as_buffer(weight), _as_buffer(pos_weight)  # kinds first
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, logits: Variable, target: Any) -> Variable:
        return F.binary_cross_entropy_with_logits(
            logits,
            target,
            weight=self.weight,
            reduction=self.reduction,
            pos_weight=self.pos_weight,
        )


class KLDivLoss(_Loss):
    """target·(log target - x), reduced: x holds log-probabilities, target probabilities (or
    log-probabilities with log_target=True), of one shape. reduction='batchmean' divides
    the sum by the batch size, which gives the KL divergence itself."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        # 'batchmean' is kl_div's own reduction, unknown to the other losses' check.
        batchmean = reduction == "batchmean" and size_average is None and reduce is None
        super().__init__(size_average, reduce, "mean" if batchmean else reduction)
        if batchmean:
            self.reduction = "batchmean"
        self.log_target = log_target

    def forward(self, log_probabilities: Variable, target: Any) -> Variable:
        return F.kl_div(
            log_probabilities, target, reduction=self.reduction, log_target=self.log_target
        )
